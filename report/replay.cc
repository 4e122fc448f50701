#include "report/replay.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "util/time_format.h"

namespace goodput::report {

namespace {

constexpr size_t kMaxReasonSize = 300;
// A decoded line takes about 100 bytes of the arena (its time and body
// submessages), so the first block holds kLinesPerArena of them.
constexpr int64_t kLinesPerArena = 1024;
constexpr size_t kDecodeBlockBytes = size_t{256} << 10;

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

// `buffer` with room for `size` bytes, keeping its first `kept` bytes. New
// memory is left uninitialized: the reads fill it, and an empty input
// touches none of it.
char* Grow(std::unique_ptr<char[]>* buffer, size_t* capacity, size_t kept,
           size_t size) {
  if (*capacity < size) {
    std::unique_ptr<char[]> bigger(new char[size]);  // uninitialized
    if (kept > 0) std::memcpy(bigger.get(), buffer->get(), kept);
    *buffer = std::move(bigger);
    *capacity = size;
  }
  return buffer->get();
}

// Calls `on_line` with each line of `in` (without its '\n'), as
// std::getline splits it, reading blocks of kReadBytes into `*buffer`, and
// `before_reuse` before the lines passed are overwritten. False on a read
// error.
bool ForEachLine(std::istream& in, std::unique_ptr<char[]>* buffer,
                 size_t* capacity,
                 absl::FunctionRef<void(absl::string_view)> on_line,
                 absl::FunctionRef<void()> before_reuse) {
  constexpr size_t kReadBytes = size_t{1} << 20;
  // Room for an unfinished line up to this long without growing, so that
  // the buffer is allocated once for nearly any input.
  constexpr size_t kLineRoom = size_t{64} << 10;
  size_t kept = 0;  // bytes of an unfinished line at the front of *buffer
  while (in) {
    char* data =
        Grow(buffer, capacity, kept, std::max(kept, kLineRoom) + kReadBytes);
    in.read(data + kept, kReadBytes);
    const size_t end = kept + static_cast<size_t>(in.gcount());
    size_t begin = 0;
    while (const void* nl = std::memchr(data + begin, '\n', end - begin)) {
      const size_t stop = static_cast<const char*>(nl) - data;
      on_line(absl::string_view(data + begin, stop - begin));
      begin = stop + 1;
    }
    kept = end - begin;
    before_reuse();
    std::memmove(data, data + begin, kept);
  }
  if (kept > 0) on_line(absl::string_view(buffer->get(), kept));
  return !in.bad();
}

}  // namespace

Replayer::Replayer(ReplayOptions options)
    : options_(std::move(options)),
      decode_block_(new char[kDecodeBlockBytes]),  // uninitialized
      decode_arena_(decode_block_.get(), kDecodeBlockBytes) {
  RenewDecoded().IgnoreError();  // nothing pending yet
}

absl::Status Replayer::RenewDecoded() {
  absl::Status status = AddPending();
  decode_arena_.Reset();
  for (v1::Event*& e : decoded_) {
    e = google::protobuf::Arena::CreateMessage<v1::Event>(&decode_arena_);
  }
  decoded_lines_ = 0;
  return status;
}

absl::Status Replayer::AddPending() {
  const int slot = next_ ^ 1;
  const Position at = pending_position_;
  switch (std::exchange(pending_, Pending::kNone)) {
    case Pending::kNone:
      break;
    case Pending::kEvent:
      return events_.Add(*decoded_[slot], at.input, at.line);
    case Pending::kPlain:
      return events_.AddStep(plain_[slot], at.input, at.line);
  }
  return absl::OkStatus();
}

absl::Status Replayer::Hold(Pending what, Position position) {
  absl::Status status = AddPending();
  pending_ = what;
  pending_position_ = position;
  next_ ^= 1;
  return status;
}

absl::Status Replayer::AddInput(std::istream& in, absl::string_view name) {
  Position position{static_cast<uint32_t>(names_.size()), 0};
  names_.emplace_back(name);
  absl::Status status;
  auto on_line = [&](absl::string_view line) {
    ++position.line;
    ++stats_.lines;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (status.ok()) status = AddLine(line, position);
  };
  auto before_reuse = [&] {
    if (status.ok()) status = AddPending();
  };
  const bool read =
      ForEachLine(in, &buffer_, &buffer_capacity_, on_line, before_reuse);
  if (status.ok()) status = AddPending();
  if (!status.ok()) return status;
  if (!read) {
    return absl::DataLossError(
        absl::StrCat(name, ":", position.line + 1, ": read error"));
  }
  return absl::OkStatus();
}

absl::Status Replayer::AddLine(absl::string_view line, Position position) {
  codec::PlainStep& plain = plain_[next_];
  if (!plain_decoder_.Decode(line, decoder_.limits(), &plain)) {
    return AddDecodedLine(line, position);
  }
  ++stats_.events;
  events_.Prefetch(plain.job_id);
  return Hold(Pending::kPlain, position);
}

absl::Status Replayer::AddDecodedLine(absl::string_view line,
                                      Position position) {
  if (++decoded_lines_ > kLinesPerArena) {
    if (absl::Status s = RenewDecoded(); !s.ok()) return s;
  }
  v1::Event* decoded = decoded_[next_];
  absl::Status status = decoder_.DecodeLine(line, decoded);
  if (absl::IsNotFound(status)) return absl::OkStatus();  // blank line
  if (!status.ok()) {
    AddError(position, status.message());
    return absl::OkStatus();
  }
  ++stats_.events;
  events_.Prefetch(decoded->job_id());
  return Hold(Pending::kEvent, position);
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
  int64_t as_of =
      options_.as_of_ns ? *options_.as_of_ns : events_.LatestTimeNanos();
  if (options_.config.since_ns > as_of) {
    return absl::InvalidArgumentError(
        absl::StrCat("since (", FormatRfc3339(options_.config.since_ns),
                     ") is after as-of (", FormatRfc3339(as_of), ")"));
  }
  core::FleetTracker tracker(&options_.config);
  Apply(as_of, &tracker);
  return ReplayResult{tracker.Report(as_of), SortedErrors(), stats_};
}

void Replayer::Apply(int64_t as_of_ns, core::FleetTracker* tracker) {
  stats_.after_as_of = events_.ForEachInApplyOrder(
      as_of_ns, [&](const v1::Event& e, uint32_t input, int64_t line) {
        absl::StatusOr<core::ApplyResult> applied = tracker->Apply(e);
        if (!applied.ok()) {
          AddError({input, line}, applied.status().message());
        } else if (*applied == core::ApplyResult::kDuplicate) {
          ++stats_.duplicates;
        }
      });
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
