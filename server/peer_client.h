// PeerClient: the gRPC side of a cluster-mode fan-out (server/fan_out.h):
// calls another member's Query service for its own part of a query
// (metadata goodput-scope: local, so the peer answers locally and never
// fans out again) and reads the partitions the part covers from the
// answer's trailing metadata. Each call carries the caller's
// `authorization` metadata, so the peer applies the same token check, and
// inherits the caller's deadline and cancellation. Channels are dialled
// with the TLS settings given at Create (this instance's own certificate
// as the client certificate for mutual TLS) and kept per address. Owns its
// channels. Thread-safe.
#ifndef GOODPUT_SERVER_PEER_CLIENT_H_
#define GOODPUT_SERVER_PEER_CLIENT_H_

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "clients/cpp/query_client.h"
#include "grpcpp/channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/server_context.h"
#include "proto/service.grpc.pb.h"
#include "server/fan_out.h"
#include "util/grpc_credentials.h"

namespace goodput::server {

class PeerClient {
 public:
  // `tls`: empty ca = plaintext; a token file is not used (the caller's
  // token is forwarded).
  static absl::StatusOr<std::unique_ptr<PeerClient>> Create(
      const ClientTlsFlags& tls);

  absl::StatusOr<MemberPart<FetchedReport>> Report(
      const std::string& address, const grpc::ServerContext& caller,
      const v1::ReportRequest& request);
  absl::StatusOr<MemberPart<v1::JobsResponse>> Jobs(
      const std::string& address, const grpc::ServerContext& caller,
      const v1::JobsRequest& request);
  absl::StatusOr<MemberPart<v1::FleetResponse>> Fleet(
      const std::string& address, const grpc::ServerContext& caller,
      const v1::FleetRequest& request);
  absl::StatusOr<MemberPart<v1::SummaryResponse>> Summary(
      const std::string& address, const grpc::ServerContext& caller,
      const v1::SummaryRequest& request);
  absl::StatusOr<v1::JobResponse> Job(const std::string& address,
                                      const grpc::ServerContext& caller,
                                      const v1::JobRequest& request);

 private:
  PeerClient(std::shared_ptr<grpc::ChannelCredentials> credentials,
             ClientTlsFlags tls)
      : credentials_(std::move(credentials)), tls_(std::move(tls)) {}

  std::unique_ptr<v1::Query::Stub> StubFor(const std::string& address);
  // A context for a call on behalf of `caller` (see the class comment).
  static std::unique_ptr<grpc::ClientContext> ContextFor(
      const grpc::ServerContext& caller);
  template <typename Request, typename Response>
  absl::StatusOr<MemberPart<Response>> Unary(
      const std::string& address, const grpc::ServerContext& caller,
      grpc::Status (v1::Query::Stub::*method)(grpc::ClientContext*,
                                              const Request&, Response*),
      const Request& request);

  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
  const ClientTlsFlags tls_;
  absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<grpc::Channel>> channels_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_PEER_CLIENT_H_
