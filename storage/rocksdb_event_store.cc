#include "storage/rocksdb_event_store.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "proto/storage.pb.h"
#include "rocksdb/db.h"
#include "rocksdb/memtablerep.h"
#include "rocksdb/options.h"
#include "rocksdb/write_batch.h"

namespace goodput::storage {
namespace {

constexpr const char* kFamilyNames[] = {"default", "batches",      "job_events",
                                        "agents",  "dead_letters", "snapshots"};

// Reads of a whole column family (restart recovery, replays, reports of
// evicted jobs) do not fill the block cache: it would otherwise hold the
// newest part of the history and grow the process with the store.
rocksdb::ReadOptions FullScan() {
  rocksdb::ReadOptions options;
  options.fill_cache = false;
  return options;
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

std::string EncodeIndices(const std::vector<uint32_t>& indices) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    for (uint32_t i : indices) coded.WriteVarint32(i);
  }
  return out;
}

// A StoredBatch's wire bytes, written field by field so that the events
// are serialized from `batch` without a copy into a StoredBatch message.
std::string EncodeStoredBatch(const BatchWrite& batch) {
  internal::v1::StoredBatch header;
  header.set_agent_id(batch.agent_id);
  header.set_sequence(batch.sequence);
  header.mutable_received()->set_seconds(batch.received_ns / 1'000'000'000);
  header.mutable_received()->set_nanos(batch.received_ns % 1'000'000'000);
  std::string out = header.SerializeAsString();
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    for (const v1::Event& e : batch.accepted) {
      coded.WriteTag(internal::v1::StoredBatch::kEventsFieldNumber << 3 | 2);
      coded.WriteVarint32(static_cast<uint32_t>(e.ByteSizeLong()));
      e.SerializeWithCachedSizes(&coded);
    }
  }
  return out;
}

std::vector<uint32_t> DecodeIndices(const rocksdb::Slice& value) {
  std::vector<uint32_t> out;
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const uint8_t*>(value.data()),
      static_cast<int>(value.size()));
  uint32_t i;
  while (in.ReadVarint32(&i)) out.push_back(i);
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<RocksDbEventStore>> RocksDbEventStore::Open(
    const std::string& dir, Options options) {
  rocksdb::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  // Small column families (agents) would otherwise pin every WAL file and
  // make a restart replay all of them.
  db_options.max_total_wal_size = 256 << 20;
  // All column families' memtables together stay under 64 MiB (the largest
  // is flushed at the cap), so goodputd's memory does not creep up by the
  // memtables of every family between flushes (BENCHMARKS.md, Soak).
  db_options.db_write_buffer_size = 64 << 20;
  // Writes are serialized by the caller; the vector memtable needs this.
  db_options.allow_concurrent_memtable_write = false;
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const char* name : kFamilyNames) {
    rocksdb::ColumnFamilyOptions cf;
    if (std::string(name) == "job_events") {
      // One index key per (job, batch) lands at random places; a vector
      // memtable appends and sorts at flush. It is read only to rebuild a
      // job after a late event.
      cf.memtable_factory = std::make_shared<rocksdb::VectorRepFactory>();
    }
    families.emplace_back(name, cf);
  }
  rocksdb::DB* db = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  absl::Status s = FromRocks(
      rocksdb::DB::Open(db_options, dir, families, &handles, &db), "open");
  if (!s.ok()) return s;
  std::unique_ptr<RocksDbEventStore> store(
      new RocksDbEventStore(db, std::move(handles), options));
  if (s = store->LoadNextBatchId(); !s.ok()) return s;
  return store;
}

RocksDbEventStore::RocksDbEventStore(
    rocksdb::DB* db, std::vector<rocksdb::ColumnFamilyHandle*> handles,
    Options options)
    : db_(db), handles_(std::move(handles)), options_(options) {}

RocksDbEventStore::~RocksDbEventStore() {
  for (auto* h : handles_) (void)db_->DestroyColumnFamilyHandle(h);
}

absl::Status RocksDbEventStore::LoadNextBatchId() {
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), handles_[kBatches]));
  it->SeekToLast();
  if (it->Valid()) next_batch_id_ = GetBigEndian(it->key().data(), 8) + 1;
  return FromRocks(it->status(), "seek last batch");
}

absl::StatusOr<uint64_t> RocksDbEventStore::Write(const BatchWrite& batch) {
  const uint64_t id = next_batch_id_;
  rocksdb::WriteBatch wb;
  const std::string key = BatchKey(id);
  wb.Put(handles_[kBatches], key, EncodeStoredBatch(batch));
  // The per-job index: one key per job in the batch, its events' indices.
  std::vector<std::pair<const std::string*, uint32_t>> by_job;
  by_job.reserve(batch.accepted.size());
  for (size_t i = 0; i < batch.accepted.size(); ++i) {
    if (!batch.accepted[i].has_heartbeat()) {
      by_job.emplace_back(&batch.accepted[i].job_id(),
                          static_cast<uint32_t>(i));
    }
  }
  std::sort(by_job.begin(), by_job.end(), [](const auto& a, const auto& b) {
    return std::tie(*a.first, a.second) < std::tie(*b.first, b.second);
  });
  std::vector<uint32_t> indices;
  for (size_t i = 0; i < by_job.size();) {
    indices.clear();
    size_t j = i;
    for (; j < by_job.size() && *by_job[j].first == *by_job[i].first; ++j) {
      indices.push_back(by_job[j].second);
    }
    wb.Put(handles_[kJobEvents], JobPrefix(*by_job[i].first) + key,
           EncodeIndices(indices));
    i = j;
  }
  std::string seq;
  PutBigEndian(batch.sequence, 8, &seq);
  wb.Put(handles_[kAgents], batch.agent_id, seq);
  for (const v1::DeadLetter& d : batch.dead_letters) {
    std::string dkey = key;
    PutBigEndian(d.index(), 4, &dkey);
    wb.Put(handles_[kDeadLetters], dkey, d.SerializeAsString());
  }
  rocksdb::WriteOptions wo;
  wo.sync = options_.fsync;
  absl::Status s = FromRocks(db_->Write(wo, &wb), "write batch");
  if (!s.ok()) return s;
  next_batch_id_ = id + 1;
  return id;
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

absl::Status RocksDbEventStore::ParseBatch(uint64_t batch_id,
                                           const std::string& key,
                                           internal::v1::StoredBatch* stored) {
  std::string value;
  absl::Status s = FromRocks(
      db_->Get(rocksdb::ReadOptions(), handles_[kBatches], key, &value),
      "read batch");
  if (!s.ok()) return s;
  if (!stored->ParseFromString(value)) {
    return absl::DataLossError(
        absl::StrCat("rocksdb batches: batch ", batch_id, " does not parse"));
  }
  return absl::OkStatus();
}

absl::Status RocksDbEventStore::ReadBatch(uint64_t batch_id,
                                          std::vector<v1::Event>* out) {
  internal::v1::StoredBatch stored;
  absl::Status s = ParseBatch(batch_id, BatchKey(batch_id), &stored);
  if (!s.ok()) return s;
  out->clear();
  for (v1::Event& e : *stored.mutable_events()) out->push_back(std::move(e));
  return absl::OkStatus();
}

absl::Status RocksDbEventStore::ReadJob(const std::string& job_id,
                                        uint64_t through_batch,
                                        std::vector<v1::Event>* out) {
  const std::string prefix = JobPrefix(job_id);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), handles_[kJobEvents]));
  std::vector<v1::Event> batch;
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix);
       it->Next()) {
    const uint64_t id = GetBigEndian(it->key().data() + prefix.size(), 8);
    if (id > through_batch) break;
    if (absl::Status s = ReadBatch(id, &batch); !s.ok()) return s;
    for (uint32_t i : DecodeIndices(it->value())) {
      if (i >= batch.size()) {
        return absl::DataLossError(absl::StrCat("rocksdb job_events: index ", i,
                                                " out of batch ", id,
                                                " for job ", job_id));
      }
      out->push_back(std::move(batch[i]));
    }
  }
  return FromRocks(it->status(), "scan job");
}

absl::Status RocksDbEventStore::ScanBatches(const BatchVisitor& visit) {
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(FullScan(), handles_[kBatches]));
  internal::v1::StoredBatch stored;
  std::vector<v1::Event> events;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const uint64_t id = GetBigEndian(it->key().data(), 8);
    if (!stored.ParseFromArray(it->value().data(),
                               static_cast<int>(it->value().size()))) {
      return absl::DataLossError(
          absl::StrCat("rocksdb batches: batch ", id, " does not parse"));
    }
    events.clear();
    events.reserve(stored.events_size());
    for (v1::Event& e : *stored.mutable_events()) {
      if (e.body_case() != v1::Event::BODY_NOT_SET) {
        events.push_back(std::move(e));  // not deleted by retention
      }
    }
    if (absl::Status s = visit(id, &events); !s.ok()) return s;
  }
  return FromRocks(it->status(), "scan batches");
}

absl::Status RocksDbEventStore::ScanBatchesOnArena(
    const ArenaFor& arena_for, const ArenaBatchVisitor& visit) {
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(FullScan(), handles_[kBatches]));
  std::vector<const v1::Event*> events;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const uint64_t id = GetBigEndian(it->key().data(), 8);
    auto* stored =
        google::protobuf::Arena::CreateMessage<internal::v1::StoredBatch>(
            arena_for(id));
    if (!stored->ParseFromArray(it->value().data(),
                                static_cast<int>(it->value().size()))) {
      return absl::DataLossError(
          absl::StrCat("rocksdb batches: batch ", id, " does not parse"));
    }
    events.clear();
    for (const v1::Event& e : stored->events()) {
      if (e.body_case() != v1::Event::BODY_NOT_SET) events.push_back(&e);
    }
    if (absl::Status s = visit(id, events); !s.ok()) return s;
  }
  return FromRocks(it->status(), "scan batches");
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
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(FullScan(), handles_[kSnapshots]));
  internal::v1::JobSnapshot record;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (!record.ParseFromArray(it->value().data(),
                               static_cast<int>(it->value().size()))) {
      return absl::DataLossError(absl::StrCat(
          "rocksdb snapshots: job ", it->key().ToString(), " does not parse"));
    }
    if (absl::Status s = FromRecord(record, &out->emplace_back()); !s.ok()) {
      return s;
    }
  }
  return FromRocks(it->status(), "scan snapshots");
}

absl::Status RocksDbEventStore::ReadSnapshot(const std::string& job_id,
                                             std::optional<JobSnapshot>* out) {
  out->reset();
  std::string value;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), handles_[kSnapshots], job_id, &value);
  if (s.IsNotFound()) return absl::OkStatus();
  if (!s.ok()) return FromRocks(s, "read snapshot");
  internal::v1::JobSnapshot record;
  if (!record.ParseFromString(value)) {
    return absl::DataLossError(
        absl::StrCat("rocksdb snapshots: job ", job_id, " does not parse"));
  }
  return FromRecord(record, &out->emplace());
}

absl::Status RocksDbEventStore::DeleteJobEvents(
    const std::vector<std::string>& job_ids) {
  rocksdb::WriteBatch wb;
  std::map<uint64_t, std::vector<uint32_t>> by_batch;
  for (const std::string& job_id : job_ids) {
    if (absl::Status s = CollectJobIndex(job_id, &by_batch, &wb); !s.ok()) {
      return s;
    }
  }
  for (const auto& [id, indices] : by_batch) {
    if (absl::Status s = ClearEvents(id, indices, &wb); !s.ok()) return s;
  }
  rocksdb::WriteOptions wo;
  wo.sync = options_.fsync;
  return FromRocks(db_->Write(wo, &wb), "delete job events");
}

absl::Status RocksDbEventStore::CollectJobIndex(
    const std::string& job_id,
    std::map<uint64_t, std::vector<uint32_t>>* by_batch,
    rocksdb::WriteBatch* wb) {
  const std::string prefix = JobPrefix(job_id);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), handles_[kJobEvents]));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix);
       it->Next()) {
    const uint64_t id = GetBigEndian(it->key().data() + prefix.size(), 8);
    std::vector<uint32_t>& indices = (*by_batch)[id];
    for (uint32_t i : DecodeIndices(it->value())) indices.push_back(i);
    wb->Delete(handles_[kJobEvents], it->key());
  }
  return FromRocks(it->status(), "scan job index");
}

absl::Status RocksDbEventStore::ClearEvents(
    uint64_t id, const std::vector<uint32_t>& indices,
    rocksdb::WriteBatch* wb) {
  const std::string key = BatchKey(id);
  internal::v1::StoredBatch stored;
  if (absl::Status s = ParseBatch(id, key, &stored); !s.ok()) return s;
  for (uint32_t i : indices) {
    if (i < static_cast<uint32_t>(stored.events_size())) {
      stored.mutable_events(static_cast<int>(i))->Clear();
    }
  }
  bool empty = true;
  for (const v1::Event& e : stored.events()) {
    empty = empty && e.body_case() == v1::Event::BODY_NOT_SET;
  }
  if (empty && id + 1 != next_batch_id_) {  // the newest keeps the id
    wb->Delete(handles_[kBatches], key);
  } else {
    wb->Put(handles_[kBatches], key, stored.SerializeAsString());
  }
  return absl::OkStatus();
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
