// LogLine: the agent's one logging primitive (Debian's Abseil has no
// absl/log). Writes "goodput-agent: <message>\n" to stderr with a single
// write(2), so lines from different threads never interleave. Thread-safe.
#ifndef GOODPUT_AGENT_LOG_H_
#define GOODPUT_AGENT_LOG_H_

#include "absl/strings/string_view.h"

namespace goodput::agent {

void LogLine(absl::string_view message);

}  // namespace goodput::agent

#endif  // GOODPUT_AGENT_LOG_H_
