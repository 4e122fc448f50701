// AgentFlags: goodput-agent's command line (SPEC section 6) as a plain
// value, with its parser and usage text. No global state (unlike absl
// flags), so tests parse freely. Thread-compatible.
#ifndef GOODPUT_AGENT_AGENT_FLAGS_H_
#define GOODPUT_AGENT_AGENT_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "util/grpc_credentials.h"
#include "util/logger.h"

namespace goodput::agent {

struct AgentFlags {
  bool help = false;
  bool version = false;     // --version
  std::string server;       // HOST:PORT[,HOST:PORT...] shards (required)
  std::string socket_path;  // Unix socket for JSON Lines (required)
  std::string spool_dir;    // spool and identity (required)
  std::string host;         // set on events; empty = gethostname()
  std::string metrics_address = "127.0.0.1:7702";  // empty = no HTTP
  int64_t chips = 0;                               // > 0: send heartbeats
  std::string accelerator;                         // required with chips
  absl::Duration heartbeat_interval = absl::Seconds(60);
  size_t batch_events = 500;
  // Serialized bytes per batch at most; below goodputd's --max_batch_bytes
  // (4 MiB by default), which refuses a larger batch.
  uint64_t batch_bytes = uint64_t{1} << 20;
  absl::Duration batch_delay = absl::Milliseconds(200);
  uint64_t max_spool_bytes = uint64_t{1} << 30;
  size_t max_in_flight = 8;
  size_t max_line_bytes = size_t{1} << 20;
  size_t max_connections = 256;
  // A socket client with no bytes this long is closed (it reconnects).
  absl::Duration client_idle_timeout = absl::Minutes(5);
  ClientTlsFlags tls;  // --tls_ca, --tls_cert, --tls_key, --auth_token_file
  std::string metrics_basic_auth_file;  // "user:password" lines
  std::string client_spool_dir;  // client spool files to ingest; empty: off
  Logger::Format log_format = Logger::Format::kText;  // --log_format
  // Training logs to follow (docs/adapters.md, "From logs"); empty: off.
  std::string tail;         // glob of log files
  std::string log_profile;  // built-in name or YAML file (needs --tail)
  std::string tail_job_id;  // RE2 with (?P<job_id>...) on the path
  std::string tail_state;   // offsets; default SPOOL_DIR/tail-state
  std::string tail_format = "plain";  // or "cri" (Kubernetes container logs)
};

// Parses `args` (without the program name): "--name=value" or
// "--name value"; "--help" or "-h"; "--version"; "--flagfile=PATH" (util/
// flag_file.h: its flags first, so the command line overrides them). Errors
// are one line naming the flag (and the file and line for a file's flag).
absl::StatusOr<AgentFlags> ParseAgentFlags(
    const std::vector<std::string>& args);

// Usage and one line per flag, for --help.
std::string AgentUsage();

// "1GiB", "512MiB", "64KiB", "10MB", "1000": bytes.
absl::StatusOr<uint64_t> ParseBytes(absl::string_view text);

}  // namespace goodput::agent

#endif  // GOODPUT_AGENT_AGENT_FLAGS_H_
