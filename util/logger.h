#ifndef GOODPUT_UTIL_LOGGER_H_
#define GOODPUT_UTIL_LOGGER_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "util/clock.h"

namespace goodput {

// Logger: the one log-line writer of goodputd and goodput-agent (Debian's
// Abseil has no absl/log). Text, the default, is "COMPONENT: message" (a
// warning: "COMPONENT: warning: message"), without the fields (callers put
// what matters into the message too, and scripts parse these lines); JSON
// (--log_format=json, for collectors) is one object per line: {"time":"<RFC
// 3339, UTC, from the clock>","level":
// "info|warning|error","component":"...","message":"...","fields":{...}}.
// Each line goes out in a single write(2), so lines from different threads
// never interleave. A small value: copy it into each component; it does not
// own the clock (only JSON reads it), which must outlive every copy.
// Thread-safe.
class Logger {
 public:
  enum class Format { kText, kJson };
  enum class Level { kInfo, kWarning, kError };
  using Fields = std::vector<std::pair<std::string, std::string>>;

  // Text lines on stderr.
  explicit Logger(std::string component)
      : Logger(std::move(component), Format::kText, nullptr) {}
  // `clock` may be null for kText only. `fd` is where lines go.
  Logger(std::string component, Format format, Clock* clock, int fd = 2)
      : component_(std::move(component)),
        format_(format),
        clock_(clock),
        fd_(fd) {}

  // "text" or "json"; else an error naming --log_format and the value.
  static absl::StatusOr<Format> ParseFormat(absl::string_view text);

  void Info(absl::string_view message, const Fields& fields = {}) const {
    Log(Level::kInfo, message, fields);
  }
  void Warning(absl::string_view message, const Fields& fields = {}) const {
    Log(Level::kWarning, message, fields);
  }
  void Error(absl::string_view message, const Fields& fields = {}) const {
    Log(Level::kError, message, fields);
  }
  void Log(Level level, absl::string_view message, const Fields& fields) const;

  // The line Log would write (with its newline).
  std::string Line(Level level, absl::string_view message,
                   const Fields& fields) const;

 private:
  std::string component_;
  Format format_;
  Clock* clock_;
  int fd_;
};

}  // namespace goodput

#endif  // GOODPUT_UTIL_LOGGER_H_
