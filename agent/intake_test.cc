#include "agent/intake.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/batcher.h"
#include "agent/spool.h"
#include "agent/testing/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "util/logger.h"

namespace goodput::agent {
namespace {

using testing::ConnectUnix;
using testing::SendAll;
using testing::StepLine;

constexpr absl::Duration kTimeout = absl::Seconds(20);

class IntakeTest : public ::testing::Test {
 protected:
  void SetUp() override { OpenSpool(uint64_t{1} << 30); }

  void OpenSpool(uint64_t max_bytes) {
    batcher_.reset();
    spool_.reset();  // releases its lock
    ids_.reset();
    auto ids = EventIds::Open(tmp_.File("event_ids"), 1000);
    ASSERT_TRUE(ids.ok()) << ids.status();
    ids_ = *std::move(ids);
    auto spool = Spool::Open({tmp_.File("spool"), max_bytes});
    ASSERT_TRUE(spool.ok()) << spool.status();
    spool_ = *std::move(spool);
    spool_->SetEventIds(ids_.get());
    Batcher::Options options{
        /*batch_events=*/100000, absl::Hours(1), "host-1", {}};
    options.ids = ids_.get();
    batcher_ = std::make_unique<Batcher>(options, spool_.get(), &clock_);
  }

  void StartIntake(size_t max_line_bytes = 1 << 20,
                   size_t max_connections = 256, int log_fd = 2) {
    Intake::Options options{socket_, max_line_bytes, max_connections};
    options.ids = ids_.get();
    options.log =
        Logger("goodput-agent", Logger::Format::kText, nullptr, log_fd);
    auto intake = Intake::Start(options, batcher_.get(), &clock_);
    ASSERT_TRUE(intake.ok()) << intake.status();
    intake_ = *std::move(intake);
  }

  // Sends `data` on a new connection and closes it.
  void SendAndClose(const std::string& data) {
    auto fd = ConnectUnix(socket_);
    ASSERT_TRUE(fd.ok()) << fd.status();
    ASSERT_TRUE(SendAll(*fd, data));
    ::close(*fd);
  }

  // Waits until `n` connections were accepted and all are closed.
  bool AwaitClosed(int64_t n) {
    return intake_->AwaitStats(
        [n](const Intake::Stats& s) {
          return s.connections >= n && s.open_connections == 0;
        },
        kTimeout);
  }

  // Every event spooled so far, in order (flushes the batcher).
  std::vector<v1::Event> Spooled() {
    batcher_->Flush();
    std::vector<v1::Event> out;
    for (uint64_t seq : spool_->Pending()) {
      auto batch = spool_->Read(seq);
      EXPECT_TRUE(batch.ok());
      for (const auto& e : batch->events()) out.push_back(e);
    }
    return out;
  }

  testing::TempDir tmp_;
  std::string socket_ = tmp_.File("agent.sock");
  FakeClock clock_{absl::GetCurrentTimeNanos()};
  std::unique_ptr<EventIds> ids_;
  std::unique_ptr<Spool> spool_;
  std::unique_ptr<Batcher> batcher_;
  std::unique_ptr<Intake> intake_;
};

TEST_F(IntakeTest, GoodLinesReachTheBatcher) {
  StartIntake();
  SendAndClose(StepLine("a", 1) + StepLine("a", 2) + "\n   \n" +
               StepLine("a", 3));
  ASSERT_TRUE(AwaitClosed(1));
  const Intake::Stats s = intake_->stats();
  EXPECT_EQ(s.accepted_lines, 3);
  EXPECT_EQ(s.blank_lines, 2);
  EXPECT_EQ(s.rejected_lines(), 0);
  std::vector<v1::Event> events = Spooled();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2].step().step(), 3);
  EXPECT_EQ(events[0].host(), "host-1");
  EXPECT_EQ(intake_->stats().accepted_lines, 3);
}

TEST_F(IntakeTest, BadLinesAreCountedAndTheConnectionGoesOn) {
  StartIntake();
  const std::string garbage("\x00\xff\x01{{{\x7f", 8);
  SendAndClose(
      "not json\n" +
      std::string(
          "{\"time\":\"2024-06-01T00:00:00Z\",\"step\":{\"step\":1}}\n") +
      "{\"time\":\"2024-06-01T00:00:00Z\",\"job_id\":\"a\","
      "\"activity\":{\"kind\":\"DANCING\"}}\n" +
      garbage + "\n" + StepLine("a", 7) + "{\"time\":\r\n");
  ASSERT_TRUE(AwaitClosed(1));
  const Intake::Stats s = intake_->stats();
  EXPECT_EQ(s.accepted_lines, 1);
  EXPECT_EQ(s.invalid_lines, 5);
  EXPECT_EQ(intake_->stats().invalid_lines, 5);
  EXPECT_EQ(intake_->stats().rejected_lines(), 5);
  ASSERT_EQ(Spooled().size(), 1u);
  EXPECT_EQ(Spooled()[0].step().step(), 7);
}

// Reads what was written to the file `path`.
std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Plain step lines take the fast path only inside the time window of the
// agent's clock: one at the edge is accepted, one a nanosecond beyond either
// edge goes to LineDecoder, which rejects it naming the time.
TEST_F(IntakeTest, PlainStepLinesOutsideTheTimeWindowAreRejectedByTime) {
  const std::string log = tmp_.File("log");
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  ASSERT_GE(fd, 0);
  StartIntake(1 << 20, 256, fd);
  const codec::ValidationLimits limits;
  const auto line = [&](int64_t ns) {
    return absl::StrCat(
        R"({"time":")",
        absl::FormatTime("%Y-%m-%d%ET%H:%M:%E*SZ", absl::FromUnixNanos(ns),
                         absl::UTCTimeZone()),
        R"(","job_id":"j","step":{"step":1}})", "\n");
  };
  const int64_t now = clock_.NowNanos();
  SendAndClose(
      line(now + limits.max_future_ns) + line(now + limits.max_future_ns + 1) +
      line(now - limits.max_age_ns) + line(now - limits.max_age_ns - 1));
  ASSERT_TRUE(AwaitClosed(1));
  EXPECT_EQ(intake_->stats().accepted_lines, 2);
  EXPECT_EQ(intake_->stats().invalid_lines, 2);
  EXPECT_EQ(Spooled().size(), 2u);
  const std::string text = ReadFile(log);
  EXPECT_THAT(text, ::testing::HasSubstr("line 2: time: more than 300s in the "
                                         "future"));
  EXPECT_THAT(text, ::testing::HasSubstr("line 4: time: more than"));
  intake_.reset();
  ::close(fd);
}

TEST_F(IntakeTest, TheEndOfABurstOfBadLinesIsLoggedOnceItsIntervalEnds) {
  const std::string log = tmp_.File("log");
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  ASSERT_GE(fd, 0);
  StartIntake(1 << 20, 256, fd);
  std::string lines;
  for (int i = 0; i < 15; ++i) lines += "not json\n";
  SendAndClose(lines);
  ASSERT_TRUE(AwaitClosed(1));
  // 10 lines a second are logged; the 5 others are counted, and told once
  // their second has passed.
  intake_->FlushSuppressedLogs();
  EXPECT_THAT(ReadFile(log), ::testing::Not(::testing::HasSubstr("more")));
  clock_.Advance(absl::ToInt64Nanoseconds(absl::Seconds(1)));
  intake_->FlushSuppressedLogs();
  intake_->FlushSuppressedLogs();
  const std::string text = ReadFile(log);
  EXPECT_THAT(text,
              ::testing::HasSubstr("socket: 5 more log lines suppressed"));
  EXPECT_EQ(text.find("more log lines"), text.rfind("more log lines"));
  intake_.reset();
  ::close(fd);
}

TEST_F(IntakeTest, PartialLineAtDisconnectIsDroppedAndCounted) {
  StartIntake();
  SendAndClose(StepLine("a", 1) + "{\"time\":\"2024-06-01T00:00:00Z\",\"jo");
  ASSERT_TRUE(AwaitClosed(1));
  EXPECT_EQ(intake_->stats().accepted_lines, 1);
  EXPECT_EQ(intake_->stats().partial_lines, 1);
  EXPECT_EQ(intake_->stats().partial_lines, 1);
  EXPECT_EQ(Spooled().size(), 1u);
}

TEST_F(IntakeTest, AbruptResetMidLineIsAPartialLine) {
  StartIntake();
  auto fd = ConnectUnix(socket_);
  ASSERT_TRUE(fd.ok());
  ASSERT_TRUE(SendAll(*fd, StepLine("a", 1) + "{\"time\":"));
  linger hard{1, 0};
  ::setsockopt(*fd, SOL_SOCKET, SO_LINGER, &hard, sizeof(hard));
  ::close(*fd);
  ASSERT_TRUE(AwaitClosed(1));
  EXPECT_EQ(intake_->stats().accepted_lines, 1);
  EXPECT_EQ(intake_->stats().partial_lines, 1);
  // Still serving.
  SendAndClose(StepLine("b", 1));
  ASSERT_TRUE(AwaitClosed(2));
  EXPECT_EQ(intake_->stats().accepted_lines, 2);
}

TEST_F(IntakeTest, OverlongLineIsRejectedWithoutStoppingTheClient) {
  StartIntake(/*max_line_bytes=*/1024);
  auto fd = ConnectUnix(socket_);
  ASSERT_TRUE(fd.ok());
  const std::string chunk(4096, 'x');
  for (int i = 0; i < 64; ++i) ASSERT_TRUE(SendAll(*fd, chunk));  // 256 KiB
  ASSERT_TRUE(SendAll(*fd, "\n" + StepLine("a", 2) + std::string(2000, 'y') +
                               "\n" + StepLine("a", 3)));
  ::close(*fd);
  ASSERT_TRUE(AwaitClosed(1));
  const Intake::Stats s = intake_->stats();
  EXPECT_EQ(s.too_long_lines, 2);
  EXPECT_EQ(s.accepted_lines, 2);
  EXPECT_EQ(s.partial_lines, 0);
  EXPECT_EQ(intake_->stats().too_long_lines, 2);
}

TEST_F(IntakeTest, TwentyConcurrentClientsAllArriveInOrderPerClient) {
  StartIntake();
  constexpr int kClients = 20;
  constexpr int kLines = 200;
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([this, c] {
      auto fd = ConnectUnix(socket_);
      ASSERT_TRUE(fd.ok()) << fd.status();
      for (int i = 1; i <= kLines; ++i) {
        // Split each line in two writes to interleave partial reads.
        const std::string line = StepLine(absl::StrCat("c", c), i);
        ASSERT_TRUE(SendAll(*fd, line.substr(0, 10)));
        ASSERT_TRUE(SendAll(*fd, line.substr(10)));
      }
      ::close(*fd);
    });
  }
  for (auto& t : clients) t.join();
  ASSERT_TRUE(AwaitClosed(kClients));
  EXPECT_EQ(intake_->stats().accepted_lines, kClients * kLines);
  EXPECT_EQ(intake_->stats().rejected_lines(), 0);
  std::map<std::string, int64_t> last;
  for (const v1::Event& e : Spooled()) {
    EXPECT_EQ(e.step().step(), last[e.job_id()] + 1) << e.job_id();
    last[e.job_id()] = e.step().step();
  }
  EXPECT_EQ(last.size(), static_cast<size_t>(kClients));
}

TEST_F(IntakeTest, SocketIsWorldWritableAndRemovedAtStop) {
  StartIntake();
  struct stat st;
  ASSERT_EQ(::stat(socket_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0666);
  intake_->Stop();
  EXPECT_NE(::access(socket_.c_str(), F_OK), 0);
}

TEST_F(IntakeTest, StaleSocketFileIsReplaced) {
  {  // a socket file nobody listens on, as a killed agent leaves it
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, socket_.c_str());
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    ::close(fd);
  }
  StartIntake();
  SendAndClose(StepLine("a", 1));
  ASSERT_TRUE(AwaitClosed(1));
  EXPECT_EQ(intake_->stats().accepted_lines, 1);
}

TEST_F(IntakeTest, LiveSocketOrRegularFileIsNotTakenOver) {
  StartIntake();
  auto second = Intake::Start({socket_}, batcher_.get(), &clock_);
  EXPECT_TRUE(absl::IsAlreadyExists(second.status())) << second.status();
  const std::string file = tmp_.File("plain");
  std::ofstream(file) << "data";
  auto third = Intake::Start({file}, batcher_.get(), &clock_);
  EXPECT_TRUE(absl::IsFailedPrecondition(third.status())) << third.status();
  auto too_long =
      Intake::Start({"/tmp/" + std::string(200, 'z')}, batcher_.get(), &clock_);
  EXPECT_TRUE(absl::IsInvalidArgument(too_long.status()));
}

// Whether a write on `fd` fails because the agent closed it (EPIPE).
bool WriteFailsClosed(int fd) {
  const char byte = '\n';
  return ::send(fd, &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
         errno == EPIPE;
}

// Issue 15 item 4: 256 idle connections used to make the next client's
// events disappear (accepted and closed at once, nothing counted).
TEST_F(IntakeTest, IdleClientsAtTheLimitMakeRoomForANewOne) {
  StartIntake(1 << 20, /*max_connections=*/256);
  std::vector<int> idle;
  for (int i = 0; i < 256; ++i) {
    auto fd = ConnectUnix(socket_);
    ASSERT_TRUE(fd.ok()) << i;
    idle.push_back(*fd);
  }
  ASSERT_TRUE(intake_->AwaitStats(
      [](const Intake::Stats& s) { return s.open_connections == 256; },
      kTimeout));
  clock_.Advance(absl::ToInt64Nanoseconds(absl::Seconds(2)));
  SendAndClose(StepLine("a", 1));
  ASSERT_TRUE(intake_->AwaitStats(
      [](const Intake::Stats& s) { return s.accepted_lines == 1; }, kTimeout));
  EXPECT_EQ(intake_->stats().evicted, 1);
  EXPECT_EQ(intake_->stats().evicted, 1);
  // The one closed for it learns on its next write instead of losing it.
  int failed = 0;
  for (int fd : idle) failed += WriteFailsClosed(fd) ? 1 : 0;
  EXPECT_EQ(failed, 1);
  for (int fd : idle) ::close(fd);
  EXPECT_EQ(Spooled().size(), 1u);
}

TEST_F(IntakeTest, AtTheLimitWithNobodyIdleANewClientWaitsAndIsNotLost) {
  StartIntake(1 << 20, /*max_connections=*/2);
  std::vector<int> busy;
  for (int i = 0; i < 2; ++i) {
    auto fd = ConnectUnix(socket_);
    ASSERT_TRUE(fd.ok());
    busy.push_back(*fd);
  }
  ASSERT_TRUE(intake_->AwaitStats(
      [](const Intake::Stats& s) { return s.open_connections == 2; },
      kTimeout));
  SendAndClose(StepLine("a", 1));  // queued in the backlog, not dropped
  ASSERT_TRUE(intake_->AwaitStats(
      [](const Intake::Stats& s) { return s.full_waits == 1; }, kTimeout));
  EXPECT_EQ(intake_->stats().accepted_lines, 0);
  EXPECT_EQ(intake_->stats().full_waits, 1);
  ::close(busy[0]);
  ASSERT_TRUE(intake_->AwaitStats(
      [](const Intake::Stats& s) { return s.accepted_lines == 1; }, kTimeout));
  ::close(busy[1]);
  EXPECT_TRUE(AwaitClosed(3));
}

TEST_F(IntakeTest, AClientIdleForTheTimeoutIsClosedAndItsNextWriteFails) {
  auto intake =
      Intake::Start({socket_, 1 << 20, 256, /*idle_timeout=*/absl::Minutes(1)},
                    batcher_.get(), &clock_);
  ASSERT_TRUE(intake.ok()) << intake.status();
  intake_ = *std::move(intake);
  auto fd = ConnectUnix(socket_);
  ASSERT_TRUE(fd.ok());
  ASSERT_TRUE(SendAll(*fd, StepLine("a", 1)));
  ASSERT_TRUE(intake_->AwaitStats(
      [](const Intake::Stats& s) { return s.accepted_lines == 1; }, kTimeout));
  clock_.Advance(absl::ToInt64Nanoseconds(absl::Minutes(2)));
  ASSERT_TRUE(intake_->AwaitStats(
      [](const Intake::Stats& s) { return s.idle_closed == 1; }, kTimeout));
  EXPECT_TRUE(WriteFailsClosed(*fd));
  EXPECT_EQ(intake_->stats().idle_closed, 1);
  ::close(*fd);
}

TEST_F(IntakeTest, StopWithOpenClientsCountsTheirPartialLines) {
  StartIntake();
  auto fd = ConnectUnix(socket_);
  ASSERT_TRUE(fd.ok());
  ASSERT_TRUE(SendAll(*fd, StepLine("a", 1) + "{\"par"));
  ASSERT_TRUE(intake_->AwaitStats(
      [](const Intake::Stats& s) { return s.accepted_lines == 1; }, kTimeout));
  intake_->Stop();
  EXPECT_EQ(intake_->stats().partial_lines, 1);
  EXPECT_EQ(intake_->stats().open_connections, 0);
  ::close(*fd);
}

// --- ack mode (docs/delivery.md, "The ack mode") ---------------------------

std::string AckLine(const std::string& id, int step) {
  std::string event = StepLine("a", step);
  event.pop_back();  // its '\n'
  return absl::StrCat("{\"id\":\"", id, "\",\"event\":", event, "}\n");
}

// Reads lines from `fd` until one contains `want` (true) or EOF / 20 s
// pass (false); `*got` is everything read.
bool ReadUntil(int fd, const std::string& want, std::string* got) {
  timeval timeout{20, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  char buffer[4096];
  while (got->find(want) == std::string::npos) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n <= 0) return false;
    got->append(buffer, static_cast<size_t>(n));
  }
  return true;
}

// Events in the spool's batch files now (without flushing the batcher).
size_t SpooledNow(const Spool& spool) {
  size_t n = 0;
  for (uint64_t seq : spool.Pending()) n += spool.Read(seq)->events_size();
  return n;
}

class AckModeTest : public IntakeTest {
 protected:
  // A connection that said hello and got it back.
  int Hello() {
    auto fd = ConnectUnix(socket_);
    EXPECT_TRUE(fd.ok()) << fd.status();
    EXPECT_TRUE(SendAll(*fd, absl::StrCat(Intake::kAckHello, "\n")));
    std::string got;
    EXPECT_TRUE(ReadUntil(*fd, "\n", &got));
    EXPECT_EQ(got, absl::StrCat(Intake::kAckHello, "\n"));
    return *fd;
  }
};

TEST_F(AckModeTest, AckComesAfterTheLinesAreInTheSpool) {
  StartIntake();
  int fd = Hello();
  ASSERT_TRUE(SendAll(fd, AckLine("e1", 1) + AckLine("e2", 2) +
                              "{\"id\":\"e3\",\"event\":{\"job_id\":\"a\"}}\n" +
                              AckLine("e4", 4)));
  std::string got;
  ASSERT_TRUE(ReadUntil(fd, "{\"acked\":4}\n", &got)) << got;
  // The batcher's delay is an hour: only the ack round's sync wrote them.
  EXPECT_EQ(SpooledNow(*spool_), 3u);
  EXPECT_THAT(got, ::testing::HasSubstr("{\"rejected\":{\"line\":4,"));
  EXPECT_THAT(got, ::testing::HasSubstr("body: no event body"));
  auto batch = spool_->Read(spool_->Pending().back());
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(batch->event_ids(0), EventIds::Hash("e1"));
  EXPECT_EQ(intake_->stats().ack_connections, 1);
  ::close(fd);
}

TEST_F(AckModeTest, AResentIdIsAckedAndNotSpooledAgain) {
  StartIntake();
  int first = Hello();
  ASSERT_TRUE(SendAll(first, AckLine("e1", 1)));
  std::string got;
  ASSERT_TRUE(ReadUntil(first, "{\"acked\":1}", &got));
  ::close(first);  // as if the ack had been lost: the client resends
  int second = Hello();
  ASSERT_TRUE(SendAll(second, AckLine("e1", 1) + AckLine("e2", 2)));
  got.clear();
  ASSERT_TRUE(ReadUntil(second, "{\"acked\":2}", &got)) << got;
  EXPECT_EQ(SpooledNow(*spool_), 2u);
  EXPECT_EQ(intake_->stats().duplicate_lines, 1);
  EXPECT_EQ(intake_->stats().duplicate_lines, 1);
  ::close(second);
}

TEST_F(AckModeTest, PlainLinesInAckModeAreRejectedByField) {
  StartIntake();
  int fd = Hello();
  ASSERT_TRUE(SendAll(fd, StepLine("a", 1) + "{\"id\":7,\"event\":{}}\n"));
  std::string got;
  ASSERT_TRUE(ReadUntil(fd, "{\"acked\":2}", &got)) << got;
  EXPECT_THAT(got, ::testing::HasSubstr("want {\\\"id\\\""));
  EXPECT_THAT(
      got, ::testing::HasSubstr("id: want a string of 1 to 128 bytes, got 7"));
  EXPECT_EQ(SpooledNow(*spool_), 0u);
  ::close(fd);
}

TEST_F(AckModeTest, PlainWritersGetNoReply) {
  StartIntake();
  auto fd = ConnectUnix(socket_);
  ASSERT_TRUE(fd.ok());
  ASSERT_TRUE(SendAll(*fd, StepLine("a", 1)));
  ASSERT_TRUE(intake_->AwaitStats(
      [](const Intake::Stats& s) { return s.accepted_lines == 1; }, kTimeout));
  ::shutdown(*fd, SHUT_WR);  // the agent closes it: EOF, with no bytes first
  std::string got;
  EXPECT_FALSE(ReadUntil(*fd, "\n", &got));
  EXPECT_EQ(got, "");
  ::close(*fd);
}

TEST_F(AckModeTest, ADroppedBatchIsNotAckedAndItsIdsAreFreed) {
  OpenSpool(/*max_bytes=*/16);  // every batch is refused: spool full
  StartIntake();
  int fd = Hello();
  ASSERT_TRUE(SendAll(fd, AckLine("e1", 1)));
  std::string got;
  EXPECT_FALSE(ReadUntil(fd, "acked", &got));  // closed, no ack
  EXPECT_EQ(got, "");
  // Counted just after the close the client saw: wait for it.
  EXPECT_TRUE(intake_->AwaitStats(
      [](const Intake::Stats& s) { return s.failed_syncs == 1; }, kTimeout));
  EXPECT_FALSE(ids_->Contains(EventIds::Hash("e1")));  // a resend is taken
  ::close(fd);
}

}  // namespace
}  // namespace goodput::agent
