// Losses nobody heard about (issue 15, items 2, 3, 9, 10 and 11), over real
// gRPC (loopback, port 0) into a real goodputd and RocksDB: a forged agent
// id or sequence, two streams under one id, absurd values, a huge agent id,
// invalid UTF-8 and a batch over gRPC's message limit are each refused with
// an error that names what is wrong, and counted.
#include <fstream>
#include <limits>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/testing/test_util.h"
#include "cli/batch_sender.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "proto/service.grpc.pb.h"
#include "server/goodputd.h"
#include "storage/rocksdb_event_store.h"
#include "tests/test_pki.h"
#include "util/grpc_credentials.h"

namespace goodput {
namespace {

constexpr int64_t kNow = 1717200000;  // 2024-06-01, the events' time
constexpr uint64_t kMaxSequence = std::numeric_limits<uint64_t>::max();

v1::Event Started(const std::string& job) {
  v1::Event e;
  e.mutable_time()->set_seconds(kNow);
  e.set_job_id(job);
  e.mutable_started();
  return e;
}

v1::Batch MakeBatch(const std::string& agent, uint64_t sequence,
                    std::vector<v1::Event> events = {Started("job-1")}) {
  v1::Batch batch;
  batch.set_agent_id(agent);
  batch.set_sequence(sequence);
  for (v1::Event& e : events) *batch.add_events() = std::move(e);
  return batch;
}

// One open Ingest.Stream.
class Stream {
 public:
  explicit Stream(const std::shared_ptr<grpc::Channel>& channel)
      : stub_(v1::Ingest::NewStub(channel)), rw_(stub_->Stream(&context_)) {}

  // Sends `batch`; its ack, or nullopt if the stream ended instead.
  std::optional<v1::Ack> Send(const v1::Batch& batch) {
    v1::Ack ack;
    if (!rw_->Write(batch) || !rw_->Read(&ack)) return std::nullopt;
    return ack;
  }
  grpc::Status Finish() {
    rw_->WritesDone();
    return rw_->Finish();
  }

 private:
  std::unique_ptr<v1::Ingest::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::Batch, v1::Ack>> rw_;
};

class IngestRefusalsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new agent::testing::TempDir();
    auto pki = testing::TestPki::Generate(dir_->path());
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = new testing::TestPki(*pki);
    std::ofstream(dir_->File("tokens"))
        << "agent-a tok-a\nagent-b tok-b\nagent-c tok-c agent_ids=host-c-*\n";
    for (const char* t : {"tok-a", "tok-b", "tok-c"}) {
      std::ofstream(dir_->File(t)) << t << "\n";
    }
  }
  static void TearDownTestSuite() {
    delete pki_;
    delete dir_;
  }

  void Start(const std::function<void(server::GoodputdOptions*)>& edit = {}) {
    server::GoodputdOptions options;
    options.data_dir = data_.path();
    options.grpc_address = "127.0.0.1:0";
    if (edit) edit(&options);
    auto started = server::Goodputd::Start(options, &clock_);
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
  }
  void StartSecure(bool mutual_tls, bool tokens) {
    Start([&](server::GoodputdOptions* o) {
      o->tls = {pki_->server_cert, pki_->server_key,
                mutual_tls ? pki_->ca : ""};
      if (tokens) o->auth_tokens = dir_->File("tokens");
      o->metrics_address = "127.0.0.1:0";
    });
  }

  std::string Address() const {
    return absl::StrCat("127.0.0.1:", server_->port());
  }
  std::shared_ptr<grpc::Channel> Insecure() const {
    return grpc::CreateChannel(Address(), grpc::InsecureChannelCredentials());
  }
  // A TLS channel with `token` ("" = none) and, if `cert`, the client
  // certificate.
  std::shared_ptr<grpc::Channel> Secure(const std::string& token,
                                        bool cert = false) const {
    ClientTlsFlags tls{pki_->ca, cert ? pki_->client_cert : "",
                       cert ? pki_->client_key : "", "",
                       token.empty() ? "" : dir_->File(token)};
    auto credentials = MakeChannelCredentials(tls);
    EXPECT_TRUE(credentials.ok()) << credentials.status();
    return grpc::CreateChannel(Address(), *credentials);
  }

  // The sample `series` (name and labels) of a scrape; -1 if absent.
  double Scraped(const std::string& series) {
    auto result = agent::testing::HttpGet(server_->metrics_port(), "/metrics");
    EXPECT_TRUE(result.ok()) << result.status();
    const std::string body = result.ok() ? result->body : "";
    const size_t at = body.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(body.substr(at + series.size() + 2));
  }

  static agent::testing::TempDir* dir_;
  static testing::TestPki* pki_;
  agent::testing::TempDir data_;
  FakeClock clock_{kNow * core::kNanosPerSecond};
  std::unique_ptr<server::Goodputd> server_;
};

agent::testing::TempDir* IngestRefusalsTest::dir_ = nullptr;
testing::TestPki* IngestRefusalsTest::pki_ = nullptr;

// 15.2: with agent A's token, a batch under agent B's id with sequence
// 2^64-1 used to make every later batch of B a "duplicate".
TEST_F(IngestRefusalsTest, AnotherAgentsIdIsPermissionDenied) {
  StartSecure(/*mutual_tls=*/false, /*tokens=*/true);
  Stream b(Secure("tok-b"));
  ASSERT_TRUE(b.Send(MakeBatch("id-b", 1)).has_value());
  ASSERT_TRUE(b.Finish().ok());

  Stream a(Secure("tok-a"));
  EXPECT_FALSE(a.Send(MakeBatch("id-b", kMaxSequence)).has_value());
  grpc::Status refused = a.Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(refused.error_message(),
            "batch.agent_id: \"id-b\" belongs to token agent-b, not to this "
            "call's token agent-a (docs/security.md, \"Agent identities\")");
  EXPECT_EQ(
      Scraped("goodput_agent_refused_total{reason=\"identity_mismatch\"}"), 1);

  Stream b2(Secure("tok-b"));
  std::optional<v1::Ack> ack = b2.Send(MakeBatch("id-b", 2));
  ASSERT_TRUE(ack.has_value());
  EXPECT_FALSE(ack->duplicate());  // B's events still count
  EXPECT_EQ(ack->accepted(), 1u);
}

TEST_F(IngestRefusalsTest, TokenAgentIdPatternsAreEnforced) {
  StartSecure(/*mutual_tls=*/false, /*tokens=*/true);
  Stream ok(Secure("tok-c"));
  EXPECT_TRUE(ok.Send(MakeBatch("host-c-7", 1)).has_value());
  Stream bad(Secure("tok-c"));
  EXPECT_FALSE(bad.Send(MakeBatch("host-a-7", 1)).has_value());
  grpc::Status refused = bad.Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(refused.error_message(),
            "batch.agent_id: \"host-a-7\" is not among the agent_ids= of "
            "token agent-c in --auth_tokens");
}

// Under mutual TLS without tokens, the client certificate's identity owns
// the ids it used first; the binding is in the store.
TEST_F(IngestRefusalsTest, CertificateIdentityOwnsItsIdsUnderMutualTls) {
  StartSecure(/*mutual_tls=*/true, /*tokens=*/false);
  Stream s(Secure("", /*cert=*/true));
  ASSERT_TRUE(s.Send(MakeBatch("id-m", 1)).has_value());
  ASSERT_TRUE(s.Finish().ok());
  server_.reset();
  auto store = storage::RocksDbEventStore::Open(data_.path(), {});
  ASSERT_TRUE(store.ok()) << store.status();
  std::optional<std::string> owner;
  ASSERT_TRUE((*store)->ReadMeta("agent_owner/id-m", &owner).ok());
  ASSERT_TRUE(owner.has_value());
  EXPECT_EQ(owner->rfind("certificate ", 0), 0u) << *owner;
}

TEST_F(IngestRefusalsTest, SequenceFarAheadIsRefusedAndNotRecorded) {
  Start();
  Stream forged(Insecure());
  EXPECT_FALSE(forged.Send(MakeBatch("id-1", kMaxSequence)).has_value());
  grpc::Status refused = forged.Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::OUT_OF_RANGE);
  EXPECT_NE(refused.error_message().find("--max_sequence_jump=1000000"),
            std::string::npos)
      << refused.error_message();
  Stream real(Insecure());
  std::optional<v1::Ack> ack = real.Send(MakeBatch("id-1", 1));
  ASSERT_TRUE(ack.has_value());
  EXPECT_FALSE(ack->duplicate());
  EXPECT_EQ(server_->ingestor()->stats().sequence_jumps, 1);
}

// 15.3: a cloned spool gives two agents one id; the second live stream is
// refused by name until the first ends.
TEST_F(IngestRefusalsTest, SecondLiveStreamForOneIdIsRefusedLoudly) {
  Start();
  auto first = std::make_unique<Stream>(Insecure());
  ASSERT_TRUE(first->Send(MakeBatch("clone", 1)).has_value());
  Stream second(Insecure());
  EXPECT_FALSE(second.Send(MakeBatch("clone", 2)).has_value());
  grpc::Status refused = second.Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(refused.error_message().rfind(
                "batch.agent_id: \"clone\" is already streaming on another "
                "connection (from ipv4:127.0.0.1:",
                0),
            0u)
      << refused.error_message();
  EXPECT_EQ(server_->agent_refused(server::AgentGuard::kIdInUse), 1);
  EXPECT_EQ(server_->ingestor()->stats().batches, 1);  // nothing stored
  ASSERT_TRUE(first->Finish().ok());
  first.reset();
  Stream third(Insecure());
  std::optional<v1::Ack> ack = third.Send(MakeBatch("clone", 2));
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ(ack->accepted(), 1u);
}

// 15.3: two agents with one id that never stream at the same time (a
// clone that runs while the original is down) used to lose the second's
// batches as "duplicates". A resend of the same batch is still a
// duplicate; the same sequence with other events is refused by name.
TEST_F(IngestRefusalsTest, DivergingSequenceForOneIdIsRefusedLoudly) {
  Start();
  {
    Stream original(Insecure());
    ASSERT_TRUE(original.Send(MakeBatch("twin", 1)).has_value());
    ASSERT_TRUE(original.Send(MakeBatch("twin", 2)).has_value());
    ASSERT_TRUE(original.Finish().ok());
  }
  Stream resend(Insecure());
  std::optional<v1::Ack> again = resend.Send(MakeBatch("twin", 2));
  ASSERT_TRUE(again.has_value());
  EXPECT_TRUE(again->duplicate());
  ASSERT_TRUE(resend.Finish().ok());

  Stream clone(Insecure());
  EXPECT_FALSE(
      clone.Send(MakeBatch("twin", 2, {Started("job-of-clone")})).has_value());
  grpc::Status refused = clone.Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(refused.error_message().rfind(
                "batch.sequence: batch 2 of agent_id \"twin\" has other events "
                "than the batch acknowledged under that sequence: two agents "
                "send under this id",
                0),
            0u)
      << refused.error_message();
  EXPECT_EQ(server_->ingestor()->stats().diverging_sequences, 1);
  EXPECT_EQ(server_->ingestor()->stats().duplicate_batches, 1);
}

// The same agent reconnecting while goodputd still holds its dead
// connection's stream gets through once that stream was idle for
// --agent_takeover_after; the old stream is cancelled.
TEST_F(IngestRefusalsTest, IdleStreamIsTakenOverByTheReconnectingAgent) {
  Start();
  Stream old_stream(Insecure());
  ASSERT_TRUE(old_stream.Send(MakeBatch("id-1", 1)).has_value());
  clock_.Advance(181 * core::kNanosPerSecond);  // default takeover: 3m
  Stream reconnect(Insecure());
  std::optional<v1::Ack> ack = reconnect.Send(MakeBatch("id-1", 2));
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ(ack->accepted(), 1u);
  EXPECT_EQ(old_stream.Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(server_->agent_refused(server::AgentGuard::kIdInUse), 0);
}

// 15.10: a 1 MB agent id used to become a 1 MB metric label.
TEST_F(IngestRefusalsTest, HugeAgentIdIsRefusedNamingTheFlag) {
  Start();
  Stream s(Insecure());
  EXPECT_FALSE(s.Send(MakeBatch(std::string(1 << 20, 'x'), 1)).has_value());
  grpc::Status refused = s.Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(refused.error_message().rfind(
                "batch.agent_id: must be at most 128 bytes "
                "(--max_agent_id_bytes), got 1048576 bytes \"xxxxx",
                0),
            0u)
      << refused.error_message();
  EXPECT_TRUE(server_->ingestor()->stats().agent_last_seen_ns.empty());
}

// 15.9: absurd values are rejected one by one in the ack, naming the field.
TEST_F(IngestRefusalsTest, AbsurdValuesAreRejectedInTheAck) {
  Start();
  v1::Event chips = Started("job-2");
  chips.mutable_job_submitted()->set_chips(std::numeric_limits<int64_t>::max());
  chips.mutable_job_submitted()->set_workload(v1::JobSubmitted::TRAINING);
  v1::Event old = Started("job-3");
  old.mutable_time()->set_seconds(kNow - 10 * 365 * 86400);
  Stream s(Insecure());
  std::optional<v1::Ack> ack =
      s.Send(MakeBatch("id-1", 1, {Started("job-1"), chips, old}));
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ(ack->accepted(), 1u);
  ASSERT_EQ(ack->rejections_size(), 2);
  EXPECT_EQ(ack->rejections(0).reason(),
            "job_submitted.chips: must be at most 1048576 (--max_chips), got "
            "9223372036854775807");
  EXPECT_NE(ack->rejections(1).reason().find("--max_event_age"),
            std::string::npos)
      << ack->rejections(1).reason();
}

// 15.11: invalid UTF-8 used to end the stream OK with no ack.
TEST_F(IngestRefusalsTest, InvalidUtf8IsInvalidArgumentNamingTheEvent) {
  Start();
  v1::Event bad = Started("job\xff");
  Stream s(Insecure());
  EXPECT_FALSE(
      s.Send(MakeBatch("id-1", 1, {Started("job-1"), bad})).has_value());
  grpc::Status refused = s.Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(refused.error_message().rfind(
                "batch.events[1]: does not parse as goodput.v1.Event (at ", 0),
            0u)
      << refused.error_message();
  EXPECT_EQ(server_->ingestor()->stats().batches, 0);
}

// 15.11: goodputctl send of a batch over gRPC's limit used to retry "message
// larger than max" until its deadline.
TEST_F(IngestRefusalsTest, BatchOverTheMessageLimitFailsAtOnceWithTheFlag) {
  Start([](server::GoodputdOptions* o) { o->limits.max_batch_bytes = 1024; });
  v1::Event e = Started("job-1");
  e.set_attempt(std::string(200, 'a'));
  std::vector<v1::Event> events(20, e);  // about 4.5 KB > 2 x 1024
  const absl::Time deadline = absl::Now() + absl::Minutes(5);
  auto sent = cli::BatchSender(Insecure())
                  .Send({MakeBatch("id-1", 1, events)}, deadline);
  ASSERT_FALSE(sent.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(sent.status())) << sent.status();
  EXPECT_NE(sent.status().message().find("goodputctl send --batch=N"),
            std::string::npos)
      << sent.status();
  EXPECT_NE(sent.status().message().find("--max_batch_bytes"),
            std::string::npos);
}

}  // namespace
}  // namespace goodput
