#include "cli/emit_command.h"

#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "cli/batch_sender.h"
#include "cli/remote_util.h"
#include "clients/cpp/agent_socket.h"
#include "clients/cpp/event_json.h"
#include "clients/cpp/send_or_spool.h"
#include "codec/emit_event.h"
#include "grpcpp/create_channel.h"
#include "util/uuid.h"

namespace goodput::cli {
namespace {

constexpr char kPrefix[] = "goodputctl emit";

struct EmitArgs {
  bool help = false, print = false;
  std::string kind;
  std::optional<std::string> socket, spool_dir, server;
  codec::EmitFields fields;
};

std::string EmitHelp() {
  return absl::StrCat(
      "Usage: goodputctl emit KIND --job_id=ID [--FIELD=VALUE ...] [FLAGS]\n\n"
      "Sends one event, e.g. from a scheduler hook:\n"
      "  goodputctl emit job_submitted --job_id=j --chips=256 "
      "--accelerator=tpu-v5p --label=team=x\n"
      "  goodputctl emit allocation --job_id=j --chips=256\n"
      "  goodputctl emit interruption --job_id=j --reason=PREEMPTED "
      "[--notice]\n"
      "  goodputctl emit job_ended --job_id=j --outcome=SUCCEEDED\n"
      "  goodputctl emit exclusion --scope=FLEET --until=2026-11-22T11:00:00Z "
      "--reason=\"planned maintenance\" [--time=START]\n\n"
      "KIND: ",
      absl::StrJoin(codec::EmitKinds(), ", "),
      ".\nFields: those of KIND in proto/event.proto, plus --time=RFC3339 "
      "(default now),\n--host, --attempt, --label=KEY=VALUE (repeatable, "
      "job_submitted), and --hosts=H1,H2 (repeatable, exclusion).\n\nFlags:\n"
      "  --socket=PATH     the agent's socket (default $GOODPUT_SOCKET or ",
      client::kDefaultAgentSocket,
      ")\n  --spool_dir=DIR   client spool when the agent is down (default "
      "$GOODPUT_SPOOL_DIR or ",
      client::kDefaultClientSpoolDir,
      ")\n  --server=H:P      send to goodputd directly instead\n"
      "  --print           print the event's JSON line; send nothing\n"
      "  --help            show this help and exit\n");
}

absl::Status ParseArg(const std::string& arg, EmitArgs* out) {
  if (arg == "--help" || arg == "-h") {
    out->help = true;
  } else if (arg == "--print") {
    out->print = true;
  } else if (absl::StartsWith(arg, "--")) {
    size_t eq = arg.find('=');
    std::string name = arg.substr(2, eq == std::string::npos ? eq : eq - 2);
    std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    if (name == "socket") {
      out->socket = value;
    } else if (name == "spool_dir") {
      out->spool_dir = value;
    } else if (name == "server") {
      out->server = value;
    } else {
      out->fields.emplace_back(name, value);
    }
  } else if (out->kind.empty()) {
    out->kind = arg;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "one KIND only, got \"", out->kind, "\" and \"", arg, "\""));
  }
  return absl::OkStatus();
}

int SendToServer(const std::string& server, const v1::Event& event,
                 CommandContext& context) {
  v1::Batch batch;
  batch.set_agent_id("goodputctl-emit-" + RandomUuid().value_or("x"));
  batch.set_sequence(1);
  *batch.add_events() = event;
  auto channel = ConnectTo(server, context.tls);
  if (!channel.ok()) {
    return UsageError(context, kPrefix, channel.status().message());
  }
  auto acks =
      BatchSender(*channel).Send({batch}, absl::Now() + absl::Seconds(30));
  if (!acks.ok()) {
    context.err << kPrefix << ": " << server << ": " << acks.status().message()
                << "\n";
    return kExitUsage;
  }
  for (const v1::Rejection& r : (*acks)[0].rejections()) {
    context.err << kPrefix << ": rejected by the server: " << r.reason()
                << "\n";
    return kExitBadInput;
  }
  return kExitOk;
}

int SendToAgent(const EmitArgs& args, const v1::Event& event,
                CommandContext& context) {
  client::AgentSocket socket;
  const std::string dir =
      args.spool_dir.value_or(client::DefaultClientSpoolDir());
  auto result = client::SendOrSpool(
      &socket, args.socket.value_or(client::DefaultAgentSocket()), dir, event);
  if (!result.ok()) {
    context.err << kPrefix << ": " << result.status().message() << "\n";
    return kExitUsage;
  }
  if (result->spooled) {
    context.err << kPrefix << ": " << result->socket_error << "; spooled to "
                << dir << " for the agent\n";
  }
  return kExitOk;
}

}  // namespace

int RunEmitCommand(const std::vector<std::string>& argv,
                   CommandContext& context) {
  EmitArgs args;
  args.server = context.server;
  for (const std::string& arg : argv) {
    absl::Status s = ParseArg(arg, &args);
    if (!s.ok()) return UsageError(context, kPrefix, s.message());
  }
  if (args.help) {
    context.out << EmitHelp();
    return kExitOk;
  }
  if (args.kind.empty()) return UsageError(context, kPrefix, "missing KIND");
  absl::StatusOr<v1::Event> event =
      codec::BuildEvent(args.kind, args.fields, absl::GetCurrentTimeNanos());
  if (!event.ok())
    return UsageError(context, kPrefix, event.status().message());
  if (args.print) {
    context.out << client::EventToJsonLine(*event);
    return kExitOk;
  }
  if (args.server) return SendToServer(*args.server, *event, context);
  return SendToAgent(args, *event, context);
}

}  // namespace goodput::cli
