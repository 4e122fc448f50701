#include "util/logger.h"

#include <unistd.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "util/time_format.h"

namespace goodput {
namespace {

const char* LevelName(Logger::Level level) {
  switch (level) {
    case Logger::Level::kWarning:
      return "warning";
    case Logger::Level::kError:
      return "error";
    default:
      return "info";
  }
}

// `text` as a JSON string literal (RFC 8259: quote, backslash and control
// characters escaped; other bytes as they are).
std::string JsonString(absl::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      absl::StrAppend(&out, "\\", std::string(1, c));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20) {
      absl::StrAppendFormat(&out, "\\u%04x", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace

absl::StatusOr<Logger::Format> Logger::ParseFormat(absl::string_view text) {
  if (text == "text") return Format::kText;
  if (text == "json") return Format::kJson;
  return absl::InvalidArgumentError(
      absl::StrCat("--log_format: want text or json, got \"", text, "\""));
}

std::string Logger::Line(Level level, absl::string_view message,
                         const Fields& fields) const {
  if (format_ == Format::kText) {
    std::string line = absl::StrCat(component_, ": ");
    if (level == Level::kWarning) absl::StrAppend(&line, "warning: ");
    // Fields repeat what the message says, for machines: text leaves them
    // out, so its lines stay exactly what scripts and tests already parse.
    return absl::StrCat(line, message, "\n");
  }
  std::string json =
      absl::StrCat("{\"time\":", JsonString(FormatRfc3339(clock_->NowNanos())),
                   ",\"level\":\"", LevelName(level),
                   "\",\"component\":", JsonString(component_),
                   ",\"message\":", JsonString(message), ",\"fields\":{");
  for (size_t i = 0; i < fields.size(); ++i) {
    absl::StrAppend(&json, i == 0 ? "" : ",", JsonString(fields[i].first), ":",
                    JsonString(fields[i].second));
  }
  return json + "}}\n";
}

void Logger::Log(Level level, absl::string_view message,
                 const Fields& fields) const {
  const std::string line = Line(level, message, fields);
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n <= 0) return;  // nowhere to report a failing log
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace goodput
