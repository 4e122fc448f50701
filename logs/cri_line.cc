#include "logs/cri_line.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "util/time_format.h"

namespace goodput::logs {
namespace {

// The next space-separated field of `*rest`, which loses it and the space.
absl::string_view NextField(absl::string_view* rest) {
  size_t space = rest->find(' ');
  absl::string_view field = rest->substr(0, space);
  rest->remove_prefix(space == absl::string_view::npos ? rest->size()
                                                       : space + 1);
  return field;
}

absl::Status Bad(absl::string_view field, absl::string_view value) {
  return absl::InvalidArgumentError(
      absl::StrCat("CRI log line: bad ", field, " '", value.substr(0, 64),
                   "' (want \"TIME STREAM P|F MESSAGE\")"));
}

}  // namespace

absl::StatusOr<bool> CriJoiner::Add(absl::string_view raw, std::string* line,
                                    int64_t* time_ns) {
  absl::string_view rest = raw;
  absl::string_view time = NextField(&rest);
  absl::StatusOr<int64_t> ns = ParseRfc3339(time);
  if (!ns.ok()) return Bad("time", time);
  absl::string_view stream = NextField(&rest);
  if (stream != "stdout" && stream != "stderr") return Bad("stream", stream);
  absl::string_view tag = NextField(&rest);
  if (tag != "P" && tag != "F") return Bad("tag", tag);
  if (pending_time_ns_ < 0) pending_time_ns_ = *ns;
  size_t room = max_bytes_ - std::min(max_bytes_, pending_.size());
  pending_.append(rest.data(), std::min(room, rest.size()));
  if (tag == "P") return false;
  line->swap(pending_);
  pending_.clear();
  *time_ns = pending_time_ns_;
  pending_time_ns_ = -1;
  return true;
}

}  // namespace goodput::logs
