// PeerClient against two in-process gRPC servers on loopback: a relay
// whose Summary calls a peer through PeerClient on behalf of its caller,
// and a peer that records what it got. The caller's bearer token reaches
// the peer, with goodput-scope: local; the peer's trailing
// goodput-partitions come back as the part's partitions.
#include "server/peer_client.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"

namespace goodput::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The peer: records the metadata; answers with `partitions` unless empty.
class Peer final : public v1::Query::Service {
 public:
  explicit Peer(std::string partitions) : partitions_(std::move(partitions)) {}
  grpc::Status Summary(grpc::ServerContext* context,
                       const v1::SummaryRequest* request,
                       v1::SummaryResponse* response) override {
    absl::MutexLock lock(&mu_);
    for (const char* key : {"authorization", kScopeMetadata}) {
      auto it = context->client_metadata().find(key);
      if (it != context->client_metadata().end()) {
        seen_[key] = std::string(it->second.data(), it->second.size());
      }
    }
    if (!partitions_.empty()) {
      context->AddTrailingMetadata(kPartitionsMetadata, partitions_);
    }
    response->mutable_ingest()->set_batches(request->worst_jobs());
    return grpc::Status::OK;
  }
  std::string Seen(const std::string& key) {
    absl::MutexLock lock(&mu_);
    return seen_.count(key) ? seen_[key] : "(none)";
  }

 private:
  const std::string partitions_;
  absl::Mutex mu_;
  std::map<std::string, std::string> seen_ ABSL_GUARDED_BY(mu_);
};

// The relay: asks the peer at `address` through PeerClient.
class Relay final : public v1::Query::Service {
 public:
  Relay(PeerClient* peers, std::string address)
      : peers_(peers), address_(std::move(address)) {}
  grpc::Status Summary(grpc::ServerContext* context,
                       const v1::SummaryRequest* request,
                       v1::SummaryResponse* response) override {
    auto part = peers_->Summary(address_, *context, *request);
    absl::MutexLock lock(&mu_);
    result_ = part.status();
    if (!part.ok()) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "");
    partitions_ = part->partitions;
    *response = part->response;
    return grpc::Status::OK;
  }
  absl::Status result() {
    absl::MutexLock lock(&mu_);
    return result_;
  }
  std::vector<int32_t> partitions() {
    absl::MutexLock lock(&mu_);
    return partitions_;
  }

 private:
  PeerClient* const peers_;
  const std::string address_;
  absl::Mutex mu_;
  absl::Status result_ ABSL_GUARDED_BY(mu_);
  std::vector<int32_t> partitions_ ABSL_GUARDED_BY(mu_);
};

std::unique_ptr<grpc::Server> Serve(grpc::Service* service, int* port) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           port);
  builder.RegisterService(service);
  return builder.BuildAndStart();
}

class PeerClientTest : public ::testing::Test {
 protected:
  void Start(const std::string& partitions) {
    peer_ = std::make_unique<Peer>(partitions);
    int peer_port = 0, relay_port = 0;
    peer_server_ = Serve(peer_.get(), &peer_port);
    ASSERT_GT(peer_port, 0);
    auto client = PeerClient::Create(ClientTlsFlags{});
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
    relay_ = std::make_unique<Relay>(client_.get(),
                                     absl::StrCat("127.0.0.1:", peer_port));
    relay_server_ = Serve(relay_.get(), &relay_port);
    ASSERT_GT(relay_port, 0);
    stub_ = v1::Query::NewStub(
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", relay_port),
                            grpc::InsecureChannelCredentials()));
  }
  grpc::Status Ask(v1::SummaryResponse* response) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer tok-a");
    v1::SummaryRequest request;
    request.set_worst_jobs(7);
    return stub_->Summary(&context, request, response);
  }
  void TearDown() override {
    if (relay_server_) relay_server_->Shutdown();
    if (peer_server_) peer_server_->Shutdown();
  }

  std::unique_ptr<Peer> peer_;
  std::unique_ptr<PeerClient> client_;
  std::unique_ptr<Relay> relay_;
  std::unique_ptr<grpc::Server> peer_server_, relay_server_;
  std::unique_ptr<v1::Query::Stub> stub_;
};

TEST_F(PeerClientTest, ForwardsTheTokenAsksLocallyAndReadsThePartitions) {
  Start("1,2,5");
  v1::SummaryResponse response;
  ASSERT_TRUE(Ask(&response).ok()) << relay_->result();
  EXPECT_EQ(peer_->Seen("authorization"), "Bearer tok-a");
  EXPECT_EQ(peer_->Seen(kScopeMetadata), kScopeLocal);
  EXPECT_THAT(relay_->partitions(), ElementsAre(1, 2, 5));
  EXPECT_EQ(response.ingest().batches(), 7);  // the request went through
}

TEST_F(PeerClientTest, AnAnswerWithoutPartitionsIsAnError) {
  Start("");  // an older goodputd: no goodput-partitions
  v1::SummaryResponse response;
  EXPECT_FALSE(Ask(&response).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(relay_->result()));
  EXPECT_THAT(relay_->result().message(),
              HasSubstr("does not say which partitions it covers"));
}

}  // namespace
}  // namespace goodput::server
