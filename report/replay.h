#ifndef GOODPUT_REPORT_REPLAY_H_
#define GOODPUT_REPORT_REPLAY_H_

#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "codec/line_decoder.h"
#include "codec/plain_step.h"
#include "core/config.h"
#include "core/fleet_tracker.h"
#include "core/report.h"
#include "google/protobuf/arena.h"
#include "proto/event.pb.h"
#include "report/compact_events.h"

namespace goodput::report {

struct ReplayOptions {
  core::Config config;              // since, stall_after, catalog, ...
  std::optional<int64_t> as_of_ns;  // default: the latest good event
};

struct ReplayStats {
  int64_t lines = 0;        // lines read, blank ones included
  int64_t events = 0;       // lines decoded into a valid event
  int64_t bad = 0;          // lines rejected by the decoder or the tracker
  int64_t duplicates = 0;   // events the tracker ignored as duplicates
  int64_t after_as_of = 0;  // events left out because they follow as-of
};

struct ReplayResult {
  core::FleetReport report;
  // "NAME:LINE: reason" per bad line, in input order (inputs in the order
  // added, lines ascending), whether the decoder or the tracker rejected it.
  std::vector<std::string> errors;
  ReplayStats stats;
};

// Offline replay of JSON Lines event logs into a fleet report (goodputctl
// replay). Reads every input fully in large blocks, decoding each line
// (codec::DecodePlainStep for the plain step lines that are nearly all of
// a log, else codec::LineDecoder: the same events either way) and keeping
// good events compactly with their NAME:LINE (CompactEvents, already
// grouped by job); then, in Finish(), leaves out events after as-of and
// applies the rest to a core::FleetTracker job by job, each job's events in
// core::SortForApply's order (by time, kind, then input order). Memory is
// about 40 bytes per good step event (the 10M-event fleet log peaks at 48
// bytes per event for the whole process). Owns its copies of the events;
// does not keep the streams. Not thread-safe; single use.
class Replayer {
 public:
  explicit Replayer(ReplayOptions options);

  // Reads `in` to its end; `name` (e.g. the file name, or "<stdin>") names
  // it in errors. Bad lines are recorded, not returned; the status is an
  // error only if reading failed.
  absl::Status AddInput(std::istream& in, absl::string_view name);

  // Applies what was read and builds the report as of the options' as-of.
  // Fails if since is after as-of, or if called twice.
  absl::StatusOr<ReplayResult> Finish();

 private:
  struct Position {
    uint32_t input;
    int64_t line;
  };
  struct Error {
    Position position;
    std::string message;
  };

  // What is decoded, not yet added to events_: nothing, decoded_[slot] or
  // plain_[slot].
  enum class Pending { kNone, kEvent, kPlain };

  absl::Status AddLine(absl::string_view line, Position position);
  // Decodes `line` with decoder_ into decoded_[next_], holding it if good.
  absl::Status AddDecodedLine(absl::string_view line, Position position);
  // Adds what is pending (if anything) to events_, and makes `what` in
  // slot next_ pending in its place.
  absl::Status Hold(Pending what, Position position);
  absl::Status AddPending();
  // Fresh decoded_ on an emptied decode arena, every kLinesPerArena lines
  // that decoder_ decodes (after adding what is pending).
  absl::Status RenewDecoded();
  void AddError(Position position, absl::string_view reason);
  void Apply(int64_t as_of_ns, core::FleetTracker* tracker);
  std::vector<std::string> SortedErrors();

  ReplayOptions options_;
  codec::LineDecoder decoder_;
  codec::PlainStepDecoder plain_decoder_;
  // The lines being decoded live on decode_arena_, whose first block is
  // decode_block_: decoding allocates its submessages there, and emptying
  // the arena now and then costs no malloc or free per line. A plain step
  // line (codec::DecodePlainStep, nearly every line of a log) skips all of
  // that and decodes into plain_, pointing into buffer_. Lines are decoded
  // alternately into slots 0 and 1, and a good one is added to events_
  // after the next line is decoded, so that its job id's place in the
  // intern table (prefetched) has come into cache by then; before buffer_
  // is reused, it is added at once.
  std::unique_ptr<char[]> decode_block_;
  google::protobuf::Arena decode_arena_;
  v1::Event* decoded_[2] = {nullptr, nullptr};
  codec::PlainStep plain_[2];
  int next_ = 0;                      // the slot the next line goes to
  Pending pending_ = Pending::kNone;  // in slot next_ ^ 1
  Position pending_position_{0, 0};   // of what is pending
  int64_t decoded_lines_ = 0;         // since decode_arena_ was emptied
  std::unique_ptr<char[]> buffer_;    // of AddInput's reads
  size_t buffer_capacity_ = 0;
  std::vector<std::string> names_;
  CompactEvents events_;
  std::vector<Error> errors_;
  ReplayStats stats_;
  bool finished_ = false;
};

}  // namespace goodput::report

#endif  // GOODPUT_REPORT_REPLAY_H_
