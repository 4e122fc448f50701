// CriJoiner: the Kubernetes container log format (CRI, the files under
// /var/log/pods): "<RFC 3339 time> <stdout|stderr> <P|F> <message>", where
// P marks a partial line that the next lines continue and F the last part.
// Joins the parts back into one line with the first part's time, keeping
// at most max_bytes of it. Owns the pending partial text; not thread-safe.
#ifndef GOODPUT_LOGS_CRI_LINE_H_
#define GOODPUT_LOGS_CRI_LINE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace goodput::logs {

class CriJoiner {
 public:
  explicit CriJoiner(size_t max_bytes = 64 * 1024) : max_bytes_(max_bytes) {}

  // Takes one line of the file (without its newline). Returns true with the
  // whole message in *line and its time in *time_ns when `raw` completes
  // one; false while parts are pending; InvalidArgument naming the field
  // (time, stream or tag) for a line not in the format.
  absl::StatusOr<bool> Add(absl::string_view raw, std::string* line,
                           int64_t* time_ns);

 private:
  size_t max_bytes_;
  std::string pending_;
  int64_t pending_time_ns_ = -1;  // -1: nothing pending
};

}  // namespace goodput::logs

#endif  // GOODPUT_LOGS_CRI_LINE_H_
