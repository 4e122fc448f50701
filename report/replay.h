#ifndef GOODPUT_REPORT_REPLAY_H_
#define GOODPUT_REPORT_REPLAY_H_

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "codec/line_decoder.h"
#include "core/config.h"
#include "core/report.h"
#include "proto/event.pb.h"

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
// replay). Reads every input fully, decoding each line (codec::LineDecoder)
// and remembering good events with their NAME:LINE; then, in Finish(),
// leaves out events after as-of, sorts the rest into apply order
// (core::SortForApply: by time, kind, then input order) and applies them to
// a core::FleetTracker. Memory is all good events. Owns its copies of the
// events; does not keep the streams. Not thread-safe; single use.
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

  // A short event line is about 70 bytes; reserving one event per 64
  // bytes of a seekable input keeps the vectors from moving every event
  // as they grow (a fifth of a large replay's time).
  static constexpr size_t kMinLineBytes = 64;
  void ReserveFor(std::istream& in);
  void AddLine(absl::string_view line, Position position);
  void AddError(Position position, absl::string_view reason);
  // Indices of the events at or before `as_of_ns`, in apply order.
  std::vector<uint32_t> ApplyOrder(int64_t as_of_ns);
  int64_t DefaultAsOf() const;
  std::vector<std::string> SortedErrors();

  ReplayOptions options_;
  codec::LineDecoder decoder_;
  std::vector<std::string> names_;
  std::vector<v1::Event> events_;
  std::vector<Position> positions_;  // parallel to events_
  std::vector<Error> errors_;
  ReplayStats stats_;
  bool finished_ = false;
};

}  // namespace goodput::report

#endif  // GOODPUT_REPORT_REPLAY_H_
