#include "report/compact_events.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/config.h"
#include "core/event_order.h"

namespace goodput::report {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kChunkBytes = size_t{4} << 20;
// A group's blocks double from the first size to the last, so that a job
// of a few events wastes little and a long one takes few jumps.
constexpr uint64_t kFirstBlockRecords = 8;
constexpr uint64_t kMaxBlockRecords = 512;

// `bytes` (a multiple of kHugePage) of memory aligned to a huge page and
// advised to be backed by transparent huge pages: a replay touches every
// page once, and 4 KiB pages cost a fault each.
// Null if out of memory.
char* AllocateHugePages(size_t bytes) {
  void* p = std::aligned_alloc(kHugePage, bytes);
  if (p != nullptr) madvise(p, bytes, MADV_HUGEPAGE);  // best effort
  return static_cast<char*>(p);
}

// Whether every amount is +0.0, bit for bit (a -0.0 must come back as is).
bool AllPositiveZero(const v1::Step& s) {
  const double amounts[] = {s.flops(), s.bytes(), s.input_wait_seconds(),
                            s.idle_seconds()};
  static constexpr double kZeros[4] = {};
  return std::memcmp(amounts, kZeros, sizeof(amounts)) == 0;
}

// Seconds whose time in nanoseconds fits in an int64 with room to spare
// (years 1685 to 2255): a step outside them is stored whole.
constexpr int64_t kMaxInlineSeconds = int64_t{9'000'000'000};

bool IsInlineTime(int64_t seconds) {
  return seconds >= -kMaxInlineSeconds && seconds <= kMaxInlineSeconds;
}

bool IsInlineStep(const v1::Event& e) {
  return e.has_step() && IsInlineTime(e.time().seconds());
}

// The limits of a record's position.
absl::Status CheckPosition(size_t input, int64_t line) {
  if (input <= std::numeric_limits<uint16_t>::max() && line >= 0 &&
      line <= std::numeric_limits<uint32_t>::max()) {
    return absl::OkStatus();
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "replay holds at most 65536 inputs of 2^32 lines; got input ", input + 1,
      " line ", line));
}

// core::EventTimeNanos, but wrapping around where that overflows (times
// far from 1970, which then apply in an unspecified order there too).
int64_t TimeNanos(int64_t seconds, int32_t nanos) {
  return static_cast<int64_t>(static_cast<uint64_t>(seconds) *
                                  core::kNanosPerSecond +
                              static_cast<uint64_t>(nanos));
}

// The inverse of core::EventTimeNanos for a time that fits.
void SetTime(int64_t time_ns, google::protobuf::Timestamp* t) {
  int64_t seconds = time_ns / core::kNanosPerSecond;
  int64_t nanos = time_ns % core::kNanosPerSecond;
  if (nanos < 0) {  // before 1970: nanos count forward from the second
    nanos += core::kNanosPerSecond;
    --seconds;
  }
  t->set_seconds(seconds);
  t->set_nanos(static_cast<int32_t>(nanos));
}

}  // namespace

void CompactEvents::ChunkFree::operator()(char* chunk) const {
  std::free(chunk);
}

CompactEvents::CompactEvents() {
  strings_.emplace_back();
  groups_.emplace_back();
  ids_.emplace("", 0);
  step_.mutable_step();
  step_rank_ = static_cast<uint8_t>(core::KindRank(step_));
}

CompactEvents::~CompactEvents() = default;

uint32_t CompactEvents::Intern(absl::string_view s, Last* last) {
  if (last->value == s) return last->id;  // most lines repeat the last
  last->value.assign(s.data(), s.size());
  auto it = ids_.find(s);
  if (it != ids_.end()) return last->id = it->second;
  const uint32_t id = static_cast<uint32_t>(strings_.size());
  strings_.emplace_back(s);
  groups_.emplace_back();
  ids_.emplace(strings_.back(), id);
  return last->id = id;
}

void* CompactEvents::Allocate(size_t bytes) {
  if (chunks_.empty() || chunk_used_ + bytes > kChunkBytes) {
    char* chunk = AllocateHugePages(kChunkBytes);
    if (chunk == nullptr) return nullptr;
    chunks_.emplace_back(chunk);
    chunk_used_ = 0;
  }
  void* p = chunks_.back().get() + chunk_used_;
  chunk_used_ += bytes;
  return p;
}

// The tail of the group's last block lives in the group, so that a record
// is appended without reading its block: in a log of interleaved jobs, the
// block is not in cache, and only the store misses.
CompactEvents::Record* CompactEvents::Append(uint32_t g) {
  Group& group = groups_[g];
  if (group.next == group.end && !AddBlock(&group)) return nullptr;
  ++size_;
  return group.next++;
}

bool CompactEvents::AddBlock(Group* group) {
  const uint64_t capacity =
      group->last == nullptr
          ? kFirstBlockRecords
          : std::min(2 * group->last->capacity, kMaxBlockRecords);
  auto* block =
      static_cast<Block*>(Allocate(sizeof(Block) + capacity * sizeof(Record)));
  if (block == nullptr) return false;
  *block = {nullptr, capacity};
  (group->last == nullptr ? group->first : group->last->next) = block;
  group->last = block;
  group->next = block->records();
  group->end = group->next + capacity;
  return true;
}

absl::Status CompactEvents::Add(const v1::Event& e, size_t input,
                                int64_t line) {
  if (absl::Status s = CheckPosition(input, line); !s.ok()) return s;
  const uint32_t job = Intern(e.job_id(), &last_job_);
  Record record;
  if (!Fill(e, input, line, &record)) return OutOfMemory();
  return Put(record, e.has_heartbeat() ? 0 : job);
}

// What Add() of the step's event does, in the same order (job, host, then
// attempt interned), with the record filled as Fill() fills it.
absl::Status CompactEvents::AddStep(const codec::PlainStep& s, size_t input,
                                    int64_t line) {
  if (!IsInlineTime(s.seconds)) {
    v1::Event e;
    codec::PlainStepToEvent(s, &e);
    return Add(e, input, line);
  }
  if (absl::Status st = CheckPosition(input, line); !st.ok()) return st;
  const uint32_t job = Intern(s.job_id, &last_job_);
  const Record record = {TimeNanos(s.seconds, s.nanos),
                         s.step,
                         {nullptr},
                         static_cast<uint32_t>(line),
                         Intern(s.host, &last_host_),
                         Intern(s.attempt, &last_attempt_),
                         static_cast<uint16_t>(input),
                         step_rank_,
                         kInlineStep};
  return Put(record, job);
}

absl::Status CompactEvents::Put(const Record& r, uint32_t g) {
  Record* at = Append(g);
  if (at == nullptr) return OutOfMemory();
  Store(r, at);
  if (size_ == 1 || r.time_ns > latest_ns_) latest_ns_ = r.time_ns;
  return absl::OkStatus();
}

// Interns the host and the attempt (after the job: ids are given in order
// of first use). False if out of memory.
bool CompactEvents::Fill(const v1::Event& e, size_t input, int64_t line,
                         Record* r) {
  *r = {TimeNanos(e.time().seconds(), e.time().nanos()),
        0,
        {nullptr},
        static_cast<uint32_t>(line),
        Intern(e.host(), &last_host_),
        Intern(e.attempt(), &last_attempt_),
        static_cast<uint16_t>(input),
        static_cast<uint8_t>(core::KindRank(e)),
        0};
  if (!IsInlineStep(e)) {
    auto* copy = google::protobuf::Arena::CreateMessage<v1::Event>(&arena_);
    copy->CopyFrom(e);
    r->event = copy;
    return true;
  }
  r->flags = kInlineStep;
  r->step = e.step().step();
  if (AllPositiveZero(e.step())) return true;
  r->amounts = CopyAmounts(e.step());
  return r->amounts != nullptr;
}

// In a log of interleaved jobs, `at` (the end of another job's block) is
// not in cache, and storing to it at once stalls; so the store waits for
// the next Add() while the line is fetched.
void CompactEvents::Store(const Record& r, Record* at) {
  FlushPending();
  __builtin_prefetch(at, 1);
  __builtin_prefetch(reinterpret_cast<char*>(at) + sizeof(Record) - 1, 1);
  pending_ = r;
  pending_at_ = at;
}

void CompactEvents::FlushPending() {
  if (pending_at_ != nullptr) *pending_at_ = pending_;
  pending_at_ = nullptr;
}

const CompactEvents::Amounts* CompactEvents::CopyAmounts(const v1::Step& s) {
  auto* amounts = static_cast<Amounts*>(Allocate(sizeof(Amounts)));
  if (amounts != nullptr) {
    *amounts = {s.flops(), s.bytes(), s.input_wait_seconds(), s.idle_seconds()};
  }
  return amounts;
}

absl::Status CompactEvents::OutOfMemory() const {
  return absl::ResourceExhaustedError(
      absl::StrCat("out of memory after ", size_, " events"));
}

bool CompactEvents::Before(const Record& a, const Record& b) {
  return std::make_tuple(a.time_ns, a.rank) <
         std::make_tuple(b.time_ns, b.rank);
}

// Whether group `g` applies in addition order with nothing after as-of, as
// a log written in time order does: then it needs no list to sort.
bool CompactEvents::InOrder(const Group& g, int64_t as_of_ns) {
  const Record* previous = nullptr;
  bool in_order = true;
  ForEachRecord(g, [&](const Record& r) {
    in_order &=
        r.time_ns <= as_of_ns && (previous == nullptr || !Before(r, *previous));
    previous = &r;
  });
  return in_order;
}

// In addition order, then stably sorted.
void CompactEvents::Ordered(const Group& g, int64_t as_of_ns,
                            std::vector<const Record*>* out, int64_t* after) {
  out->clear();
  ForEachRecord(g, [&](const Record& r) {
    if (r.time_ns <= as_of_ns) {
      out->push_back(&r);
    } else {
      ++*after;
    }
  });
  std::stable_sort(
      out->begin(), out->end(),
      [](const Record* a, const Record* b) { return Before(*a, *b); });
}

// Applying job by job keeps each job's tracker in cache; in a log written
// in time order, the jobs' events interleave, and applying them in that
// order was slower (measured in BENCHMARKS.md section 1).
int64_t CompactEvents::ForEachInApplyOrder(int64_t as_of_ns, ApplyFn apply) {
  FlushPending();
  int64_t after = 0;
  std::vector<const Record*> ordered;
  for (uint32_t g = 0; g < groups_.size(); ++g) {
    auto apply_record = [&](const Record& r) {
      apply(Expand(r, g), r.input, r.line);
    };
    if (InOrder(groups_[g], as_of_ns)) {
      ForEachRecord(groups_[g], apply_record);
      continue;
    }
    Ordered(groups_[g], as_of_ns, &ordered, &after);
    for (const Record* r : ordered) apply_record(*r);
  }
  return after;
}

const v1::Event& CompactEvents::Expand(const Record& r, uint32_t group) {
  if ((r.flags & kInlineStep) == 0) return *r.event;
  SetTime(r.time_ns, step_.mutable_time());
  if (group != step_group_) {
    step_.set_job_id(strings_[group]);
    step_group_ = group;
  }
  if (r.host != step_host_) step_.set_host(strings_[step_host_ = r.host]);
  if (r.attempt != step_attempt_) {
    step_.set_attempt(strings_[step_attempt_ = r.attempt]);
  }
  v1::Step* s = step_.mutable_step();
  s->set_step(r.step);
  const Amounts a = r.amounts != nullptr ? *r.amounts : Amounts{};
  s->set_flops(a.flops);
  s->set_bytes(a.bytes);
  s->set_input_wait_seconds(a.input_wait_seconds);
  s->set_idle_seconds(a.idle_seconds);
  return step_;
}

}  // namespace goodput::report
