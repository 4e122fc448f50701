#include "storage/rocksdb_event_store.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "proto/storage.pb.h"
#include "rocksdb/convenience.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/slice_transform.h"
#include "rocksdb/write_batch.h"
#include "storage/hinted_skiplist.h"
#include "util/proto_time.h"

namespace goodput::storage {
namespace {

constexpr const char* kFamilyNames[] = {
    "default",   "batches",    "job_events", "agents",   "dead_letters",
    "snapshots", "job_states", "job_heads",  "job_late", "evicted"};

// The layout this code reads and writes (storage/KEY_LAYOUT.md); a store
// without the key is layout 1 and is migrated at open.
constexpr char kLayoutKey[] = "schema_version";
constexpr char kLayout[] = "6";
// A batch with a fleet event older than the newest heartbeat before it
// less kFleetLateNanos: kFleetLatePrefix + batch id, in `default`.
constexpr char kFleetLatePrefix[] = "fleet_late/";
// The evicted jobs by end time (layout 6): kEvictedEndPrefix + the end
// time (u64, sign bit flipped, so byte order is time order) + job id, in
// `default`, empty; only those whose events retention has not deleted.
constexpr char kEvictedEndPrefix[] = "evicted_end/";
// Set once job_heads holds a key for every job with stored events.
constexpr char kHeadsKey[] = "job_heads_complete";

// Reads of a whole column family (restart recovery, replays, reports of
// evicted jobs) do not fill the block cache: it would otherwise hold the
// newest part of the history and grow the process with the store.
rocksdb::ReadOptions FullScan() {
  rocksdb::ReadOptions options;
  options.fill_cache = false;
  return options;
}

// The JobSnapshot stored under `job_id` in `family` (snapshots or
// evicted), parsed through `record`; DataLoss naming both if it does not
// parse.
absl::Status ParseSnapshot(const char* family, const rocksdb::Slice& job_id,
                           const rocksdb::Slice& value,
                           internal::v1::JobSnapshot* record,
                           JobSnapshot* out) {
  if (!record->ParseFromArray(value.data(), static_cast<int>(value.size()))) {
    return absl::DataLossError(absl::StrCat(
        "rocksdb ", family, ": job ", job_id.ToString(), " does not parse"));
  }
  return FromRecord(*record, out);
}

// kEvictedEndPrefix + the end time, the start of an evicted_end/ key.
std::string EvictedEndKey(int64_t ended_ns) {
  std::string key = kEvictedEndPrefix;
  const uint64_t flipped =
      static_cast<uint64_t>(ended_ns) ^ (uint64_t{1} << 63);
  for (int i = 7; i >= 0; --i) key.push_back(char((flipped >> (8 * i)) & 0xff));
  return key;
}

// The one place RocksDB errors become absl::Status.
absl::Status FromRocks(const rocksdb::Status& s, const char* what) {
  if (s.ok()) return absl::OkStatus();
  std::string msg = absl::StrCat("rocksdb ", what, ": ", s.ToString());
  if (s.IsNotFound()) return absl::NotFoundError(msg);
  if (s.IsCorruption()) return absl::DataLossError(msg);
  if (s.IsInvalidArgument()) return absl::InvalidArgumentError(msg);
  return absl::UnavailableError(msg);
}

void PutBigEndian(uint64_t v, int bytes, std::string* out) {
  for (int i = bytes - 1; i >= 0; --i)
    out->push_back(char((v >> (8 * i)) & 0xff));
}

uint64_t GetBigEndian(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

std::string BatchKey(uint64_t id) {
  std::string k;
  PutBigEndian(id, 8, &k);
  return k;
}

// len(job_id) (u32) + job_id: the prefix of a job's job_events keys.
std::string JobPrefix(const std::string& job_id) {
  std::string k;
  PutBigEndian(job_id.size(), 4, &k);
  return k + job_id;
}

// The end of a job's key range: past prefix + any 8-byte batch id.
std::string JobLimit(const std::string& prefix) {
  return prefix + std::string(9, '\xff');
}

void WriteEvent(int field, const v1::Event& e,
                google::protobuf::io::CodedOutputStream* coded) {
  coded->WriteTag(static_cast<uint32_t>(field) << 3 | 2);
  coded->WriteVarint32(static_cast<uint32_t>(e.ByteSizeLong()));
  e.SerializeWithCachedSizes(coded);
}

// A StoredBatch's wire bytes (layout 2): its heartbeats, written field by
// field so that the events are serialized without a copy into a message,
// and the newest heartbeat time through it (`fleet_high`, if any).
std::string EncodeStoredBatch(const BatchWrite& batch, uint32_t job_events,
                              std::optional<int64_t> fleet_high) {
  internal::v1::StoredBatch header;
  if (fleet_high) header.set_fleet_high_ns(*fleet_high);
  header.set_agent_id(batch.agent_id);
  header.set_sequence(batch.sequence);
  *header.mutable_received() = NanosToTimestamp(batch.received_ns);
  header.set_layout(2);
  header.set_job_events(job_events);
  std::string out = header.SerializeAsString();
  {  // the stream gives back its unused bytes when it goes
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    for (const v1::Event& e : batch.accepted) {
      if (IsFleetEvent(e)) {
        WriteEvent(internal::v1::StoredBatch::kEventsFieldNumber, e, &coded);
      }
    }
  }
  return out;
}

// The tags of StoredJobEvents.min_event_ns and high_event_ns (varints),
// which a job_events value starts with since they were added.
constexpr uint32_t kMinEventNsTag =
    internal::v1::StoredJobEvents::kMinEventNsFieldNumber << 3;
constexpr uint32_t kHighEventNsTag =
    internal::v1::StoredJobEvents::kHighEventNsFieldNumber << 3;

// `events` (one job's, one batch's) as a StoredJobEvents record in `*out`
// (replaced): its min_event_ns first, then its high_event_ns if known, then
// the events. Sized first and written in place (a string stream would
// grow, and zero-fill, the buffer step by step).
void EncodeJobEvents(const std::vector<const v1::Event*>& events,
                     const std::vector<absl::string_view>& wires,
                     int64_t min_ns, std::optional<int64_t> high_ns,
                     std::string* out) {
  using google::protobuf::io::CodedOutputStream;
  constexpr uint32_t kEventTag =
      internal::v1::StoredJobEvents::kEventsFieldNumber << 3 | 2;
  const uint64_t min_v = static_cast<uint64_t>(min_ns);
  const uint64_t high_v = static_cast<uint64_t>(high_ns.value_or(0));
  size_t size = CodedOutputStream::VarintSize32(kMinEventNsTag) +
                CodedOutputStream::VarintSize64(min_v);
  if (high_ns) {
    size += CodedOutputStream::VarintSize32(kHighEventNsTag) +
            CodedOutputStream::VarintSize64(high_v);
  }
  for (size_t i = 0; i < events.size(); ++i) {
    // Without its wire bytes, ByteSizeLong caches the sizes written below.
    const size_t n =
        wires.empty() ? events[i]->ByteSizeLong() : wires[i].size();
    size += CodedOutputStream::VarintSize32(kEventTag) +
            CodedOutputStream::VarintSize32(static_cast<uint32_t>(n)) + n;
  }
  out->resize(size);
  uint8_t* p = reinterpret_cast<uint8_t*>(out->data());
  p = CodedOutputStream::WriteTagToArray(kMinEventNsTag, p);
  p = CodedOutputStream::WriteVarint64ToArray(min_v, p);
  if (high_ns) {
    p = CodedOutputStream::WriteTagToArray(kHighEventNsTag, p);
    p = CodedOutputStream::WriteVarint64ToArray(high_v, p);
  }
  for (size_t i = 0; i < events.size(); ++i) {
    p = CodedOutputStream::WriteTagToArray(kEventTag, p);
    if (wires.empty()) {
      p = CodedOutputStream::WriteVarint32ToArray(
          static_cast<uint32_t>(events[i]->GetCachedSize()), p);
      p = events[i]->SerializeWithCachedSizesToArray(p);
      continue;
    }
    p = CodedOutputStream::WriteVarint32ToArray(
        static_cast<uint32_t>(wires[i].size()), p);
    p = std::copy(wires[i].begin(), wires[i].end(), p);
  }
}

// What PutJobEvents knows of a job before this batch: its high-water mark
// (nullopt: unknown) and its slot in the store's cache of marks (null: not
// cached, so its job_heads key is written too).
struct JobBefore {
  std::optional<int64_t> high;
  int64_t* cached = nullptr;
};

// How PutJobEvents keeps the jobs' high-water marks (KEY_LAYOUT.md, "A past
// as-of") and heads: `before(prefix)` is what is known of the job before
// this batch; the new marks go to `updated` (cached jobs' slots) and `fresh`
// (the others' prefixes), for the store to note once the write is done.
// Null `before`: values without a mark and every job's head written
// (layout-1 migration, whose batches come before any mark).
struct JobHighs {
  std::function<JobBefore(const std::string& prefix)> before;
  rocksdb::ColumnFamilyHandle* late = nullptr;
  std::vector<std::pair<int64_t*, int64_t>>* updated = nullptr;
  std::vector<std::pair<std::string, int64_t>>* fresh = nullptr;
};

// Reused buffers of one PutJobEvents call.
struct RunBuffers {
  std::vector<const v1::Event*> run;         // one job's events of the batch
  std::vector<absl::string_view> run_wires;  // their wire bytes, if given
  std::string prefix, key, value;
};

// Puts one job's events of one batch (`b->run`, non-empty) under `b->key`,
// with its marks, its job_late key if an event is older than the job's mark
// before it, and its job_heads key unless cached.
void PutJobRun(rocksdb::ColumnFamilyHandle* family,
               rocksdb::ColumnFamilyHandle* heads, const std::string& batch_key,
               const JobHighs& highs, RunBuffers* b, rocksdb::WriteBatch* wb) {
  int64_t min_ns = std::numeric_limits<int64_t>::max();
  int64_t max_ns = std::numeric_limits<int64_t>::min();
  for (const v1::Event* e : b->run) {
    const int64_t t = TimestampToNanos(e->time());
    min_ns = std::min(min_ns, t);
    max_ns = std::max(max_ns, t);
  }
  std::optional<int64_t> high;
  JobBefore before;
  if (highs.before) {
    before = highs.before(b->prefix);
    high = before.high ? std::max(*before.high, max_ns) : max_ns;
    if (before.high && min_ns < *before.high) wb->Put(highs.late, b->key, "");
    if (before.cached != nullptr) {
      highs.updated->emplace_back(before.cached, *high);
    } else {
      highs.fresh->emplace_back(b->prefix, *high);
    }
  }
  EncodeJobEvents(b->run, b->run_wires, min_ns, high, &b->value);
  wb->Put(family, b->key, b->value);
  if (before.cached == nullptr) wb->Put(heads, b->prefix, batch_key);
}

// The job events of a write (heartbeats and events without a body left
// out) grouped by job: `order` holds their indexes, each job's in batch
// order, the jobs in the order of their first event; job `g`'s indexes end
// at `ends[g]`. The order of the jobs' keys in a WriteBatch does not matter.
struct JobGroups {
  std::vector<uint32_t> order;
  std::vector<uint32_t> ends;
};

// JobGroups of `events`: one hash lookup per event and a counting sort
// (a comparison sort by id cost about 1k instructions per event,
// BENCHMARKS.md section 2).
JobGroups GroupByJob(const std::vector<const v1::Event*>& events) {
  constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  absl::flat_hash_map<absl::string_view, uint32_t> group_of;
  group_of.reserve(std::min<size_t>(events.size(), 4096));
  std::vector<uint32_t> group(events.size(), kNone);
  std::vector<uint32_t> next;  // first the jobs' sizes, then fill positions
  for (size_t i = 0; i < events.size(); ++i) {
    const v1::Event& e = *events[i];
    if (IsFleetEvent(e) || e.body_case() == v1::Event::BODY_NOT_SET) continue;
    auto [it, fresh] =
        group_of.try_emplace(e.job_id(), static_cast<uint32_t>(next.size()));
    if (fresh) next.push_back(0);
    group[i] = it->second;
    ++next[it->second];
  }
  JobGroups out;
  out.ends.resize(next.size());
  uint32_t end = 0;
  for (size_t g = 0; g < next.size(); ++g) {
    end += next[g];
    out.ends[g] = end;
    next[g] = end - next[g];
  }
  out.order.resize(end);
  for (size_t i = 0; i < events.size(); ++i) {
    if (group[i] != kNone)
      out.order[next[group[i]]++] = static_cast<uint32_t>(i);
  }
  return out;
}

// Adds to `wb` one job_events record per job of `events` (heartbeats and
// events without a body left out), under batch key `batch_key`, and the
// job_heads key of each job `highs` does not know to have one. `wires`:
// each event's serialization (BatchWrite::accepted_wire); unless there is
// one per event, they are serialized here. Returns how many events it
// stored.
uint32_t PutJobEvents(rocksdb::ColumnFamilyHandle* family,
                      rocksdb::ColumnFamilyHandle* heads,
                      const std::string& batch_key,
                      const std::vector<const v1::Event*>& events,
                      const std::vector<absl::string_view>& wires,
                      const JobHighs& highs, rocksdb::WriteBatch* wb) {
  const JobGroups groups = GroupByJob(events);
  const bool have_wires = wires.size() == events.size();
  RunBuffers b;
  uint32_t begin = 0;
  for (const uint32_t end : groups.ends) {
    b.run.clear();
    b.run_wires.clear();
    for (uint32_t k = begin; k < end; ++k) {
      const uint32_t index = groups.order[k];
      b.run.push_back(events[index]);
      if (have_wires) b.run_wires.push_back(wires[index]);
    }
    const std::string& job_id = events[groups.order[begin]]->job_id();
    b.prefix.clear();
    PutBigEndian(job_id.size(), 4, &b.prefix);
    b.prefix += job_id;
    b.key.assign(b.prefix).append(batch_key);
    PutJobRun(family, heads, batch_key, highs, &b, wb);
    begin = end;
  }
  return static_cast<uint32_t>(groups.order.size());
}

// What a job_events value starts with, read without parsing its events:
// its earliest event time (the smallest int64 for a value written before
// the field, which must then be read whole) and its high-water mark.
struct Leading {
  int64_t min_ns = std::numeric_limits<int64_t>::min();
  std::optional<int64_t> high_ns;
};

Leading ReadLeading(const rocksdb::Slice& value) {
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const uint8_t*>(value.data()),
      static_cast<int>(value.size()));
  Leading out;
  uint64_t v = 0;
  if (in.ReadTag() != kMinEventNsTag || !in.ReadVarint64(&v)) return out;
  out.min_ns = static_cast<int64_t>(v);
  if (in.ReadTag() == kHighEventNsTag && in.ReadVarint64(&v)) {
    out.high_ns = static_cast<int64_t>(v);
  }
  return out;
}

// JobEventsReader on an iterator of job_events (ReadJob's own, or one shared
// by a whole pass): seeks inside the job's key range. With `late` (an
// iterator of job_late), a read until T stops its walk at the first value
// whose events are all after T and that has a high-water mark: every later
// value without a job_late key holds only events after T too, so only the
// job_late ones are read beyond it. `visited` (if set) counts the values
// looked at.
class IteratorJobReader : public JobEventsReader {
 public:
  IteratorJobReader(rocksdb::Iterator* it, rocksdb::Iterator* late,
                    const std::string& prefix, uint64_t last_batch,
                    std::atomic<int64_t>* visited)
      : it_(it),
        late_(late),
        prefix_(prefix),
        last_batch_(last_batch),
        visited_(visited) {}
  absl::Status Read(uint64_t after_batch, uint64_t through_batch,
                    std::vector<v1::Event>* out) override {
    return ReadUntil(after_batch, through_batch,
                     std::numeric_limits<int64_t>::max(), out);
  }

  absl::Status ReadUntil(uint64_t after_batch, uint64_t through_batch,
                         int64_t until_ns,
                         std::vector<v1::Event>* out) override {
    // Nothing after the job's newest batch: no seek at all.
    if (after_batch >= std::min(through_batch, last_batch_)) {
      return absl::OkStatus();
    }
    for (it_->Seek(prefix_ + BatchKey(after_batch + 1));
         it_->Valid() && it_->key().starts_with(prefix_); it_->Next()) {
      const uint64_t id = GetBigEndian(it_->key().data() + prefix_.size(), 8);
      if (id > through_batch) break;
      if (visited_ != nullptr) ++*visited_;
      const Leading lead = ReadLeading(it_->value());
      if (lead.min_ns <= until_ns) {
        if (absl::Status s = Take(id, out); !s.ok()) return s;
      } else if (lead.high_ns && late_ != nullptr) {
        return ReadLate(id, through_batch, until_ns, out);
      }  // else: all later, and the walk cannot stop here
    }
    return FromRocks(it_->status(), "read job");
  }

 private:
  // Appends the events of the value at it_ (batch `id`).
  absl::Status Take(uint64_t id, std::vector<v1::Event>* out) {
    if (!stored_.ParseFromArray(it_->value().data(),
                                static_cast<int>(it_->value().size()))) {
      return absl::DataLossError(absl::StrCat("rocksdb job_events: batch ", id,
                                              " of ", prefix_.substr(4),
                                              " does not parse"));
    }
    for (v1::Event& e : *stored_.mutable_events()) out->push_back(std::move(e));
    return absl::OkStatus();
  }

  // The values of the job's job_late batches after `after`, through
  // `through`, that hold events at or before `until_ns`.
  absl::Status ReadLate(uint64_t after, uint64_t through, int64_t until_ns,
                        std::vector<v1::Event>* out) {
    for (late_->Seek(prefix_ + BatchKey(after + 1));
         late_->Valid() && late_->key().starts_with(prefix_); late_->Next()) {
      const uint64_t id = GetBigEndian(late_->key().data() + prefix_.size(), 8);
      if (id > through) break;
      it_->Seek(late_->key());
      if (!it_->Valid() || it_->key() != late_->key()) continue;  // deleted
      if (visited_ != nullptr) ++*visited_;
      if (ReadLeading(it_->value()).min_ns > until_ns) continue;
      if (absl::Status s = Take(id, out); !s.ok()) return s;
    }
    absl::Status s = FromRocks(late_->status(), "read job_late");
    return s.ok() ? FromRocks(it_->status(), "read job") : s;
  }

  rocksdb::Iterator* it_;
  rocksdb::Iterator* late_;
  const std::string& prefix_;
  const uint64_t last_batch_;
  std::atomic<int64_t>* visited_;
  internal::v1::StoredJobEvents stored_;
};

// Appends to `out` the job_states records at `it` and after that belong to
// the job of `prefix` (len + job_id); counts in `*unreadable` those that do
// not parse or name another job.
void CollectStates(rocksdb::Iterator* it, const std::string& prefix,
                   std::vector<internal::v1::StoredJobState>* out,
                   int* unreadable) {
  const std::string job_id = prefix.substr(4);
  for (; it->Valid() && it->key().starts_with(prefix); it->Next()) {
    internal::v1::StoredJobState& state = out->emplace_back();
    if (!state.ParseFromArray(it->value().data(),
                              static_cast<int>(it->value().size())) ||
        state.job_id() != job_id) {
      out->pop_back();
      ++*unreadable;
    }
  }
}

// ScanJobs' iterators over the per-job families, visited job by job in
// prefix order: each job's states, and a reader of its events.
class JobScan {
 public:
  JobScan(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* states,
          rocksdb::ColumnFamilyHandle* events,
          rocksdb::ColumnFamilyHandle* late, std::atomic<int64_t>* visited)
      : states_(db->NewIterator(FullScan(), states)),
        events_(db->NewIterator(FullScan(), events)),
        late_(db->NewIterator(FullScan(), late)),
        visited_(visited) {
    states_->SeekToFirst();
  }

  absl::Status Visit(const std::string& prefix,
                     const EventStore::RestoreVisitor& visit) {
    found_.clear();
    while (states_->Valid() && states_->key().compare(prefix) < 0) {
      states_->Next();  // states of jobs without events (deleted)
    }
    int unreadable = 0;  // left out (restores read more events instead)
    CollectStates(states_.get(), prefix, &found_, &unreadable);
    // A head names a job, not its newest batch (layout 3): seek.
    IteratorJobReader reader(events_.get(), late_.get(), prefix,
                             std::numeric_limits<uint64_t>::max(), visited_);
    return visit(prefix.substr(4), &found_, &reader);
  }

  absl::Status status() const {
    for (const auto* it : {&states_, &events_, &late_}) {
      if (absl::Status s = FromRocks((*it)->status(), "scan jobs for restore");
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }

 private:
  std::unique_ptr<rocksdb::Iterator> states_, events_, late_;
  std::atomic<int64_t>* visited_;
  std::vector<internal::v1::StoredJobState> found_;
};

// The job prefix (len + job_id) of job_events and job_states keys. With it
// RocksDB keeps an insert hint per job in the memtable, so that a job's next
// key (a later batch id, always after its last) goes in next to the last
// one instead of by a skiplist search from the top: a fleet's batches touch
// many jobs at random places of the key space.
class JobPrefixTransform : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "goodput.JobPrefix"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    return rocksdb::Slice(key.data(), 4 + GetBigEndian(key.data(), 4));
  }
  // Only whole keys (prefix + batch id). Not the bare prefix that starts a
  // DeleteRange: RocksDB 7.8 keeps one hint per prefix for a memtable's
  // point and range-deletion tables alike, and a point table's hint used
  // in the range-deletion table breaks it (its debug build asserts).
  bool InDomain(const rocksdb::Slice& key) const override {
    return key.size() >= 4 && key.size() == 4 + GetBigEndian(key.data(), 4) + 8;
  }
};

// The error of a store that lost acknowledged batches (`acked`: what its
// marker says, or why it could not be read), naming the repair.
absl::Status StoreLossError(
    const std::string& dir,
    const absl::StatusOr<std::optional<uint64_t>>& acked, uint64_t stored) {
  const std::string what =
      acked.ok() ? absl::StrCat("acknowledged batches ", stored + 1, "..",
                                **acked, " (", **acked - stored,
                                " batches) are missing: it holds batches 1..",
                                stored, " but its ack marker says ", **acked,
                                " were acknowledged")
                 : absl::StrCat(
                       "cannot tell whether acknowledged batches "
                       "are missing: ",
                       acked.status().message());
  return absl::DataLossError(absl::StrCat(
      "store ", dir, ": ", what,
      ". The RocksDB write-ahead log was truncated, damaged or deleted "
      "(RocksDB's LOG in the same directory says where it stopped). "
      "Restore the directory from a backup, or start with "
      "--accept_store_loss to go on without those batches (agents deleted "
      "them when they were acknowledged; resend what you still have with "
      "goodputctl send). See docs/delivery.md, \"A damaged WAL\""));
}

}  // namespace

// job_events keeps a skiplist memtable (a job rebuild reads its newest
// events from there; a vector memtable would sort itself for every such
// read), with a per-job insert hint: without it a batch of an interleaved
// fleet costs one skiplist search from the top per job, i.e. about one
// random insert per event (BENCHMARKS.md, section 2). The skiplist is ours
// (HintedSkipListFactory): RocksDB's, as Debian builds it, checks its whole
// hint after each insert, which cost as much as the search it saves.
rocksdb::ColumnFamilyOptions RocksDbEventStore::FamilyOptions(Family family) {
  rocksdb::ColumnFamilyOptions cf;
  if (family == kJobEvents || family == kJobStates) {
    cf.memtable_insert_with_hint_prefix_extractor =
        std::make_shared<JobPrefixTransform>();
    cf.memtable_factory = std::make_shared<HintedSkipListFactory>();
  }
  return cf;
}

absl::StatusOr<std::unique_ptr<RocksDbEventStore>> RocksDbEventStore::Open(
    const std::string& dir, Options options) {
  rocksdb::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  // Writes come from one thread; the memtable insert hints need this.
  db_options.allow_concurrent_memtable_write = false;
  // A restart after a crash replays the WAL into the memtables without
  // flushing them first (they flush as they fill, as during ingest).
  db_options.avoid_flush_during_recovery = true;
  // Chosen, not defaulted (docs/delivery.md, "A damaged WAL"): replay the
  // WAL up to its first bad or missing record and stop there, so the store
  // is always a consistent prefix of the acknowledged batches (never one
  // with a hole, as kSkipAnyCorruptedRecords could leave). RocksDB says
  // nothing when that prefix is short; CheckAcknowledged does.
  db_options.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  // Small column families (agents) would otherwise pin every WAL file and
  // make a restart replay all of them.
  db_options.max_total_wal_size = 256 << 20;
  // All column families' memtables together stay under 64 MiB (the largest
  // is flushed at the cap), so goodputd's memory does not creep up by the
  // memtables of every family between flushes (BENCHMARKS.md, Soak).
  db_options.db_write_buffer_size = 64 << 20;
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (int f = 0; f < kCount; ++f) {
    families.emplace_back(kFamilyNames[f], FamilyOptions(Family(f)));
  }
  rocksdb::DB* db = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  absl::Status s = FromRocks(
      rocksdb::DB::Open(db_options, dir, families, &handles, &db), "open");
  if (!s.ok()) return s;
  std::unique_ptr<RocksDbEventStore> store(
      new RocksDbEventStore(db, std::move(handles), options));
  if (s = store->LoadNextBatchId(); !s.ok()) return s;
  if (s = store->CheckLayout(); !s.ok()) return s;
  if (s = store->CheckAcknowledged(dir); !s.ok()) return s;
  return store;
}

absl::Status RocksDbEventStore::CheckAcknowledged(const std::string& dir) {
  auto marker =
      AckMarker::Open(absl::StrCat(dir, "/", kAckMarkerFile), options_.fsync);
  if (!marker.ok()) return marker.status();
  marker_ = *std::move(marker);
  const uint64_t stored = LastBatchId();
  auto acked = marker_->Read();
  if (acked.ok() && acked->value_or(0) <= stored) {
    return marker_->Record(stored);
  }
  const absl::Status loss = StoreLossError(dir, acked, stored);
  if (!options_.accept_loss) return loss;
  lost_batches_ = acked.ok() ? **acked - stored : 0;
  damage_ = std::string(loss.message());
  return marker_->Record(stored);
}

RocksDbEventStore::RocksDbEventStore(
    rocksdb::DB* db, std::vector<rocksdb::ColumnFamilyHandle*> handles,
    Options options)
    : db_(db),
      handles_(std::move(handles)),
      options_(options),
      write_batch_(std::make_unique<rocksdb::WriteBatch>()) {}

RocksDbEventStore::~RocksDbEventStore() {
  // A clean close leaves no WAL to replay: the next open is quick. (After a
  // crash the WAL holds at most the memtables, 64 MiB.)
  (void)db_->Flush(rocksdb::FlushOptions(), handles_);
  for (auto* h : handles_) (void)db_->DestroyColumnFamilyHandle(h);
}

absl::Status RocksDbEventStore::LoadNextBatchId() {
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), handles_[kBatches]));
  it->SeekToLast();
  if (!it->Valid()) return FromRocks(it->status(), "seek last batch");
  next_batch_id_ = GetBigEndian(it->key().data(), 8) + 1;
  internal::v1::StoredBatch last;
  if (last.ParseFromArray(it->value().data(),
                          static_cast<int>(it->value().size())) &&
      last.has_fleet_high_ns()) {
    fleet_high_ = last.fleet_high_ns();
  }
  return FromRocks(it->status(), "seek last batch");
}

absl::Status RocksDbEventStore::CheckLayout() {
  std::string layout;
  rocksdb::Status got =
      db_->Get(rocksdb::ReadOptions(), handles_[kDefault], kLayoutKey, &layout);
  if (got.ok() && layout == kLayout) return EnsureJobHeads();
  if (got.ok() && layout != "2" && layout != "3" && layout != "4" &&
      layout != "5") {
    return absl::FailedPreconditionError(absl::StrCat(
        "store: layout version \"", layout,
        "\" is not one this goodputd "
        "reads (it reads 1 to 6, storage/KEY_LAYOUT.md); use the goodputd "
        "that wrote it"));
  }
  if (!got.ok() && !got.IsNotFound()) {
    return FromRocks(got, "read layout version");
  }
  if (!got.ok()) {
    if (absl::Status s = MigrateFromLayout1(); !s.ok()) return s;
  }
  // Layout 2's heads (each job's newest batch) are valid layout-3 heads;
  // layout 3's job_events values (no high-water marks) are valid layout-4
  // values, which a read never stops at; layout 4's batches (no
  // fleet_high_ns) are valid layout-5 batches, which ScanFleetUntil never
  // stops at; a layout-5 store has evicted no job into `evicted` (its
  // final snapshots are all held: the first restart evicts them).
  absl::Status s = FromRocks(db_->Put(rocksdb::WriteOptions(),
                                      handles_[kDefault], kLayoutKey, kLayout),
                             "write layout version");
  return s.ok() ? EnsureJobHeads() : s;
}

int64_t* RocksDbEventStore::CachedMark(const std::string& prefix) {
  auto it = marks_.find(prefix);
  return it == marks_.end() ? nullptr : &it->second;
}

std::optional<int64_t> RocksDbEventStore::StoredHigh(
    const std::string& prefix) {
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), handles_[kJobEvents]));
  it->SeekForPrev(prefix + std::string(8, '\xff'));
  if (!it->Valid() || !it->key().starts_with(prefix)) return std::nullopt;
  return ReadLeading(it->value()).high_ns;
}

void RocksDbEventStore::NoteMarks(
    const std::vector<std::pair<int64_t*, int64_t>>& updated,
    std::vector<std::pair<std::string, int64_t>> fresh) {
  for (const auto& [slot, high] : updated) *slot = high;
  if (marks_.size() + fresh.size() > kMarkCacheJobs) marks_.clear();
  for (auto& [prefix, high] : fresh) marks_[std::move(prefix)] = high;
}

absl::Status RocksDbEventStore::EnsureJobHeads() {
  std::string marker;
  rocksdb::Status got =
      db_->Get(rocksdb::ReadOptions(), handles_[kDefault], kHeadsKey, &marker);
  if (got.ok()) return absl::OkStatus();
  if (!got.IsNotFound()) return FromRocks(got, "read job heads marker");
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(FullScan(), handles_[kJobEvents]));
  rocksdb::WriteBatch wb;
  for (it->SeekToFirst(); it->Valid();) {
    const rocksdb::Slice key = it->key();
    const uint64_t len = key.size() >= 4 ? GetBigEndian(key.data(), 4) : 0;
    if (key.size() != 4 + len + 8) {
      return absl::DataLossError("rocksdb job_events: malformed key");
    }
    const std::string prefix(key.data(), 4 + len);
    it->SeekForPrev(JobLimit(prefix));  // the job's newest batch
    wb.Put(handles_[kJobHeads], prefix,
           rocksdb::Slice(it->key().data() + prefix.size(), 8));
    it->Seek(JobLimit(prefix));
  }
  if (absl::Status s = FromRocks(it->status(), "scan job heads"); !s.ok()) {
    return s;
  }
  wb.Put(handles_[kDefault], kHeadsKey, "1");
  return FromRocks(db_->Write(rocksdb::WriteOptions(), &wb), "write job heads");
}

absl::Status RocksDbEventStore::MigrateFromLayout1() {
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(FullScan(), handles_[kBatches]));
  internal::v1::StoredBatch stored;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const uint64_t id = GetBigEndian(it->key().data(), 8);
    if (!stored.ParseFromArray(it->value().data(),
                               static_cast<int>(it->value().size()))) {
      return absl::DataLossError(
          absl::StrCat("store migration: batch ", id, " does not parse"));
    }
    if (stored.layout() == 2) continue;  // migrated by an interrupted run
    if (absl::Status s = MigrateBatch(it->key().ToString(), &stored); !s.ok()) {
      return s;
    }
    ++migrated_batches_;
  }
  return FromRocks(it->status(), "migrate batches");
}

// One batch of layout 1, atomically: its job events move to job_events
// (replacing the index entries under the same keys), its heartbeats stay.
absl::Status RocksDbEventStore::MigrateBatch(
    const std::string& key, internal::v1::StoredBatch* stored) {
  std::vector<const v1::Event*> events;
  for (const v1::Event& e : stored->events()) events.push_back(&e);
  rocksdb::WriteBatch wb;
  const uint32_t n = PutJobEvents(handles_[kJobEvents], handles_[kJobHeads],
                                  key, events, {}, JobHighs(), &wb);
  internal::v1::StoredBatch rewritten;
  rewritten.set_agent_id(stored->agent_id());
  rewritten.set_sequence(stored->sequence());
  *rewritten.mutable_received() = stored->received();
  rewritten.set_layout(2);
  rewritten.set_job_events(n);
  for (v1::Event& e : *stored->mutable_events()) {
    if (IsFleetEvent(e)) *rewritten.add_events() = std::move(e);
  }
  wb.Put(handles_[kBatches], key, rewritten.SerializeAsString());
  rocksdb::WriteOptions wo;
  wo.sync = options_.fsync;
  return FromRocks(db_->Write(wo, &wb), "migrate batch");
}

absl::StatusOr<uint64_t> RocksDbEventStore::Write(const BatchWrite& batch) {
  const uint64_t id = next_batch_id_;
  const std::string key = BatchKey(id);
  std::vector<const v1::Event*> events;
  events.reserve(batch.accepted.size());
  for (const v1::Event& e : batch.accepted) events.push_back(&e);
  // Held until the marks are noted: the slots looked up stay valid.
  std::lock_guard<std::mutex> lock(marks_mu_);
  rocksdb::WriteBatch& wb = *write_batch_;
  wb.Clear();  // keeps its buffer: no regrowth for every batch
  std::vector<std::pair<int64_t*, int64_t>> updated;
  std::vector<std::pair<std::string, int64_t>> fresh;
  JobHighs job_highs;
  job_highs.before = [this](const std::string& prefix) {
    JobBefore before;
    before.cached = CachedMark(prefix);
    before.high = before.cached ? std::optional<int64_t>(*before.cached)
                                : StoredHigh(prefix);
    return before;
  };
  job_highs.late = handles_[kJobLate];
  job_highs.updated = &updated;
  job_highs.fresh = &fresh;
  const uint32_t n =
      PutJobEvents(handles_[kJobEvents], handles_[kJobHeads], key, events,
                   batch.accepted_wire, job_highs, &wb);
  const std::optional<int64_t> fleet_high = NoteFleetEvents(batch, key, &wb);
  wb.Put(handles_[kBatches], key, EncodeStoredBatch(batch, n, fleet_high));
  PutAgentSequence(batch.agent_id, batch.sequence, &wb);
  for (const auto& [agent, sequence] : batch.more_agents) {
    PutAgentSequence(agent, sequence, &wb);
  }
  for (size_t i = 0; i < batch.dead_letters.size(); ++i) {
    const v1::DeadLetter& d = batch.dead_letters[i];
    std::string dkey = key;
    PutBigEndian(i < batch.dead_letter_positions.size()
                     ? batch.dead_letter_positions[i]
                     : d.index(),
                 4, &dkey);
    wb.Put(handles_[kDeadLetters], dkey, d.SerializeAsString());
  }
  rocksdb::WriteOptions wo;
  wo.sync = options_.fsync;
  absl::Status s = FromRocks(db_->Write(wo, &wb), "write batch");
  if (!s.ok()) return s;
  next_batch_id_ = id + 1;
  fleet_high_ = fleet_high;
  NoteMarks(updated, std::move(fresh));
  // Not acknowledged unless marked: a failed mark fails the batch, which
  // the agent resends (and goodputd then acknowledges as a duplicate).
  if (s = marker_->Record(id); !s.ok()) return s;
  return id;
}

void RocksDbEventStore::PutAgentSequence(const std::string& agent,
                                         uint64_t sequence,
                                         rocksdb::WriteBatch* wb) {
  std::string seq;
  PutBigEndian(sequence, 8, &seq);
  wb->Put(handles_[kAgents], agent, seq);
}

uint64_t RocksDbEventStore::LastBatchId() { return next_batch_id_ - 1; }

std::optional<int64_t> RocksDbEventStore::NoteFleetEvents(
    const BatchWrite& batch, const std::string& key, rocksdb::WriteBatch* wb) {
  std::optional<int64_t> high = fleet_high_;
  bool late = false;
  for (const v1::Event& e : batch.accepted) {
    if (!IsFleetEvent(e)) continue;
    const int64_t t = TimestampToNanos(e.time());
    late = late || (fleet_high_ && t < *fleet_high_ - kFleetLateNanos);
    if (e.has_heartbeat()) high = high ? std::max(*high, t) : t;
  }
  if (late) wb->Put(handles_[kDefault], kFleetLatePrefix + key, "");
  return high;
}

absl::StatusOr<std::map<std::string, uint64_t>>
RocksDbEventStore::AgentSequences() {
  std::map<std::string, uint64_t> out;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), handles_[kAgents]));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (it->value().size() != 8) {
      return absl::DataLossError(absl::StrCat(
          "rocksdb agents: bad sequence for agent ", it->key().ToString()));
    }
    out[it->key().ToString()] = GetBigEndian(it->value().data(), 8);
  }
  absl::Status s = FromRocks(it->status(), "scan agents");
  if (!s.ok()) return s;
  return out;
}

absl::Status RocksDbEventStore::ReadJob(const std::string& job_id,
                                        uint64_t after_batch,
                                        uint64_t through_batch,
                                        std::vector<v1::Event>* out) {
  return ReadJobUntil(job_id, after_batch, through_batch,
                      std::numeric_limits<int64_t>::max(), out);
}

absl::Status RocksDbEventStore::ReadJobUntil(const std::string& job_id,
                                             uint64_t after_batch,
                                             uint64_t through_batch,
                                             int64_t until_ns,
                                             std::vector<v1::Event>* out) {
  const std::string prefix = JobPrefix(job_id);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), handles_[kJobEvents]));
  std::unique_ptr<rocksdb::Iterator> late(
      db_->NewIterator(rocksdb::ReadOptions(), handles_[kJobLate]));
  IteratorJobReader reader(it.get(), late.get(), prefix,
                           std::numeric_limits<uint64_t>::max(),
                           &job_values_visited_);
  return reader.ReadUntil(after_batch, through_batch, until_ns, out);
}

absl::Status RocksDbEventStore::ListJobs(const JobVisitor& visit) {
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(FullScan(), handles_[kJobHeads]));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const rocksdb::Slice key = it->key();
    if (key.size() < 4 || key.size() != 4 + GetBigEndian(key.data(), 4)) {
      return absl::DataLossError("rocksdb job_heads: malformed key");
    }
    if (absl::Status s = visit(std::string(key.data() + 4, key.size() - 4));
        !s.ok()) {
      return s;
    }
  }
  return FromRocks(it->status(), "list jobs");
}

absl::Status RocksDbEventStore::ScanJobsForRestore(
    const RestoreVisitor& visit) {
  return ScanJobs(/*evicted=*/{}, visit);
}

absl::Status RocksDbEventStore::ScanAllJobs(const RestoreVisitor& visit) {
  // The evicted jobs have no head (EvictJobs): their prefixes, in order.
  std::vector<std::string> evicted;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(FullScan(), handles_[kEvicted]));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    evicted.push_back(JobPrefix(it->key().ToString()));
  }
  if (absl::Status s = FromRocks(it->status(), "scan evicted"); !s.ok()) {
    return s;
  }
  std::sort(evicted.begin(), evicted.end());
  return ScanJobs(evicted, visit);
}

absl::Status RocksDbEventStore::ScanJobs(
    const std::vector<std::string>& evicted, const RestoreVisitor& visit) {
  std::unique_ptr<rocksdb::Iterator> heads(
      db_->NewIterator(FullScan(), handles_[kJobHeads]));
  JobScan scan(db_.get(), handles_[kJobStates], handles_[kJobEvents],
               handles_[kJobLate], &job_values_visited_);
  auto next = evicted.begin();
  for (heads->SeekToFirst(); heads->Valid(); heads->Next()) {
    const std::string prefix = heads->key().ToString();
    if (prefix.size() < 4 ||
        prefix.size() != 4 + GetBigEndian(prefix.data(), 4) ||
        heads->value().size() != 8) {
      return absl::DataLossError("rocksdb job_heads: malformed record");
    }
    for (; next != evicted.end() && *next <= prefix; ++next) {
      if (*next == prefix) continue;  // came back: it has a head
      if (absl::Status s = scan.Visit(*next, visit); !s.ok()) return s;
    }
    if (absl::Status s = scan.Visit(prefix, visit); !s.ok()) return s;
  }
  for (; next != evicted.end(); ++next) {
    if (absl::Status s = scan.Visit(*next, visit); !s.ok()) return s;
  }
  if (absl::Status s = FromRocks(heads->status(), "scan jobs for restore");
      !s.ok()) {
    return s;
  }
  return scan.status();
}

absl::Status RocksDbEventStore::ScanHeartbeatsAfter(uint64_t after_batch,
                                                    const BatchVisitor& visit) {
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(FullScan(), handles_[kBatches]));
  internal::v1::StoredBatch stored;
  std::vector<v1::Event> events;
  for (it->Seek(BatchKey(after_batch + 1)); it->Valid(); it->Next()) {
    const uint64_t id = GetBigEndian(it->key().data(), 8);
    if (absl::Status s = VisitBatch(id, it->value(), &stored, &events, visit);
        !s.ok()) {
      return s;
    }
  }
  return FromRocks(it->status(), "scan heartbeats");
}

// Stops at the first batch whose mark is kFleetLateNanos past `until_ns`:
// every later batch without a fleet_late key holds only fleet events at
// or after that mark less kFleetLateNanos, so after `until_ns`.
absl::Status RocksDbEventStore::ScanFleetUntil(uint64_t after_batch,
                                               uint64_t through_batch,
                                               int64_t until_ns,
                                               const BatchVisitor& visit) {
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(FullScan(), handles_[kBatches]));
  internal::v1::StoredBatch stored;
  std::vector<v1::Event> events;
  uint64_t id = after_batch;
  bool stopped = false;
  for (it->Seek(BatchKey(after_batch + 1));
       it->Valid() && !stopped &&
       (id = GetBigEndian(it->key().data(), 8)) <= through_batch;
       it->Next()) {
    if (absl::Status s = VisitBatch(id, it->value(), &stored, &events, visit);
        !s.ok()) {
      return s;
    }
    stopped = stored.has_fleet_high_ns() &&
              stored.fleet_high_ns() - kFleetLateNanos > until_ns;
  }
  if (absl::Status s = FromRocks(it->status(), "scan fleet events"); !s.ok()) {
    return s;
  }
  return stopped ? VisitLateAfter(id, through_batch, visit) : absl::OkStatus();
}

absl::Status RocksDbEventStore::VisitBatch(uint64_t id,
                                           const rocksdb::Slice& value,
                                           internal::v1::StoredBatch* stored,
                                           std::vector<v1::Event>* events,
                                           const BatchVisitor& visit) {
  if (!stored->ParseFromArray(value.data(), static_cast<int>(value.size()))) {
    return absl::DataLossError(
        absl::StrCat("rocksdb batches: batch ", id, " does not parse"));
  }
  if (stored->events_size() == 0) return absl::OkStatus();
  events->clear();
  for (v1::Event& e : *stored->mutable_events()) {
    events->push_back(std::move(e));
  }
  return visit(id, events);
}

absl::Status RocksDbEventStore::VisitLateAfter(uint64_t after_batch,
                                               uint64_t through_batch,
                                               const BatchVisitor& visit) {
  std::unique_ptr<rocksdb::Iterator> late(
      db_->NewIterator(FullScan(), handles_[kDefault]));
  const std::string prefix = kFleetLatePrefix;
  internal::v1::StoredBatch stored;
  std::vector<v1::Event> events;
  std::string value;
  for (late->Seek(prefix + BatchKey(after_batch + 1));
       late->Valid() && late->key().starts_with(prefix); late->Next()) {
    const uint64_t id = GetBigEndian(late->key().data() + prefix.size(), 8);
    if (id > through_batch) break;
    rocksdb::Status got =
        db_->Get(FullScan(), handles_[kBatches], BatchKey(id), &value);
    if (got.IsNotFound()) continue;  // its fleet events were deleted
    if (!got.ok()) return FromRocks(got, "read late batch");
    if (absl::Status s = VisitBatch(id, value, &stored, &events, visit);
        !s.ok()) {
      return s;
    }
  }
  return FromRocks(late->status(), "scan fleet_late");
}

absl::Status RocksDbEventStore::DeleteFleetEvents(uint64_t through_batch) {
  if (through_batch >= LastBatchId()) {
    return absl::InvalidArgumentError(
        absl::StrCat("delete fleet events: through_batch ", through_batch,
                     " is not before the newest batch ", LastBatchId()));
  }
  rocksdb::WriteBatch wb;
  const std::string end = BatchKey(through_batch + 1);
  wb.DeleteRange(handles_[kBatches], BatchKey(0), end);
  wb.DeleteRange(handles_[kDefault], kFleetLatePrefix + BatchKey(0),
                 kFleetLatePrefix + end);
  rocksdb::WriteOptions wo;
  wo.sync = options_.fsync;
  absl::Status s = FromRocks(db_->Write(wo, &wb), "delete fleet events");
  if (!s.ok()) return s;
  // The space comes back now, not at some later compaction: the files
  // wholly inside the range go, the rest of the range is compacted. Best
  // effort (the deletion itself is done).
  const std::string first = BatchKey(0);
  const rocksdb::Slice begin(first), stop(end);
  (void)rocksdb::DeleteFilesInRange(db_.get(), handles_[kBatches], &begin,
                                    &stop, /*include_end=*/false);
  (void)db_->CompactRange(rocksdb::CompactRangeOptions(), handles_[kBatches],
                          &begin, &stop);
  return absl::OkStatus();
}

absl::Status RocksDbEventStore::WriteJobStates(
    const std::vector<internal::v1::StoredJobState>& states,
    const std::vector<std::pair<std::string, uint64_t>>& remove) {
  rocksdb::WriteBatch wb;
  for (const auto& [job_id, through] : remove) {
    wb.Delete(handles_[kJobStates], JobPrefix(job_id) + BatchKey(through));
  }
  for (const internal::v1::StoredJobState& s : states) {
    wb.Put(handles_[kJobStates],
           JobPrefix(s.job_id()) + BatchKey(s.through_batch()),
           s.SerializeAsString());
  }
  rocksdb::WriteOptions wo;
  wo.sync = options_.fsync;
  return FromRocks(db_->Write(wo, &wb), "write job states");
}

absl::Status RocksDbEventStore::ReadJobStates(
    const std::string& job_id, std::vector<internal::v1::StoredJobState>* out,
    int* unreadable) {
  const std::string prefix = JobPrefix(job_id);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), handles_[kJobStates]));
  it->Seek(prefix);
  CollectStates(it.get(), prefix, out, unreadable);
  return FromRocks(it->status(), "read job states");
}

absl::Status RocksDbEventStore::WriteSnapshots(
    const std::vector<JobSnapshot>& snapshots) {
  rocksdb::WriteBatch wb;
  for (const JobSnapshot& s : snapshots) {
    wb.Put(handles_[kSnapshots], s.report.job_id,
           ToRecord(s).SerializeAsString());
  }
  rocksdb::WriteOptions wo;
  wo.sync = options_.fsync;
  return FromRocks(db_->Write(wo, &wb), "write snapshots");
}

absl::Status RocksDbEventStore::ReadSnapshots(std::vector<JobSnapshot>* out) {
  std::vector<JobSnapshot> held, evicted;
  if (absl::Status s = ReadFamily(kSnapshots, &held); !s.ok()) return s;
  if (absl::Status s = ReadFamily(kEvicted, &evicted); !s.ok()) return s;
  auto id_less = [](const JobSnapshot& a, const JobSnapshot& b) {
    return a.report.job_id < b.report.job_id;
  };
  // Both in job id order; a job in both gives its held one (first).
  std::merge(std::make_move_iterator(held.begin()),
             std::make_move_iterator(held.end()),
             std::make_move_iterator(evicted.begin()),
             std::make_move_iterator(evicted.end()), std::back_inserter(*out),
             id_less);
  out->erase(std::unique(out->begin(), out->end(),
                         [](const JobSnapshot& a, const JobSnapshot& b) {
                           return a.report.job_id == b.report.job_id;
                         }),
             out->end());
  return absl::OkStatus();
}

absl::Status RocksDbEventStore::ReadHeldSnapshots(
    std::vector<JobSnapshot>* out) {
  return ReadFamily(kSnapshots, out);
}

absl::Status RocksDbEventStore::ReadFamily(Family family,
                                           std::vector<JobSnapshot>* out) {
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(FullScan(), handles_[family]));
  internal::v1::JobSnapshot record;  // reused: its parts stay allocated
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (absl::Status s =
            ParseSnapshot(kFamilyNames[family], it->key(), it->value(), &record,
                          &out->emplace_back());
        !s.ok()) {
      return s;
    }
  }
  return FromRocks(it->status(), "scan snapshots");
}

absl::Status RocksDbEventStore::ReadSnapshot(const std::string& job_id,
                                             std::optional<JobSnapshot>* out) {
  if (absl::Status s = ReadOne(kSnapshots, job_id, out); !s.ok() || *out) {
    return s;
  }
  return ReadOne(kEvicted, job_id, out);
}

absl::Status RocksDbEventStore::ReadEvictedSnapshot(
    const std::string& job_id, std::optional<JobSnapshot>* out) {
  return ReadOne(kEvicted, job_id, out);
}

absl::Status RocksDbEventStore::ReadOne(Family family,
                                        const std::string& job_id,
                                        std::optional<JobSnapshot>* out) {
  out->reset();
  std::string value;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), handles_[family], job_id, &value);
  if (s.IsNotFound()) return absl::OkStatus();
  if (!s.ok()) return FromRocks(s, "read snapshot");
  internal::v1::JobSnapshot record;
  return ParseSnapshot(kFamilyNames[family], job_id, value, &record,
                       &out->emplace());
}

absl::Status RocksDbEventStore::ReadEvictedEndedBefore(
    int64_t before_ns, std::vector<JobSnapshot>* out) {
  const std::string limit = EvictedEndKey(before_ns);
  const size_t id_at = limit.size();
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), handles_[kDefault]));
  for (it->Seek(kEvictedEndPrefix); it->Valid() && it->key().compare(limit) < 0;
       it->Next()) {
    std::optional<JobSnapshot> s;
    const std::string id = it->key().ToString().substr(id_at);
    if (absl::Status st = ReadOne(kEvicted, id, &s); !st.ok()) return st;
    if (s) out->push_back(*std::move(s));  // events_deleted: not done yet
  }
  return FromRocks(it->status(), "scan evicted_end");
}

absl::Status RocksDbEventStore::EvictJobs(
    const std::vector<JobSnapshot>& snapshots,
    const std::optional<std::string>& totals) {
  rocksdb::WriteBatch wb;
  for (const JobSnapshot& s : snapshots) {
    const std::string& id = s.report.job_id;
    wb.Put(handles_[kEvicted], id, ToRecord(s).SerializeAsString());
    wb.Delete(handles_[kSnapshots], id);
    wb.Delete(handles_[kJobHeads], JobPrefix(id));
    // Retired (events_deleted): the key goes with the events
    // (DeleteJobEvents).
    if (!s.events_deleted) {
      wb.Put(handles_[kDefault], EvictedEndKey(s.ended_ns) + id, "");
    }
  }
  if (totals) {
    wb.Put(handles_[kDefault], absl::StrCat("meta/", kEvictedTotalsMeta),
           *totals);
  }
  {
    // Before the write: a head the cache names must exist (a later event
    // of the job writes its head again).
    std::lock_guard<std::mutex> lock(marks_mu_);
    for (const JobSnapshot& s : snapshots) {
      marks_.erase(JobPrefix(s.report.job_id));
    }
  }
  rocksdb::WriteOptions wo;
  wo.sync = options_.fsync;
  return FromRocks(db_->Write(wo, &wb), "evict jobs");
}

absl::Status RocksDbEventStore::DeleteJobEvents(
    const std::vector<JobSnapshot>& retired) {
  rocksdb::WriteBatch wb;
  std::vector<std::string> job_ids;
  for (const JobSnapshot& s : retired) {
    job_ids.push_back(s.report.job_id);
    wb.Delete(handles_[kDefault], EvictedEndKey(s.ended_ns) + s.report.job_id);
  }
  DeleteJobKeys(job_ids, &wb);
  rocksdb::WriteOptions wo;
  wo.sync = options_.fsync;
  return FromRocks(db_->Write(wo, &wb), "delete job events");
}

void RocksDbEventStore::DeleteJobKeys(const std::vector<std::string>& job_ids,
                                      rocksdb::WriteBatch* wb) {
  for (const std::string& job_id : job_ids) {
    const std::string prefix = JobPrefix(job_id);
    wb->DeleteRange(handles_[kJobEvents], prefix, JobLimit(prefix));
    wb->DeleteRange(handles_[kJobStates], prefix, JobLimit(prefix));
    wb->DeleteRange(handles_[kJobLate], prefix, JobLimit(prefix));
    wb->Delete(handles_[kJobHeads], prefix);
  }
  // Before the write: a head the cache names must exist.
  std::lock_guard<std::mutex> lock(marks_mu_);
  for (const std::string& job_id : job_ids) marks_.erase(JobPrefix(job_id));
}

absl::Status RocksDbEventStore::ImportJobs(const JobImport& import) {
  std::vector<std::string> jobs;
  for (const auto& s : import.states) jobs.push_back(s.job_id());
  for (const JobSnapshot& s : import.finals) jobs.push_back(s.report.job_id);
  rocksdb::WriteBatch wb;
  DeleteJobKeys(jobs, &wb);
  for (const std::string& job_id : jobs)
    wb.Delete(handles_[kSnapshots], job_id);
  for (const internal::v1::StoredJobState& s : import.states) {
    const std::string prefix = JobPrefix(s.job_id());
    wb.Put(handles_[kJobStates], prefix + BatchKey(s.through_batch()),
           s.SerializeAsString());
    wb.Put(handles_[kJobHeads], prefix, BatchKey(s.through_batch()));
  }
  for (const JobSnapshot& s : import.finals) {
    wb.Put(handles_[kSnapshots], s.report.job_id,
           ToRecord(s).SerializeAsString());
  }
  std::string seq;
  PutBigEndian(import.sequence, 8, &seq);
  wb.Put(handles_[kAgents], import.agent_id, seq);
  rocksdb::WriteOptions wo;
  wo.sync = options_.fsync;
  return FromRocks(db_->Write(wo, &wb), "import jobs");
}

absl::Status RocksDbEventStore::WriteMeta(const std::string& name,
                                          const std::string& value) {
  return WriteMetas({{name, value}});
}

absl::Status RocksDbEventStore::WriteMetas(
    const std::vector<std::pair<std::string, std::string>>& records) {
  rocksdb::WriteBatch wb;
  for (const auto& [name, value] : records) {
    wb.Put(handles_[kDefault], "meta/" + name, value);
  }
  rocksdb::WriteOptions wo;
  wo.sync = options_.fsync;
  return FromRocks(db_->Write(wo, &wb), "write meta");
}

absl::Status RocksDbEventStore::ReadMeta(const std::string& name,
                                         std::optional<std::string>* value) {
  value->reset();
  std::string got;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), handles_[kDefault],
                               "meta/" + name, &got);
  if (s.IsNotFound()) return absl::OkStatus();
  if (!s.ok()) return FromRocks(s, "read meta");
  *value = std::move(got);
  return absl::OkStatus();
}

absl::Status RocksDbEventStore::ScanMeta(const std::string& prefix,
                                         const MetaVisitor& visit) {
  const std::string full = "meta/" + prefix;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), handles_[kDefault]));
  for (it->Seek(full); it->Valid() && it->key().starts_with(full); it->Next()) {
    absl::Status s =
        visit(it->key().ToString().substr(5), it->value().ToString());
    if (!s.ok()) return s;
  }
  return FromRocks(it->status(), "scan meta");
}

absl::Status RocksDbEventStore::DeleteMeta(
    const std::vector<std::string>& names) {
  rocksdb::WriteBatch wb;
  for (const std::string& name : names)
    wb.Delete(handles_[kDefault], "meta/" + name);
  rocksdb::WriteOptions wo;
  wo.sync = options_.fsync;
  return FromRocks(db_->Write(wo, &wb), "delete meta");
}

absl::Status RocksDbEventStore::DeadLetters(size_t limit,
                                            std::vector<v1::DeadLetter>* out,
                                            uint64_t* total) {
  *total = 0;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), handles_[kDeadLetters]));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ++*total;
    if (out->size() >= limit) continue;
    if (!out->emplace_back().ParseFromArray(
            it->value().data(), static_cast<int>(it->value().size()))) {
      return absl::DataLossError("rocksdb dead_letters: record does not parse");
    }
  }
  return FromRocks(it->status(), "scan dead letters");
}

}  // namespace goodput::storage
