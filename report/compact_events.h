#ifndef GOODPUT_REPORT_COMPACT_EVENTS_H_
#define GOODPUT_REPORT_COMPACT_EVENTS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "codec/plain_step.h"
#include "google/protobuf/arena.h"
#include "proto/event.pb.h"

namespace goodput::report {

// The decoded events of an offline replay, held compactly and already
// grouped the way they apply: one 40-byte record per event, appended to its
// job's list of blocks (heartbeats and events without a job share group 0),
// so that applying reads each job's events front to back. Blocks come from
// 4 MiB chunks on transparent huge pages (no per-event heap objects,
// nothing moves as it grows); job ids, hosts and attempts are interned;
// step events (nearly all of a log) are stored inline, their time as
// nanoseconds and their four amounts only when one is not +0.0; any other
// event, or a step too far from 1970 for its time to fit, is a copy on a
// protobuf arena.
// ForEachInApplyOrder() gives each event back as the same v1::Event. Owns
// all of it. Not thread-safe.
class CompactEvents {
 public:
  CompactEvents();
  ~CompactEvents();
  CompactEvents(const CompactEvents&) = delete;
  CompactEvents& operator=(const CompactEvents&) = delete;

  // Appends a validated event read from line `line` of input `input`.
  // Fails only out of memory or past the limits of a record (65,536
  // inputs, 2^32 lines per input).
  absl::Status Add(const v1::Event& e, size_t input, int64_t line);
  // The same for the event codec::PlainStepToEvent(s) gives, without
  // building it (the strings are copied).
  absl::Status AddStep(const codec::PlainStep& s, size_t input, int64_t line);

  // Asks the CPU to load what Add() of an event with this job id looks up
  // first (the id's place in the intern table), e.g. one line ahead.
  void Prefetch(absl::string_view job_id) const { ids_.prefetch(job_id); }

  size_t size() const { return size_; }

  // The latest core::EventTimeNanos of all events; 0 if there are none.
  int64_t LatestTimeNanos() const { return latest_ns_; }

  // Calls `apply(event, input, line)` for each event at or before
  // `as_of_ns` in an order that gives core::SortForApply's result per job:
  // group by group (group 0, then jobs in order of first interning), each
  // group by time, kind rank (core::KindRank), then addition order. The
  // event reference is valid during the call only. Returns the number of
  // events left out (after as-of).
  using ApplyFn = absl::FunctionRef<void(const v1::Event& event, uint32_t input,
                                         int64_t line)>;
  int64_t ForEachInApplyOrder(int64_t as_of_ns, ApplyFn apply);

 private:
  struct Amounts {
    double flops;
    double bytes;
    double input_wait_seconds;
    double idle_seconds;
  };
  struct Record {
    int64_t time_ns;  // core::EventTimeNanos
    int64_t step;     // kInlineStep: step.step
    union {
      const Amounts* amounts;  // kInlineStep: null when all are +0.0
      const v1::Event* event;  // otherwise, on arena_
    };
    uint32_t line;
    uint32_t host;     // interned host
    uint32_t attempt;  // interned attempt
    uint16_t input;
    uint8_t rank;   // core::KindRank
    uint8_t flags;  // kInlineStep
  };
  static_assert(sizeof(Record) == 40, "a record is 40 bytes");
  // A run of one group's records; `capacity` records follow the header.
  struct Block {
    Block* next;
    uint64_t capacity;
    Record* records() { return reinterpret_cast<Record*>(this + 1); }
    const Record* records() const {
      return reinterpret_cast<const Record*>(this + 1);
    }
  };
  // A group's blocks; its last one is filled up to `next`.
  struct Group {
    Block* first = nullptr;
    Block* last = nullptr;
    Record* next = nullptr;
    Record* end = nullptr;
  };
  static constexpr uint8_t kInlineStep = 1;
  struct ChunkFree {
    void operator()(char* chunk) const;
  };

  // `bytes` (at most a chunk, a multiple of 8) from the current chunk, or
  // from a new one; null if out of memory.
  void* Allocate(size_t bytes);
  // A new record at the end of group `g`; null if out of memory.
  Record* Append(uint32_t g);
  // Gives `*group` a new last block; false if out of memory.
  bool AddBlock(Group* group);
  // Calls `f(record)` for each of group `g`'s records in addition order.
  template <typename F>
  static void ForEachRecord(const Group& g, F f) {
    for (const Block* b = g.first; b != nullptr; b = b->next) {
      const Record* end = b == g.last ? g.next : b->records() + b->capacity;
      for (const Record* r = b->records(); r != end; ++r) f(*r);
    }
  }
  // What a call site of Intern() interned last, kept here because the
  // string in strings_ is often not in cache.
  struct Last {
    uint32_t id = 0;
    std::string value;
  };
  // The id of `s`; `*last` is what this call site interned last.
  uint32_t Intern(absl::string_view s, Last* last);
  bool Fill(const v1::Event& e, size_t input, int64_t line, Record* r);
  // Appends `r` to group `g`.
  absl::Status Put(const Record& r, uint32_t g);
  // Stores `r` at `at`, or at the next Add() or FlushPending().
  void Store(const Record& r, Record* at);
  void FlushPending();
  // A copy of `s`'s amounts; null if out of memory.
  const Amounts* CopyAmounts(const v1::Step& s);
  absl::Status OutOfMemory() const;
  // Whether record `a` applies before record `b`, `a` added first.
  static bool Before(const Record& a, const Record& b);
  static bool InOrder(const Group& g, int64_t as_of_ns);
  // Group `g`'s records at or before `as_of_ns` in apply order; counts the
  // others in `*after`.
  static void Ordered(const Group& g, int64_t as_of_ns,
                      std::vector<const Record*>* out, int64_t* after);
  const v1::Event& Expand(const Record& r, uint32_t group);

  std::vector<std::unique_ptr<char, ChunkFree>> chunks_;
  size_t chunk_used_ = 0;      // bytes of chunks_.back() handed out
  std::vector<Group> groups_;  // by interned job id
  size_t size_ = 0;
  int64_t latest_ns_ = 0;
  Record pending_;                // Store()'s record, not yet stored
  Record* pending_at_ = nullptr;  // where it goes
  absl::flat_hash_map<std::string, uint32_t> ids_;
  std::vector<std::string> strings_;  // by interned id; 0 is ""
  Last last_job_, last_host_, last_attempt_;
  google::protobuf::Arena arena_;
  v1::Event step_;  // Expand()'s result for inline steps
  // The interned job id, host and attempt step_ holds.
  uint32_t step_group_ = 0, step_host_ = 0, step_attempt_ = 0;
  uint8_t step_rank_ = 0;  // core::KindRank of a step
};

}  // namespace goodput::report

#endif  // GOODPUT_REPORT_COMPACT_EVENTS_H_
