#include "agent/batcher.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/testing/test_util.h"
#include "codec/line_decoder.h"
#include "codec/plain_step.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "util/fault_injecting_file_system.h"
#include "util/posix_file_system.h"

namespace goodput::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int64_t kStart = int64_t{1790000000} * 1000000000;

v1::Event Step(int step, const std::string& host = "") {
  v1::Event e;
  e.set_job_id("job");
  e.set_host(host);
  e.mutable_step()->set_step(step);
  return e;
}

// A job_submitted event with 32 labels of 256-byte values (~8.6 KB), as in
// issue 15, where 300 of them made a batch goodputd refused.
v1::Event BigEvent(int i) {
  v1::Event e;
  e.set_job_id(absl::StrCat("job-", i));
  auto* labels = e.mutable_job_submitted()->mutable_labels();
  for (int l = 0; l < 32; ++l) {
    (*labels)[absl::StrCat("label-", l)] = std::string(256, 'a' + l % 26);
  }
  return e;
}

// A valid line: mostly plain steps (host and attempt or not, quoted step
// or not), some steps with amounts and some other events.
std::string RandomLine(std::mt19937& rng) {
  const int kind = static_cast<int>(rng() % 10);
  const std::string time =
      absl::StrCat(R"("time":"2026-11-22T10:)", 10 + rng() % 50, ":0",
                   rng() % 10, ".", rng() % 1000, "Z\"");
  const std::string job = absl::StrCat(R"("job_id":"job-)", rng() % 1000, "\"");
  const std::string host =
      rng() % 2 ? absl::StrCat(R"(,"host":"h-)", rng() % 9, "\"") : "";
  const std::string attempt = rng() % 3 == 0 ? R"(,"attempt":"a-1")" : "";
  const uint64_t step = rng() % 3 == 0 ? 0 : rng() % 100000;
  if (kind == 0) {
    return absl::StrCat("{", time, ",", job, host, R"(,"checkpoint":{"step":)",
                        step, "}}");
  }
  if (kind == 1) {
    return absl::StrCat("{", time, ",", job, host, R"(,"step":{"step":)", step,
                        R"(,"flops":1e15}})");
  }
  return absl::StrCat("{", time, ",", job, host, attempt,
                      kind % 2 ? R"(,"step":{"step":")" : R"(,"step":{"step":)",
                      step, kind % 2 ? "\"}}" : "}}");
}

// The names of the files in `dir`.
std::vector<std::string> FilesOf(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.is_regular_file()) out.push_back(e.path().filename().string());
  }
  return out;
}

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class BatcherTest : public ::testing::Test {
 protected:
  void Open(size_t batch_events, uint64_t max_bytes = uint64_t{1} << 30,
            uint64_t batch_bytes = uint64_t{1} << 20) {
    auto spool = Spool::Open({tmp_.path(), max_bytes, &faulty_});
    ASSERT_TRUE(spool.ok()) << spool.status();
    spool_ = *std::move(spool);
    Batcher::Options options{batch_events, absl::Milliseconds(200), "host-1",
                             [this] { ++started_; }};
    options.batch_bytes = batch_bytes;
    batcher_ = std::make_unique<Batcher>(options, spool_.get(), &clock_);
  }

  testing::TempDir tmp_;
  PosixFileSystem posix_;
  FaultInjectingFileSystem faulty_{&posix_};  // no faults unless injected
  FakeClock clock_{kStart};
  std::unique_ptr<Spool> spool_;
  std::unique_ptr<Batcher> batcher_;
  int started_ = 0;
};

TEST_F(BatcherTest, FlushesWhenBatchEventsReached) {
  Open(/*batch_events=*/3);
  batcher_->Add(Step(1));
  batcher_->Add(Step(2));
  EXPECT_THAT(spool_->Pending(), IsEmpty());
  batcher_->Add(Step(3));
  ASSERT_THAT(spool_->Pending(), ElementsAre(1));
  auto batch = spool_->Read(1);
  ASSERT_EQ(batch->events_size(), 3);
  EXPECT_EQ(batch->events(2).step().step(), 3);
  EXPECT_EQ(batcher_->buffered(), 0u);
  EXPECT_EQ(batcher_->stats().spooled_batches, 1);
  EXPECT_EQ(batcher_->stats().spooled_events, 3);
}

using Fault = FaultInjectingFileSystem::Fault;

TEST_F(BatcherTest, SyncCommitsTheSpoolAndReportsAFailedCommit) {
  Open(/*batch_events=*/1);
  batcher_->Add(Step(1));
  ASSERT_TRUE(batcher_->Sync().ok());
  batcher_->Add(Step(2));  // appended, its rename not yet synced
  faulty_.Inject(Fault::kFsyncFails);
  absl::Status s = batcher_->Sync();  // the ack mode acks nothing then
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(faulty_.fired(Fault::kFsyncFails), 1);
  EXPECT_EQ(batcher_->stats().write_errors_io, 1);
  EXPECT_TRUE(spool_->Stats().failing);
  EXPECT_EQ(batcher_->stats().dropped_events, 0);  // nothing lost
  EXPECT_THAT(spool_->Pending(), ElementsAre(1, 2));
  EXPECT_TRUE(batcher_->Sync().ok());  // committed again
}

TEST_F(BatcherTest, PollCommitsAtMostOncePerBatchDelay) {
  Open(/*batch_events=*/1);
  batcher_->Add(Step(1));
  faulty_.Inject(Fault::kFsyncFails, -1);  // every directory fsync fails
  batcher_->Poll();
  EXPECT_EQ(faulty_.fired(Fault::kFsyncFails), 1);
  clock_.Advance(absl::ToInt64Nanoseconds(absl::Milliseconds(199)));
  batcher_->Poll();
  EXPECT_EQ(faulty_.fired(Fault::kFsyncFails), 1);
  clock_.Advance(absl::ToInt64Nanoseconds(absl::Milliseconds(1)));
  batcher_->Poll();
  EXPECT_EQ(faulty_.fired(Fault::kFsyncFails), 2);
  EXPECT_EQ(batcher_->stats().write_errors_io, 2);
  faulty_.Clear();
  clock_.Advance(absl::ToInt64Nanoseconds(absl::Milliseconds(200)));
  batcher_->Poll();
  EXPECT_EQ(spool_->Stats().sync_errors, 2u);
  EXPECT_EQ(batcher_->stats().write_errors_io, 2);
}

TEST_F(BatcherTest, FlushesWhenDelayElapsesOnTheClock) {
  Open(/*batch_events=*/100);
  batcher_->Add(Step(1));
  clock_.Advance(absl::ToInt64Nanoseconds(absl::Milliseconds(50)));
  batcher_->Add(Step(2));
  EXPECT_EQ(batcher_->DeadlineNanos(),
            kStart + absl::ToInt64Nanoseconds(absl::Milliseconds(200)));
  clock_.Advance(absl::ToInt64Nanoseconds(absl::Milliseconds(149)));
  batcher_->Poll();
  EXPECT_THAT(spool_->Pending(), IsEmpty());
  clock_.Advance(absl::ToInt64Nanoseconds(absl::Milliseconds(1)));
  batcher_->Poll();
  ASSERT_THAT(spool_->Pending(), ElementsAre(1));
  EXPECT_EQ(spool_->Read(1)->events_size(), 2);
  // The batch's receive time is its first event's: the age metric's base.
  EXPECT_EQ(spool_->Stats().oldest_received_ns, kStart);
  EXPECT_EQ(batcher_->DeadlineNanos(), std::nullopt);
  EXPECT_EQ(started_, 1);
}

TEST_F(BatcherTest, PollWithNothingBufferedWritesNothing) {
  Open(10);
  clock_.Advance(absl::ToInt64Nanoseconds(absl::Hours(1)));
  batcher_->Poll();
  batcher_->Flush();
  EXPECT_THAT(spool_->Pending(), IsEmpty());
}

TEST_F(BatcherTest, FillsHostOnlyWhenMissing) {
  Open(2);
  batcher_->Add(Step(1));
  batcher_->Add(Step(2, "other-host"));
  auto batch = spool_->Read(1);
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(batch->events(0).host(), "host-1");
  EXPECT_EQ(batch->events(1).host(), "other-host");
}

TEST_F(BatcherTest, FullSpoolDropsAndCountsEvents) {
  Open(/*batch_events=*/2, /*max_bytes=*/64);
  for (int i = 1; i <= 6; ++i) batcher_->Add(Step(i, "a-rather-long-host"));
  EXPECT_THAT(spool_->Pending(), IsEmpty());
  EXPECT_EQ(batcher_->stats().dropped_events, 6);
  EXPECT_EQ(batcher_->stats().spooled_events, 0);
  EXPECT_EQ(batcher_->buffered(), 0u);  // memory stays bounded
}

TEST_F(BatcherTest, SplitsBatchesOnTheEventBoundaryBeforeBatchBytes) {
  constexpr uint64_t kCap = 100 * 1000;
  Open(/*batch_events=*/500, uint64_t{1} << 30, kCap);
  for (int i = 0; i < 300; ++i) batcher_->Add(BigEvent(i));
  batcher_->Flush();
  int next = 0;
  for (uint64_t seq : spool_->Pending()) {
    auto batch = spool_->Read(seq);
    ASSERT_TRUE(batch.ok()) << batch.status();
    EXPECT_LE(batch->ByteSizeLong(), kCap) << "batch " << seq;
    // Full batches: one more event would not have fit.
    if (seq != spool_->Pending().back()) {
      EXPECT_GT(batch->ByteSizeLong() + BigEvent(next).ByteSizeLong(), kCap);
    }
    for (const v1::Event& e : batch->events()) {
      EXPECT_EQ(e.job_id(), absl::StrCat("job-", next++));  // order kept
    }
  }
  EXPECT_EQ(next, 300);
  EXPECT_GE(spool_->Pending().size(), 26u);  // 300 x ~8.6 KB / 100 KB
}

TEST_F(BatcherTest, AnEventOverBatchBytesGoesAlone) {
  Open(/*batch_events=*/500, uint64_t{1} << 30, /*batch_bytes=*/1000);
  batcher_->Add(Step(1));
  batcher_->Add(BigEvent(0));
  batcher_->Add(Step(2));
  batcher_->Flush();
  ASSERT_THAT(spool_->Pending(), ElementsAre(1, 2, 3));
  EXPECT_EQ(spool_->Read(2)->events_size(), 1);
  EXPECT_EQ(spool_->Read(2)->events(0).job_id(), "job-0");
}

// The intake's fast path (AddPlainStep for plain step lines, Add of
// LineDecoder's event for the others) writes batch files byte for byte as
// Add of LineDecoder's event for every line does: random lines, plain and
// not, with and without a host, split by count and by bytes.
TEST(BatcherWireTest, PlainStepsSpoolTheBytesOfTheirDecodedEvents) {
  testing::TempDir fast_dir, full_dir;
  FakeClock clock{kStart};
  auto fast = Spool::Open({fast_dir.path()});
  ASSERT_TRUE(fast.ok()) << fast.status();
  {  // the same identity, so the files can be compared whole
    std::ofstream(full_dir.File("agent_id")) << (*fast)->agent_id() << "\n";
  }
  auto full = Spool::Open({full_dir.path()});
  ASSERT_TRUE(full.ok()) << full.status();
  Batcher::Options options{7, absl::Milliseconds(200), "host-1"};
  options.batch_bytes = 500;
  Batcher fast_batcher(options, fast->get(), &clock);
  Batcher full_batcher(options, full->get(), &clock);
  codec::LineDecoder decoder;
  codec::PlainStepDecoder plain;
  std::mt19937 rng(15);
  int plain_lines = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::string line = RandomLine(rng);
    v1::Event event;
    ASSERT_TRUE(decoder.DecodeLine(line, &event).ok()) << line;
    full_batcher.Add(event);
    codec::PlainStep step;
    if (plain.Decode(line, decoder.limits(), &step)) {
      fast_batcher.AddPlainStep(step);
      ++plain_lines;
    } else {
      fast_batcher.Add(std::move(event));
    }
  }
  fast_batcher.Flush();
  full_batcher.Flush();
  EXPECT_GT(plain_lines, 1000);
  ASSERT_GT((*full)->Pending().size(), 250u);
  ASSERT_EQ((*fast)->Pending(), (*full)->Pending());
  for (const std::string& name : FilesOf(full_dir.path())) {
    EXPECT_EQ(ReadWhole(fast_dir.File(name)), ReadWhole(full_dir.File(name)))
        << name;
  }
}

TEST_F(BatcherTest, FlushWritesAPartialBatch) {
  Open(100);
  batcher_->Add(Step(1));
  batcher_->Flush();
  ASSERT_THAT(spool_->Pending(), ElementsAre(1));
  EXPECT_EQ(spool_->Read(1)->events_size(), 1);
}

}  // namespace
}  // namespace goodput::agent
