#include "report/replay.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/event_order.h"
#include "core/fleet_tracker.h"
#include "util/time_format.h"

namespace goodput::report {

namespace {

constexpr size_t kMaxReasonSize = 300;

// `reason` on one line (a decoder may quote the input over several lines),
// cut to kMaxReasonSize characters.
std::string OneLine(absl::string_view reason) {
  std::vector<absl::string_view> parts =
      absl::StrSplit(reason, absl::ByAnyChar("\r\n"), absl::SkipWhitespace());
  for (absl::string_view& part : parts) part = absl::StripAsciiWhitespace(part);
  std::string line = absl::StrJoin(parts, " ");
  if (line.size() > kMaxReasonSize)
    line = line.substr(0, kMaxReasonSize) + "...";
  return line;
}

}  // namespace

Replayer::Replayer(ReplayOptions options) : options_(std::move(options)) {}

absl::Status Replayer::AddInput(std::istream& in, absl::string_view name) {
  Position position{static_cast<uint32_t>(names_.size()), 0};
  names_.emplace_back(name);
  ReserveFor(in);
  std::string line;
  while (std::getline(in, line)) {
    ++position.line;
    ++stats_.lines;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    AddLine(line, position);
  }
  if (in.bad()) {
    return absl::DataLossError(
        absl::StrCat(name, ":", position.line + 1, ": read error"));
  }
  return absl::OkStatus();
}

void Replayer::ReserveFor(std::istream& in) {
  const std::streampos here = in.tellg();
  if (here < 0 || !in.seekg(0, std::ios::end)) {
    in.clear();  // not seekable (stdin): grow as we go
    return;
  }
  const std::streamoff bytes = in.tellg() - here;
  in.seekg(here);
  const size_t lines = static_cast<size_t>(bytes) / kMinLineBytes;
  events_.reserve(events_.size() + lines);
  positions_.reserve(positions_.size() + lines);
}

void Replayer::AddLine(absl::string_view line, Position position) {
  v1::Event event;
  absl::Status status = decoder_.DecodeLine(line, &event);
  if (absl::IsNotFound(status)) return;  // blank line
  if (!status.ok()) {
    AddError(position, status.message());
    return;
  }
  ++stats_.events;
  events_.push_back(std::move(event));
  positions_.push_back(position);
}

void Replayer::AddError(Position position, absl::string_view reason) {
  ++stats_.bad;
  errors_.push_back(
      {position, absl::StrCat(names_[position.input], ":", position.line, ": ",
                              OneLine(reason))});
}

absl::StatusOr<ReplayResult> Replayer::Finish() {
  if (finished_) return absl::FailedPreconditionError("Finish called twice");
  finished_ = true;
  int64_t as_of = options_.as_of_ns ? *options_.as_of_ns : DefaultAsOf();
  if (options_.config.since_ns > as_of) {
    return absl::InvalidArgumentError(
        absl::StrCat("since (", FormatRfc3339(options_.config.since_ns),
                     ") is after as-of (", FormatRfc3339(as_of), ")"));
  }
  core::FleetTracker tracker(&options_.config);
  for (uint32_t i : ApplyOrder(as_of)) {
    absl::StatusOr<core::ApplyResult> applied = tracker.Apply(events_[i]);
    if (!applied.ok()) {
      AddError(positions_[i], applied.status().message());
    } else if (*applied == core::ApplyResult::kDuplicate) {
      ++stats_.duplicates;
    }
  }
  return ReplayResult{tracker.Report(as_of), SortedErrors(), stats_};
}

int64_t Replayer::DefaultAsOf() const {
  int64_t latest = 0;
  for (size_t i = 0; i < events_.size(); ++i) {
    int64_t t = core::EventTimeNanos(events_[i]);
    if (i == 0 || t > latest) latest = t;
  }
  return latest;
}

std::vector<uint32_t> Replayer::ApplyOrder(int64_t as_of_ns) {
  std::vector<uint32_t> order;
  order.reserve(events_.size());
  for (uint32_t i = 0; i < events_.size(); ++i) {
    if (core::EventTimeNanos(events_[i]) <= as_of_ns) {
      order.push_back(i);
    } else {
      ++stats_.after_as_of;
    }
  }
  core::SortForApply(events_, &order);
  return order;
}

std::vector<std::string> Replayer::SortedErrors() {
  std::stable_sort(errors_.begin(), errors_.end(),
                   [](const Error& a, const Error& b) {
                     return std::make_pair(a.position.input, a.position.line) <
                            std::make_pair(b.position.input, b.position.line);
                   });
  std::vector<std::string> out;
  out.reserve(errors_.size());
  for (Error& e : errors_) out.push_back(std::move(e.message));
  return out;
}

}  // namespace goodput::report
