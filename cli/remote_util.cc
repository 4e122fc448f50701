#include "cli/remote_util.h"

#include "absl/strings/str_cat.h"
#include "grpcpp/create_channel.h"
#include "util/grpc_credentials.h"
#include "util/proto_time.h"
#include "util/time_format.h"

namespace goodput::cli {

std::optional<int> ParseOrExit(const std::string& prefix,
                               const std::string& usage, FlagParser& parser,
                               const bool& help,
                               const std::vector<std::string>& args,
                               std::vector<std::string>* positional,
                               CommandContext& context) {
  if (auto code = ParseCommandLine(prefix, usage, "", parser, help, args,
                                   positional, context)) {
    return code;
  }
  if (!context.server) {
    return UsageError(context, prefix, "--server=HOST:PORT is required");
  }
  return std::nullopt;
}

// A channel whose own reconnect backoff stays short: the sender does its
// own backoff, and a restarted server is found quickly.
// GRPC_ARG_MIN_RECONNECT_BACKOFF_MS stays at its default: gRPC uses it as
// the minimum time a connection attempt may take (20 s), and at 100 ms a
// loaded machine failed queries with "connection attempt timed out before
// receiving SETTINGS frame".
absl::StatusOr<std::shared_ptr<grpc::Channel>> ConnectTo(
    const std::string& server, const TlsFlagValues& tls) {
  ClientTlsFlags flags{tls.ca.value_or(""), tls.cert.value_or(""),
                       tls.key.value_or(""), tls.server_name.value_or(""),
                       tls.token_file.value_or("")};
  auto credentials = MakeChannelCredentials(flags);
  if (!credentials.ok()) return credentials.status();
  grpc::ChannelArguments args;
  ApplyTlsChannelArgs(flags, &args);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  args.SetMaxReceiveMessageSize(-1);  // a 10k-job report is over 4 MiB
  return grpc::CreateCustomChannel(server, *credentials, args);
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> Connect(
    const CommandContext& context) {
  return ConnectTo(*context.server, context.tls);
}

// Parses an RFC 3339 flag into `ts`; an error names the flag.
absl::Status TimeFlag(const char* flag, const std::optional<std::string>& v,
                      google::protobuf::Timestamp* ts) {
  if (!v) return absl::OkStatus();
  absl::StatusOr<int64_t> ns = ParseRfc3339(*v);
  if (!ns.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", ns.status().message()));
  }
  *ts = NanosToTimestamp(*ns);
  return absl::OkStatus();
}

}  // namespace goodput::cli
