#ifndef GOODPUT_CLI_REMOTE_UTIL_H_
#define GOODPUT_CLI_REMOTE_UTIL_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "google/protobuf/timestamp.pb.h"
#include "grpcpp/channel.h"

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

// A channel to --server whose own reconnect backoff stays short: the
// sender does its own backoff, and a restarted server is found quickly.
std::shared_ptr<grpc::Channel> Connect(const CommandContext& context);
// The same channel to `address` (one shard of a --server list).
std::shared_ptr<grpc::Channel> Connect(const std::string& address);

// Parses an RFC 3339 flag value `v` (if given) into `ts`; an error names
// the flag.
absl::Status TimeFlag(const char* flag, const std::optional<std::string>& v,
                      google::protobuf::Timestamp* ts);

}  // namespace goodput::cli

#endif  // GOODPUT_CLI_REMOTE_UTIL_H_
