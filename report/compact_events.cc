#include "report/compact_events.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/config.h"
#include "core/event_order.h"

namespace goodput::report {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

// `bytes` (a multiple of kHugePage) of memory aligned to a huge page and
// advised to be backed by transparent huge pages: a replay touches every
// page once, and 4 KiB pages cost a fault each.
// Null if out of memory.
void* AllocateHugePages(size_t bytes) {
  void* p = std::aligned_alloc(kHugePage, bytes);
  if (p != nullptr) madvise(p, bytes, MADV_HUGEPAGE);  // best effort
  return p;
}

bool IsInlineStep(const v1::Event& e) { return e.has_step(); }

}  // namespace

void CompactEvents::ChunkFree::operator()(Record* chunk) const {
  std::free(chunk);
}

CompactEvents::CompactEvents() {
  strings_.emplace_back();
  ids_.emplace("", 0);
  step_.mutable_step();
}

CompactEvents::~CompactEvents() = default;

uint32_t CompactEvents::Intern(absl::string_view s, uint32_t* last) {
  if (strings_[*last] == s) return *last;  // most lines repeat the last
  auto it = ids_.find(s);
  if (it != ids_.end()) return *last = it->second;
  const uint32_t id = static_cast<uint32_t>(strings_.size());
  strings_.emplace_back(s);
  ids_.emplace(strings_.back(), id);
  return *last = id;
}

CompactEvents::Record* CompactEvents::Append() {
  if (size_ == chunks_.size() * kChunkRecords) {
    void* chunk = AllocateHugePages(kChunkBytes);
    if (chunk == nullptr) return nullptr;
    chunks_.emplace_back(static_cast<Record*>(chunk));
  }
  Record* r = &chunks_.back().get()[size_ % kChunkRecords];
  ++size_;
  return r;
}

absl::Status CompactEvents::Add(const v1::Event& e, size_t input,
                                int64_t line) {
  if (input > std::numeric_limits<uint16_t>::max() || line < 0 ||
      line > std::numeric_limits<uint32_t>::max()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "replay holds at most 65536 inputs of 2^32 lines; got input ",
        input + 1, " line ", line));
  }
  Record* r = Append();
  if (r == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory after ", size_, " events"));
  }
  r->seconds = e.time().seconds();
  r->nanos = e.time().nanos();
  r->job = Intern(e.job_id(), &last_job_);
  r->host = Intern(e.host(), &last_host_);
  r->attempt = Intern(e.attempt(), &last_attempt_);
  r->line = static_cast<uint32_t>(line);
  r->input = static_cast<uint16_t>(input);
  r->rank = static_cast<uint8_t>(core::KindRank(e));
  r->flags = e.has_heartbeat() ? kHeartbeat : 0;
  if (IsInlineStep(e)) {
    r->flags |= kInlineStep;
    const v1::Step& s = e.step();
    r->step = {s.step(), s.flops(), s.bytes(), s.input_wait_seconds(),
               s.idle_seconds()};
  } else {
    v1::Event* copy =
        google::protobuf::Arena::CreateMessage<v1::Event>(&arena_);
    copy->CopyFrom(e);
    r->event = copy;
  }
  return absl::OkStatus();
}

int64_t CompactEvents::time_ns(size_t i) const {
  const Record& r = At(i);
  return r.seconds * core::kNanosPerSecond + r.nanos;
}

const v1::Event& CompactEvents::Get(size_t i) { return Expand(At(i)); }

void CompactEvents::Prefetch(size_t i) const {
  const char* record = reinterpret_cast<const char*>(&At(i));
  __builtin_prefetch(record);
  __builtin_prefetch(record + sizeof(Record) - 1);
}

const v1::Event& CompactEvents::Expand(const Record& r) {
  if ((r.flags & kInlineStep) == 0) return *r.event;
  step_.mutable_time()->set_seconds(r.seconds);
  step_.mutable_time()->set_nanos(r.nanos);
  step_.set_job_id(strings_[r.job]);
  step_.set_host(strings_[r.host]);
  step_.set_attempt(strings_[r.attempt]);
  v1::Step* s = step_.mutable_step();
  s->set_step(r.step.step);
  s->set_flops(r.step.flops);
  s->set_bytes(r.step.bytes);
  s->set_input_wait_seconds(r.step.input_wait_seconds);
  s->set_idle_seconds(r.step.idle_seconds);
  return step_;
}

uint32_t CompactEvents::Group(const Record& r) const {
  return (r.flags & kHeartbeat) != 0 ? 0 : r.job;
}

bool CompactEvents::Before(uint32_t a, uint32_t b) const {
  return std::make_tuple(time_ns(a), At(a).rank, a) <
         std::make_tuple(time_ns(b), At(b).rank, b);
}

// Applying job by job keeps each job's tracker in cache; in a log written
// in time order, the jobs' events interleave, and applying them in that
// order was slower (measured in BENCHMARKS.md section 1).
std::vector<uint32_t> CompactEvents::ApplyOrder(int64_t as_of_ns,
                                                int64_t* after) const {
  std::vector<uint32_t> order;
  order.reserve(size_);
  for (size_t i = 0; i < size_; ++i) {
    if (time_ns(i) <= as_of_ns) order.push_back(static_cast<uint32_t>(i));
  }
  *after = static_cast<int64_t>(size_ - order.size());
  GroupAndSort(&order);
  return order;
}

// A counting sort by group (each group keeps addition order), then a sort
// of each group that is not in order already: a log of one job after
// another needs no sort of its groups.
void CompactEvents::GroupAndSort(std::vector<uint32_t>* order) const {
  std::vector<uint32_t> next(strings_.size() + 1, 0);
  for (uint32_t i : *order) ++next[Group(At(i)) + 1];
  for (size_t g = 1; g < next.size(); ++g) next[g] += next[g - 1];
  std::vector<uint32_t> grouped(order->size());
  for (uint32_t i : *order) grouped[next[Group(At(i))]++] = i;
  auto before = [this](uint32_t a, uint32_t b) { return Before(a, b); };
  uint32_t begin = 0;  // next[g] is now the end of group g
  for (size_t g = 0; g + 1 < next.size(); ++g) {
    auto first = grouped.begin() + begin, last = grouped.begin() + next[g];
    if (!std::is_sorted(first, last, before)) std::sort(first, last, before);
    begin = next[g];
  }
  *order = std::move(grouped);
}

}  // namespace goodput::report
