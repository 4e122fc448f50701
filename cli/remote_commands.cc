#include "cli/remote_commands.h"

#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cli/batch_sender.h"
#include "cli/remote_util.h"
#include "cli/shard_query.h"
#include "codec/line_decoder.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/create_channel.h"
#include "proto/service.grpc.pb.h"
#include "util/flag_values.h"
#include "util/flags.h"
#include "util/grpc_credentials.h"
#include "util/grpc_status.h"
#include "util/time_format.h"
#include "util/uuid.h"

namespace goodput::cli {
namespace {

// Where a sent event came from, to name it in errors.
struct Source {
  std::string file;
  int64_t line;
};

// Decodes the lines of `file` (or context.in for "-") into `events`.
// Returns false if it cannot be read; bad lines go to err and `*bad`.
bool ReadEvents(const std::string& file, CommandContext& context,
                std::vector<v1::Event>* events, std::vector<Source>* sources,
                int64_t* bad) {
  std::ifstream stream;
  std::istream* in = &context.in;
  if (file != "-") {
    stream.open(file);
    if (!stream) return false;
    in = &stream;
  }
  codec::LineDecoder decoder;
  std::string line;
  for (int64_t n = 1; std::getline(*in, line); ++n) {
    v1::Event e;
    absl::Status s = decoder.DecodeLine(line, &e);
    if (absl::IsNotFound(s)) continue;  // blank
    if (!s.ok()) {
      context.err << file << ":" << n << ": " << s.message() << "\n";
      ++*bad;
      continue;
    }
    events->push_back(std::move(e));
    sources->push_back({file, n});
  }
  return true;
}

std::vector<v1::Batch> MakeBatches(const std::vector<v1::Event>& events,
                                   const std::string& agent_id, size_t size) {
  std::vector<v1::Batch> batches;
  for (size_t i = 0; i < events.size(); i += size) {
    v1::Batch& b = batches.emplace_back();
    b.set_agent_id(agent_id);
    b.set_sequence(batches.size());
    for (size_t j = i; j < std::min(events.size(), i + size); ++j) {
      *b.add_events() = events[j];
    }
  }
  return batches;
}

// The events bound for one server, with where each came from.
struct Outbox {
  std::string address;
  std::vector<v1::Event> events;
  std::vector<Source> sources;
};

// One outbox per shard of --server (one for a single server): each event
// goes to the shard of its job_id, a heartbeat to its host's capacity shard
// and a HOSTS or FLEET exclusion (no job_id) to every shard.
std::vector<Outbox> Route(std::vector<v1::Event> events,
                          std::vector<Source> sources, const ShardMap& shards) {
  if (shards.size() == 1) {
    return {{shards.address(0), std::move(events), std::move(sources)}};
  }
  std::vector<Outbox> out;
  for (const std::string& address : shards.addresses())
    out.push_back(Outbox{address, {}, {}});
  for (size_t i = 0; i < events.size(); ++i) {
    const v1::Event& e = events[i];
    for (size_t s : e.has_heartbeat() ? shards.ShardsFor(e.job_id(), e.host())
                                      : shards.ShardsFor(e.job_id())) {
      out[s].events.push_back(events[i]);
      out[s].sources.push_back(sources[i]);
    }
  }
  return out;
}

// Sends `box` as sender `agent_id` and prints the server's rejections;
// adds to the counts. False (error printed) if not all was acknowledged.
bool SendOutbox(const Outbox& box, const std::string& agent_id,
                int64_t batch_size, absl::Time deadline,
                CommandContext& context, size_t* batches, int64_t* accepted,
                int64_t* rejected) {
  if (box.events.empty()) return true;
  auto sent = MakeBatches(box.events, agent_id, batch_size);
  *batches += sent.size();
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      ConnectTo(box.address, context.tls);
  if (!channel.ok()) {
    context.err << "goodputctl send: " << channel.status().message() << "\n";
    return false;
  }
  auto acks = BatchSender(*channel).Send(sent, deadline);
  if (!acks.ok()) {
    context.err << "goodputctl send: " << box.address << ": "
                << acks.status().message() << "\n";
    return false;
  }
  for (size_t b = 0; b < acks->size(); ++b) {
    *accepted += (*acks)[b].accepted();
    for (const v1::Rejection& r : (*acks)[b].rejections()) {
      const Source& src = box.sources[b * batch_size + r.index()];
      context.err << src.file << ":" << src.line << ": " << r.reason() << "\n";
      ++*rejected;
    }
  }
  return true;
}

// The dead letters of the one server context.server.
int PrintDeadLetters(const std::string& prefix,
                     const v1::DeadLettersRequest& request,
                     CommandContext& context);

}  // namespace

int RunReportCommand(const std::vector<std::string>& args,
                     CommandContext& context) {
  const std::string prefix = "goodputctl report";
  bool help = false, json = false, exact_since = false;
  std::optional<std::string> as_of, since;
  FlagParser parser;
  parser.AddBool("json", &json, "print the report as one JSON object");
  parser.AddString("as_of", "T", &as_of, "report as of T (default: now)");
  parser.AddString("since", "T", &since,
                   "report the window [T', as_of]; as of now T' is T "
                   "snapped down to the server's window grid (printed)");
  parser.AddBool("exact_since", &exact_since,
                 "start the window at --since exactly (a slower replay)");
  parser.AddBool("help", &help, "show this help and exit");
  std::vector<std::string> positional;
  if (auto code = ParseOrExit(
          prefix, "Usage: goodputctl --server=HOST:PORT report [FLAGS]\n",
          parser, help, args, &positional, context)) {
    return *code;
  }
  v1::ReportRequest request;
  absl::Status s = TimeFlag("--as_of", as_of, request.mutable_as_of());
  if (s.ok()) s = TimeFlag("--since", since, request.mutable_since());
  if (!s.ok()) return UsageError(context, prefix, s.message());
  if (!as_of) request.clear_as_of();
  if (!since) request.clear_since();
  request.set_exact_since(exact_since);
  absl::StatusOr<ShardMap> shards = ShardList(context);
  if (!shards.ok())
    return UsageError(context, prefix, shards.status().message());
  return PrintReport(*shards, request, json, prefix, context);
}

int RunSendCommand(const std::vector<std::string>& args,
                   CommandContext& context) {
  const std::string prefix = "goodputctl send";
  bool help = false;
  std::optional<std::string> batch_flag, timeout_flag;
  FlagParser parser;
  parser.AddString("batch", "N", &batch_flag, "events per batch (500)");
  parser.AddString("timeout", "D", &timeout_flag,
                   "give up if not all acknowledged by then (default 60s)");
  parser.AddBool("help", &help, "show this help and exit");
  std::vector<std::string> files;
  if (auto code = ParseOrExit(
          prefix, "Usage: goodputctl --server=HOST:PORT send FILE... [FLAGS]\n",
          parser, help, args, &files, context)) {
    return *code;
  }
  if (files.empty()) return UsageError(context, prefix, "no FILE given");
  int64_t batch_size = 500;
  absl::Duration timeout = absl::Seconds(60);
  absl::Status flags = SetIntFlag("batch", batch_flag, 1, 100000, &batch_size);
  if (flags.ok()) {
    flags = SetDurationFlag("timeout", timeout_flag, absl::ZeroDuration(),
                            &timeout);
  }
  if (!flags.ok()) return UsageError(context, prefix, flags.message());
  std::vector<v1::Event> events;
  std::vector<Source> sources;
  int64_t bad = 0;
  for (const std::string& file : files) {
    if (!ReadEvents(file, context, &events, &sources, &bad)) {
      return UsageError(context, prefix, "cannot read " + file);
    }
  }
  absl::StatusOr<std::string> uuid = RandomUuid();
  if (!uuid.ok()) return UsageError(context, prefix, uuid.status().message());
  absl::StatusOr<ShardMap> shards = ShardList(context);
  if (!shards.ok())
    return UsageError(context, prefix, shards.status().message());
  const size_t sent_events = events.size();
  const absl::Time deadline = absl::Now() + timeout;
  size_t batches = 0;
  int64_t accepted = 0, rejected = 0;
  for (const Outbox& box :
       Route(std::move(events), std::move(sources), *shards)) {
    if (!SendOutbox(box, "goodputctl-" + *uuid, batch_size, deadline, context,
                    &batches, &accepted, &rejected)) {
      return kExitUsage;
    }
  }
  context.out << "sent " << sent_events << " events in " << batches
              << " batches: " << accepted << " accepted, " << rejected
              << " rejected by the server, " << bad << " bad lines\n";
  return bad + rejected > 0 ? kExitBadInput : kExitOk;
}

int RunDeadLettersCommand(const std::vector<std::string>& args,
                          CommandContext& context) {
  const std::string prefix = "goodputctl dead-letters";
  bool help = false;
  std::optional<std::string> limit_flag;
  FlagParser parser;
  parser.AddString("limit", "N", &limit_flag, "at most N (default 100)");
  parser.AddBool("help", &help, "show this help and exit");
  std::vector<std::string> positional;
  if (auto code = ParseOrExit(
          prefix, "Usage: goodputctl --server=HOST:PORT dead-letters [FLAGS]\n",
          parser, help, args, &positional, context)) {
    return *code;
  }
  v1::DeadLettersRequest request;
  int64_t limit = 100;
  if (absl::Status s = SetIntFlag("limit", limit_flag, 1, UINT32_MAX, &limit);
      !s.ok()) {
    return UsageError(context, prefix, s.message());
  }
  request.set_limit(static_cast<uint32_t>(limit));
  absl::StatusOr<ShardMap> shards = ShardList(context);
  if (!shards.ok())
    return UsageError(context, prefix, shards.status().message());
  if (shards->size() == 1) return PrintDeadLetters(prefix, request, context);
  // Each shard keeps its own dead letters: list them shard by shard.
  for (const std::string& address : shards->addresses()) {
    context.out << "# " << address << "\n";
    context.server = address;
    if (int code = PrintDeadLetters(prefix, request, context)) return code;
  }
  return kExitOk;
}

namespace {

int PrintDeadLetters(const std::string& prefix,
                     const v1::DeadLettersRequest& request,
                     CommandContext& context) {
  grpc::ClientContext rpc;
  rpc.set_deadline(absl::ToChronoTime(absl::Now() + kQueryTimeout));
  v1::DeadLettersResponse response;
  auto channel = Connect(context);
  if (!channel.ok())
    return UsageError(context, prefix, channel.status().message());
  absl::Status s = FromGrpc(
      v1::Query::NewStub(*channel)->DeadLetters(&rpc, request, &response));
  if (!s.ok()) {
    context.err << prefix << ": " << *context.server << ": " << s.message()
                << "\n";
    return kExitUsage;
  }
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  for (const v1::DeadLetter& d : response.dead_letters()) {
    std::string event;
    (void)google::protobuf::util::MessageToJsonString(d.event(), &event,
                                                      options);
    context.out << d.agent_id() << " #" << d.sequence() << "[" << d.index()
                << "]: " << d.reason() << "\n    " << event << "\n";
  }
  context.out << response.total() << " dead letters\n";
  return kExitOk;
}

}  // namespace

}  // namespace goodput::cli
