#include "server/peer_client.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "grpc/grpc.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/support/channel_arguments.h"
#include "util/grpc_status.h"

namespace goodput::server {
namespace {

using Stub = v1::Query::Stub;

// The partitions `context`'s trailing metadata says the answer covers.
absl::StatusOr<std::vector<int32_t>> PartitionsOf(
    const grpc::ClientContext& context) {
  const auto& trailing = context.GetServerTrailingMetadata();
  auto it = trailing.find(kPartitionsMetadata);
  if (it == trailing.end()) {
    return absl::FailedPreconditionError(
        "its answer does not say which partitions it covers (an older "
        "goodputd?)");
  }
  return FanOut::ParsePartitions(
      absl::string_view(it->second.data(), it->second.size()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<PeerClient>> PeerClient::Create(
    const ClientTlsFlags& tls) {
  ClientTlsFlags flags = tls;
  flags.token_file.clear();
  auto credentials = MakeChannelCredentials(flags);
  if (!credentials.ok()) return credentials.status();
  return std::unique_ptr<PeerClient>(
      new PeerClient(*std::move(credentials), std::move(flags)));
}

std::unique_ptr<Stub> PeerClient::StubFor(const std::string& address) {
  absl::MutexLock lock(&mu_);
  std::shared_ptr<grpc::Channel>& channel = channels_[address];
  if (channel == nullptr) {
    grpc::ChannelArguments args;
    ApplyTlsChannelArgs(tls_, &args);
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    args.SetMaxReceiveMessageSize(-1);  // a member's jobs may be many
    channel = grpc::CreateCustomChannel(address, credentials_, args);
  }
  return v1::Query::NewStub(channel);
}

std::unique_ptr<grpc::ClientContext> PeerClient::ContextFor(
    const grpc::ServerContext& caller) {
  std::unique_ptr<grpc::ClientContext> context =
      grpc::ClientContext::FromServerContext(caller);
  context->AddMetadata(kScopeMetadata, kScopeLocal);
  const auto& metadata = caller.client_metadata();
  auto it = metadata.find("authorization");
  if (it != metadata.end()) {
    context->AddMetadata("authorization",
                         std::string(it->second.data(), it->second.size()));
  }
  return context;
}

template <typename Request, typename Response>
absl::StatusOr<MemberPart<Response>> PeerClient::Unary(
    const std::string& address, const grpc::ServerContext& caller,
    grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&,
                                 Response*),
    const Request& request) {
  std::unique_ptr<Stub> stub = StubFor(address);
  std::unique_ptr<grpc::ClientContext> context = ContextFor(caller);
  MemberPart<Response> part;
  absl::Status s =
      FromGrpc(((*stub).*method)(context.get(), request, &part.response));
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<int32_t>> partitions = PartitionsOf(*context);
  if (!partitions.ok()) return partitions.status();
  part.partitions = *std::move(partitions);
  return part;
}

absl::StatusOr<MemberPart<FetchedReport>> PeerClient::Report(
    const std::string& address, const grpc::ServerContext& caller,
    const v1::ReportRequest& request) {
  std::unique_ptr<Stub> stub = StubFor(address);
  std::unique_ptr<grpc::ClientContext> context = ContextFor(caller);
  absl::StatusOr<FetchedReport> report =
      ReadReport(stub.get(), context.get(), request);
  if (!report.ok()) return report.status();
  absl::StatusOr<std::vector<int32_t>> partitions = PartitionsOf(*context);
  if (!partitions.ok()) return partitions.status();
  return MemberPart<FetchedReport>{*std::move(report), *std::move(partitions)};
}

absl::StatusOr<MemberPart<v1::JobsResponse>> PeerClient::Jobs(
    const std::string& address, const grpc::ServerContext& caller,
    const v1::JobsRequest& request) {
  return Unary(address, caller, &Stub::Jobs, request);
}

absl::StatusOr<MemberPart<v1::FleetResponse>> PeerClient::Fleet(
    const std::string& address, const grpc::ServerContext& caller,
    const v1::FleetRequest& request) {
  return Unary(address, caller, &Stub::Fleet, request);
}

absl::StatusOr<MemberPart<v1::SummaryResponse>> PeerClient::Summary(
    const std::string& address, const grpc::ServerContext& caller,
    const v1::SummaryRequest& request) {
  return Unary(address, caller, &Stub::Summary, request);
}

absl::StatusOr<v1::JobResponse> PeerClient::Job(
    const std::string& address, const grpc::ServerContext& caller,
    const v1::JobRequest& request) {
  std::unique_ptr<Stub> stub = StubFor(address);
  std::unique_ptr<grpc::ClientContext> context = ContextFor(caller);
  v1::JobResponse response;
  absl::Status s = FromGrpc(stub->Job(context.get(), request, &response));
  if (!s.ok()) return s;
  return response;
}

}  // namespace goodput::server
