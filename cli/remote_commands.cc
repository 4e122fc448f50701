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
#include "cli/flags.h"
#include "cli/remote_util.h"
#include "cli/time_format.h"
#include "codec/line_decoder.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/create_channel.h"
#include "proto/service.grpc.pb.h"
#include "util/grpc_credentials.h"
#include "util/grpc_status.h"
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

}  // namespace

int RunReportCommand(const std::vector<std::string>& args,
                     CommandContext& context) {
  const std::string prefix = "goodputctl report";
  bool help = false, json = false;
  std::optional<std::string> as_of, since;
  FlagParser parser;
  parser.AddBool("json", &json, "print the report as one JSON object");
  parser.AddString("as_of", "T", &as_of, "report as of T (default: now)");
  parser.AddString("since", "T", &since, "report the window [T, as_of]");
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
  grpc::ClientContext rpc;
  rpc.set_deadline(absl::ToChronoTime(absl::Now() + kQueryTimeout));
  v1::ReportResponse response;
  auto channel = Connect(context);
  if (!channel.ok())
    return UsageError(context, prefix, channel.status().message());
  s = FromGrpc(v1::Query::NewStub(*channel)->Report(&rpc, request, &response));
  if (!s.ok()) {
    context.err << prefix << ": " << *context.server << ": " << s.message()
                << "\n";
    return kExitUsage;
  }
  context.out << (json ? response.json() + "\n" : response.table());
  return kExitOk;
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
  if (batch_flag && (!absl::SimpleAtoi(*batch_flag, &batch_size) ||
                     batch_size < 1 || batch_size > 100000)) {
    return UsageError(context, prefix,
                      "--batch: want 1..100000, got " + *batch_flag);
  }
  absl::Duration timeout = absl::Seconds(60);
  if (timeout_flag) {
    auto ns = ParseDurationNanos(*timeout_flag);
    if (!ns.ok()) return UsageError(context, prefix, ns.status().message());
    timeout = absl::Nanoseconds(*ns);
  }
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
  auto batches = MakeBatches(events, "goodputctl-" + *uuid, batch_size);
  auto channel = Connect(context);
  if (!channel.ok())
    return UsageError(context, prefix, channel.status().message());
  auto acks = BatchSender(*channel).Send(batches, absl::Now() + timeout);
  if (!acks.ok()) {
    context.err << prefix << ": " << *context.server << ": "
                << acks.status().message() << "\n";
    return kExitUsage;
  }
  int64_t accepted = 0, rejected = 0;
  for (size_t b = 0; b < acks->size(); ++b) {
    accepted += (*acks)[b].accepted();
    for (const v1::Rejection& r : (*acks)[b].rejections()) {
      const Source& src = sources[b * batch_size + r.index()];
      context.err << src.file << ":" << src.line << ": " << r.reason() << "\n";
      ++rejected;
    }
  }
  context.out << "sent " << events.size() << " events in " << batches.size()
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
  if (limit_flag && (!absl::SimpleAtoi(*limit_flag, &limit) || limit < 1)) {
    return UsageError(context, prefix,
                      "--limit: want N >= 1, got " + *limit_flag);
  }
  request.set_limit(static_cast<uint32_t>(limit));
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

}  // namespace goodput::cli
