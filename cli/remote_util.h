#ifndef GOODPUT_CLI_REMOTE_UTIL_H_
#define GOODPUT_CLI_REMOTE_UTIL_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cli/command.h"
#include "cli/tls_flags.h"
#include "google/protobuf/timestamp.pb.h"
#include "grpcpp/channel.h"
#include "util/flags.h"

namespace goodput::cli {

// Helpers shared by the goodputctl commands that talk to a server
// (--server). Stateless functions.

// How long a query may take.
inline constexpr absl::Duration kQueryTimeout = absl::Seconds(60);

// Parses `args` with `parser`; on --help prints `usage` + flags; requires
// --server. Returns an exit code to stop with, or nullopt to go on.
std::optional<int> ParseOrExit(const std::string& prefix,
                               const std::string& usage, FlagParser& parser,
                               const bool& help,
                               const std::vector<std::string>& args,
                               std::vector<std::string>* positional,
                               CommandContext& context);

// A channel to `server` with the global --tls_* and --auth_token_file
// flags in `tls` (docs/security.md), whose own reconnect backoff stays
// short: the sender does its own backoff, and a restarted server is found
// quickly. An error names the bad flag.
absl::StatusOr<std::shared_ptr<grpc::Channel>> ConnectTo(
    const std::string& server, const TlsFlagValues& tls);

// ConnectTo(--server, the TLS flags) of `context`; --server must be set.
absl::StatusOr<std::shared_ptr<grpc::Channel>> Connect(
    const CommandContext& context);

// Parses an RFC 3339 flag value `v` (if given) into `ts`; an error names
// the flag.
absl::Status TimeFlag(const char* flag, const std::optional<std::string>& v,
                      google::protobuf::Timestamp* ts);

}  // namespace goodput::cli

#endif  // GOODPUT_CLI_REMOTE_UTIL_H_
