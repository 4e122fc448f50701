#ifndef GOODPUT_REPORT_COMPACT_EVENTS_H_
#define GOODPUT_REPORT_COMPACT_EVENTS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/arena.h"
#include "proto/event.pb.h"

namespace goodput::report {

// The decoded events of an offline replay, held compactly: one 72-byte
// record per event in 4 MiB chunks on transparent huge pages (no
// per-event heap objects, nothing moves as it grows), job ids, hosts and
// attempts interned, and step events (nearly all of a log) stored inline;
// any other event is a copy on a protobuf arena. Get() gives each event
// back as the same v1::Event. Owns all of it. Not thread-safe.
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

  size_t size() const { return size_; }

  // Event `i` as added. The reference stays valid until the next Get().
  const v1::Event& Get(size_t i);
  // Asks the CPU to load event `i`, e.g. a few events ahead of Get().
  void Prefetch(size_t i) const;
  uint32_t input(size_t i) const { return At(i).input; }
  int64_t line(size_t i) const { return At(i).line; }
  // core::EventTimeNanos of event `i`.
  int64_t time_ns(size_t i) const;

  // Indices of the events at or before `as_of_ns` in an apply order that
  // gives core::SortForApply's result per job: grouped by job (heartbeats
  // together), each group by time, kind rank (core::KindRank), then
  // addition order. `*after` counts the events left out.
  std::vector<uint32_t> ApplyOrder(int64_t as_of_ns, int64_t* after) const;

 private:
  struct StepFields {
    int64_t step;
    double flops;
    double bytes;
    double input_wait_seconds;
    double idle_seconds;
  };
  struct Record {
    int64_t seconds;
    int32_t nanos;
    uint32_t job;      // interned job_id
    uint32_t host;     // interned host
    uint32_t attempt;  // interned attempt
    uint32_t line;
    uint16_t input;
    uint8_t rank;   // core::KindRank
    uint8_t flags;  // kInlineStep | kHeartbeat
    union {
      StepFields step;         // kInlineStep
      const v1::Event* event;  // otherwise, on arena_
    };
  };
  static constexpr uint8_t kInlineStep = 1;
  static constexpr uint8_t kHeartbeat = 2;
  struct ChunkFree {
    void operator()(Record* chunk) const;
  };
  static constexpr size_t kChunkBytes = size_t{4} << 20;
  static constexpr size_t kChunkRecords = kChunkBytes / sizeof(Record);

  const Record& At(size_t i) const {
    return chunks_[i / kChunkRecords].get()[i % kChunkRecords];
  }
  Record* Append();
  // The id of `s`; `*last` is the id this call site interned last.
  uint32_t Intern(absl::string_view s, uint32_t* last);
  // The group of `r` in ApplyOrder: its job, or 0 (as "") for heartbeats.
  uint32_t Group(const Record& r) const;
  // Whether event `a` applies before event `b` in core::SortForApply.
  bool Before(uint32_t a, uint32_t b) const;
  void GroupAndSort(std::vector<uint32_t>* order) const;
  const v1::Event& Expand(const Record& r);

  std::vector<std::unique_ptr<Record, ChunkFree>> chunks_;
  size_t size_ = 0;
  absl::flat_hash_map<std::string, uint32_t> ids_;
  std::vector<std::string> strings_;  // by interned id; 0 is ""
  uint32_t last_job_ = 0, last_host_ = 0, last_attempt_ = 0;
  google::protobuf::Arena arena_;
  v1::Event step_;  // Get()'s result for inline steps
};

}  // namespace goodput::report

#endif  // GOODPUT_REPORT_COMPACT_EVENTS_H_
