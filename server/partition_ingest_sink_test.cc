// Cluster mode's apply side end to end without NATS: agents' batches go
// through BatchPublisher into a (fake) replicated log, a ClusterMember
// applies its partitions through PartitionIngestSink into an Ingestor over
// a real RocksDB (host heartbeats through their own subject, which every
// member applies); the report equals the replay of the events, through a
// crash and restart and through messages applied twice.
#include "server/partition_ingest_sink.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "cluster/batch_publisher.h"
#include "cluster/cluster_member.h"
#include "cluster/lease_keeper.h"
#include "cluster/partition_snapshots.h"
#include "cluster/testing/fake_event_log.h"
#include "cluster/testing/fake_lease_store.h"
#include "core/event_order.h"
#include "core/testing/expect.h"
#include "core/testing/random_fleet.h"
#include "core/testing/timeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/rocksdb_event_store.h"
#include "util/clock.h"

namespace goodput::server {
namespace {

using ::goodput::core::testing::ExpectEqualReports;
using ::goodput::core::testing::RandomFleet;
using ::goodput::core::testing::Replay;

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kLateness = 5 * kSecond;
constexpr int64_t kTtl = 9 * kSecond;
constexpr int32_t kPartitions = 4;
constexpr int64_t kAsOf = (1795341600LL + 5 * 3600) * kSecond;

class PartitionIngestSinkTest : public ::testing::Test {
 protected:
  PartitionIngestSinkTest()
      : clock_(kAsOf),
        leases_store_(&clock_, kTtl),
        publisher_(&log_, {.partitions = kPartitions}) {
    char tmpl[] = "/tmp/goodput-partition-sink-XXXXXX";
    EXPECT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    Restart();
  }
  ~PartitionIngestSinkTest() override {
    Stop();
    std::filesystem::remove_all(dir_);
  }

  void Stop() {
    member_.reset();
    leases_.reset();
    sink_.reset();
    ingestor_.reset();
    live_.reset();
    store_.reset();
  }
  // A new goodputd process over the same RocksDB directory (as after a
  // kill -9: nothing was flushed at shutdown beyond what was written).
  void Restart() {
    Stop();
    auto store = storage::RocksDbEventStore::Open(dir_, {});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    live_ = std::make_unique<LiveState>(&config_, kLateness, store_.get());
    ingestor_ = std::make_unique<Ingestor>(store_.get(), live_.get(), &clock_,
                                           codec::ValidationLimits());
    ingestor_->set_check_event_times(false);  // as goodputd --cluster does
    ASSERT_TRUE(ingestor_->Recover().ok());
    sink_ = std::make_unique<PartitionIngestSink>(ingestor_.get(), kPartitions);
    // A new lease keeper each time: the restarted instance's old leases
    // lapse after the TTL and it takes them again.
    clock_.Advance(2 * kTtl);
    leases_ = std::make_unique<cluster::LeaseKeeper>(
        &leases_store_, &clock_,
        cluster::LeaseKeeperOptions{
            .self = "a", .partitions = kPartitions, .ttl_ns = kTtl});
    member_ = std::make_unique<cluster::ClusterMember>(
        leases_.get(), &log_, sink_.get(), &publisher_);
  }

  // Publishes `events` as batches of `size` from two agents in turn.
  void Publish(const std::vector<v1::Event>& events, size_t size) {
    for (size_t i = 0; i < events.size(); i += size) {
      v1::Batch batch;
      batch.set_agent_id(i / size % 2 == 0 ? "agent-1" : "agent-2");
      batch.set_sequence(++sequence_[batch.agent_id()]);
      for (size_t j = i; j < std::min(events.size(), i + size); ++j) {
        *batch.add_events() = events[j];
      }
      ASSERT_TRUE(publisher_.Publish(batch).ok());
    }
  }
  // Lease rounds and pumps until every held partition is drained.
  void ApplyAll() {
    ASSERT_TRUE(member_->TickLeases().ok());
    for (;;) {
      absl::StatusOr<int64_t> n = member_->Pump(1000, 0);
      ASSERT_TRUE(n.ok()) << n.status();
      if (*n == 0) break;
    }
  }
  core::FleetReport LiveReport() {
    auto report = ingestor_->Report(kAsOf, std::nullopt);
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *report : core::FleetReport();
  }
  std::string Subject(int32_t partition) {
    return partition == cluster::kHeartbeatPartition
               ? publisher_.HeartbeatSubject()
               : publisher_.PartitionSubject(partition);
  }
  // The last message sequence of `partition`'s subject in the log.
  uint64_t LastInLog(int32_t partition) {
    uint64_t last = 0;
    std::vector<cluster::FakeEventLog::Message> all = log_.messages();
    for (size_t i = 0; i < all.size(); ++i) {
      if (all[i].subject == Subject(partition)) last = i + 1;
    }
    return last;
  }

  // A random fleet's events, host heartbeats included.
  static std::vector<v1::Event> FleetEvents(uint32_t seed) {
    return RandomFleet(seed, 12, 40);
  }

  std::string dir_;
  core::Config config_;
  FakeClock clock_;
  cluster::FakeLeaseStore leases_store_;
  cluster::FakeEventLog log_;
  cluster::BatchPublisher publisher_;
  std::map<std::string, uint64_t> sequence_;
  std::unique_ptr<storage::EventStore> store_;
  std::unique_ptr<LiveState> live_;
  std::unique_ptr<Ingestor> ingestor_;
  std::unique_ptr<PartitionIngestSink> sink_;
  std::unique_ptr<cluster::LeaseKeeper> leases_;
  std::unique_ptr<cluster::ClusterMember> member_;
  cluster::FakeEventLog snapshot_log_;  // GOODPUT_SNAPSHOTS
  cluster::PartitionSnapshots snapshots_{&snapshot_log_};
};

TEST_F(PartitionIngestSinkTest, AppliedPartitionsReportAsTheReplay) {
  const std::vector<v1::Event> events = FleetEvents(7);
  ASSERT_TRUE(std::any_of(events.begin(), events.end(), [](const v1::Event& e) {
    return e.has_heartbeat();
  }));
  Publish(events, 25);
  ApplyAll();
  ExpectEqualReports(LiveReport(), Replay(events, config_, kAsOf));
  for (int32_t p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(*sink_->LastApplied(p), LastInLog(p)) << p;
  }
  EXPECT_EQ(*sink_->LastApplied(cluster::kHeartbeatPartition),
            LastInLog(cluster::kHeartbeatPartition));
}

TEST_F(PartitionIngestSinkTest, ARestartGoesOnFromTheLastAppliedMessage) {
  const std::vector<v1::Event> events = FleetEvents(11);
  const size_t half = events.size() / 2;
  Publish({events.begin(), events.begin() + half}, 25);
  ApplyAll();
  Restart();
  for (int32_t p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(*sink_->LastApplied(p), LastInLog(p)) << p;  // from the store
  }
  Publish({events.begin() + half, events.end()}, 25);
  ApplyAll();
  ExpectEqualReports(LiveReport(), Replay(events, config_, kAsOf));
  EXPECT_EQ(ingestor_->stats().duplicate_batches, 0);  // nothing read twice
}

TEST_F(PartitionIngestSinkTest, AMessageAppliedAgainStoresNothing) {
  const std::vector<v1::Event> events = FleetEvents(3);
  Publish(events, 25);
  ApplyAll();
  // A reader reopened behind what was applied (e.g. a lost position)
  // applies every message again: each is at or below its partition's
  // high-water mark and stores nothing (no Ingestor write at all).
  const int64_t batches = ingestor_->stats().batches;
  std::vector<cluster::FakeEventLog::Message> all = log_.messages();
  int64_t again = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    for (int32_t p = cluster::kHeartbeatPartition; p < kPartitions; ++p) {
      if (all[i].subject != Subject(p)) continue;
      v1::Batch batch;
      ASSERT_TRUE(batch.ParseFromString(all[i].data));
      ASSERT_TRUE(sink_->Apply(p, i + 1, batch).ok());
      ++again;
    }
  }
  ASSERT_GT(again, 0);
  EXPECT_EQ(ingestor_->stats().batches, batches);
  ExpectEqualReports(LiveReport(), Replay(events, config_, kAsOf));
}

TEST_F(PartitionIngestSinkTest, APartitionAppliedYearsLaterKeepsItsEvents) {
  // The accepting instance checked event times on receipt; an owner that
  // applies the log much later (a takeover replaying it) must not refuse
  // events as older than --max_event_age (5 years by default).
  const std::vector<v1::Event> events = FleetEvents(9);
  Publish(events, 25);
  clock_.Advance(int64_t{6} * 365 * 24 * 3600 * kSecond);
  ApplyAll();
  EXPECT_EQ(ingestor_->stats().rejected_events, 0);
  EXPECT_EQ(sink_->rejected_events(), 0);
  ExpectEqualReports(LiveReport(), Replay(events, config_, kAsOf));
}

TEST_F(PartitionIngestSinkTest, APumpedRunIsOneWritePerPartition) {
  const std::vector<v1::Event> events = FleetEvents(13);
  Publish(events, 25);
  size_t subjects = 0, messages = 0;
  for (int32_t p = cluster::kHeartbeatPartition; p < kPartitions; ++p) {
    for (const cluster::FakeEventLog::Message& m : log_.messages()) {
      messages += m.subject == Subject(p) ? 1 : 0;
    }
    subjects += LastInLog(p) > 0 ? 1 : 0;
  }
  ASSERT_GT(messages, 2 * subjects);
  ApplyAll();  // each subject's messages in one fetch (up to 1000)
  EXPECT_EQ(ingestor_->stats().batches, static_cast<int64_t>(subjects));
  ExpectEqualReports(LiveReport(), Replay(events, config_, kAsOf));
  for (int32_t p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(*sink_->LastApplied(p), LastInLog(p)) << p;
  }
}

// The parsed messages of `subject` in `log`, in order.
std::vector<cluster::SequencedBatch> MessagesOf(cluster::FakeEventLog* log,
                                                const std::string& subject) {
  std::vector<cluster::SequencedBatch> out;
  std::vector<cluster::FakeEventLog::Message> all = log->messages();
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].subject != subject) continue;
    cluster::SequencedBatch& m = out.emplace_back();
    m.sequence = i + 1;
    EXPECT_TRUE(m.batch.ParseFromString(all[i].data));
  }
  return out;
}

TEST_F(PartitionIngestSinkTest,
       ARunOverlappingTheLastAppliedStoresOnlyTheRest) {
  Publish(FleetEvents(17), 25);
  int32_t p = 0;
  while (p < kPartitions && MessagesOf(&log_, Subject(p)).size() < 4) ++p;
  ASSERT_LT(p, kPartitions);
  std::vector<cluster::SequencedBatch> all = MessagesOf(&log_, Subject(p));
  int64_t events = 0;
  for (const cluster::SequencedBatch& m : all) events += m.batch.events_size();
  std::vector<cluster::SequencedBatch> first(all.begin(), all.begin() + 2);
  ASSERT_TRUE(sink_->ApplyAll(p, &first).ok());
  ASSERT_EQ(*sink_->LastApplied(p), all[1].sequence);
  // A reader reopened behind: the run starts with the two applied ones.
  std::vector<cluster::SequencedBatch> again = MessagesOf(&log_, Subject(p));
  ASSERT_TRUE(sink_->ApplyAll(p, &again).ok());
  EXPECT_EQ(*sink_->LastApplied(p), all.back().sequence);
  EXPECT_EQ(ingestor_->stats().accepted_events, events);
  EXPECT_EQ(ingestor_->stats().batches, 2);
}

TEST_F(PartitionIngestSinkTest, ARunIsWrittenInPiecesOfBoundedEvents) {
  // Three messages of 3000 events (refused ones: kept as dead letters,
  // so still written): 3000 + 3000 fit in one write, the third does not.
  constexpr int kEach = 3000;
  static_assert(2 * kEach <= PartitionIngestSink::kMaxEventsPerWrite &&
                3 * kEach > PartitionIngestSink::kMaxEventsPerWrite);
  std::vector<cluster::SequencedBatch> run(3);
  for (int i = 0; i < 3; ++i) {
    run[i].sequence = 10 + i;
    for (int j = 0; j < kEach; ++j) run[i].batch.add_events()->set_job_id("j");
  }
  ASSERT_TRUE(sink_->ApplyAll(1, &run).ok());
  EXPECT_EQ(ingestor_->stats().batches, 2);
  EXPECT_EQ(sink_->rejected_events(), 3 * kEach);
  EXPECT_EQ(*sink_->LastApplied(1), 12u);
}

TEST_F(PartitionIngestSinkTest, EachPartitionHasItsOwnHighWaterMark) {
  EXPECT_EQ(PartitionAgentId(3), "cluster.p3");
  v1::Batch batch;
  for (const v1::Event& e : FleetEvents(5)) {
    if (!e.job_id().empty()) {
      *batch.add_events() = e;
      break;
    }
  }
  ASSERT_TRUE(sink_->Apply(1, 40, batch).ok());
  // Another partition's lower sequence is not a duplicate of partition 1's.
  ASSERT_TRUE(sink_->Apply(2, 7, v1::Batch()).ok());
  EXPECT_EQ(*sink_->LastApplied(1), 40u);
  EXPECT_EQ(*sink_->LastApplied(2), 7u);
  EXPECT_EQ(*sink_->LastApplied(0), 0u);
  EXPECT_EQ(ingestor_->stats().duplicate_batches, 0);
}

// A second goodputd (member "b") over its own RocksDB, on the fixture's
// logs, clock and lease bucket, taking partitions over from snapshots.
class Instance {
 public:
  Instance(FakeClock* clock, cluster::FakeLeaseStore* leases,
           cluster::FakeEventLog* log, cluster::BatchPublisher* publisher,
           cluster::PartitionSnapshots* snapshots, const core::Config* config)
      : clock_(clock),
        leases_store_(leases),
        log_(log),
        publisher_(publisher),
        snapshots_(snapshots),
        config_(config) {
    char tmpl[] = "/tmp/goodput-partition-sink-b-XXXXXX";
    EXPECT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    Start();
  }
  ~Instance() {
    Stop();
    std::filesystem::remove_all(dir_);
  }
  void Stop() {
    member.reset();
    leases_.reset();
    sink.reset();
    ingestor.reset();
    live_.reset();
    store_.reset();
  }
  // Opens the store (again: a restart) and joins as "b".
  void Start() {
    Stop();
    auto store = storage::RocksDbEventStore::Open(dir_, {});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    live_ = std::make_unique<LiveState>(config_, kLateness, store_.get());
    ingestor = std::make_unique<Ingestor>(store_.get(), live_.get(), clock_,
                                          codec::ValidationLimits());
    ingestor->set_check_event_times(false);
    ASSERT_TRUE(ingestor->Recover().ok());
    sink = std::make_unique<PartitionIngestSink>(ingestor.get(), kPartitions);
    clock_->Advance(2 * kTtl);  // a restarted b's old leases lapse
    leases_ = std::make_unique<cluster::LeaseKeeper>(
        leases_store_, clock_,
        cluster::LeaseKeeperOptions{
            .self = "b", .partitions = kPartitions, .ttl_ns = kTtl});
    member = std::make_unique<cluster::ClusterMember>(leases_.get(), log_,
                                                      sink.get(), publisher_);
    member->EnableSnapshots(snapshots_, clock_,
                            {.self = "b",
                             .every_events = int64_t{1} << 40,
                             .every_ns = int64_t{1} << 62});
  }
  // Takes every partition (the fixture's member gave them back) and
  // applies until drained; returns the messages applied.
  int64_t ApplyAll() {
    EXPECT_TRUE(member->TickLeases().ok());
    int64_t total = 0;
    for (;;) {
      absl::StatusOr<int64_t> n = member->Pump(1000, 0);
      EXPECT_TRUE(n.ok()) << n.status();
      if (!n.ok() || *n == 0) return total;
      total += *n;
    }
  }

  storage::EventStore* store() { return store_.get(); }

  std::unique_ptr<Ingestor> ingestor;
  std::unique_ptr<PartitionIngestSink> sink;
  std::unique_ptr<cluster::ClusterMember> member;

 private:
  FakeClock* clock_;
  cluster::FakeLeaseStore* leases_store_;
  cluster::FakeEventLog* log_;
  cluster::BatchPublisher* publisher_;
  cluster::PartitionSnapshots* snapshots_;
  const core::Config* config_;
  std::string dir_;
  std::unique_ptr<storage::EventStore> store_;
  std::unique_ptr<LiveState> live_;
  std::unique_ptr<cluster::LeaseKeeper> leases_;
};

class PartitionSnapshotTest : public PartitionIngestSinkTest {
 protected:
  // The fixture's member ("a") applies `first` publishing a snapshot of
  // each partition it pumps, then `rest` without; gives its leases back.
  // Returns each partition's sequence in its newest snapshot.
  std::map<int32_t, uint64_t> ApplyThenSnapshot(
      const std::vector<v1::Event>& first, const std::vector<v1::Event>& rest) {
    member_->EnableSnapshots(&snapshots_, &clock_,
                             {.self = "a", .every_events = 1});
    Publish(first, 25);
    ApplyAll();
    std::map<int32_t, uint64_t> snapshot;
    for (int32_t p = 0; p < kPartitions; ++p) {
      snapshot[p] = *sink_->LastApplied(p);
    }
    member_->EnableSnapshots(&snapshots_, &clock_,
                             {.self = "a",
                              .every_events = int64_t{1} << 40,
                              .every_ns = int64_t{1} << 62});
    Publish(rest, 25);
    ApplyAll();
    EXPECT_TRUE(leases_->Leave().ok());  // "a" is gone
    return snapshot;
  }
  // Messages of `partition`'s subject after `sequence`.
  int64_t MessagesAfter(int32_t partition, uint64_t sequence) {
    int64_t n = 0;
    for (const cluster::SequencedBatch& m :
         MessagesOf(&log_, Subject(partition))) {
      n += m.sequence > sequence ? 1 : 0;
    }
    return n;
  }
  std::unique_ptr<Instance> NewInstance() {
    return std::make_unique<Instance>(&clock_, &leases_store_, &log_,
                                      &publisher_, &snapshots_, &config_);
  }
};

// b never held anything: it imports each partition's newest snapshot and
// reads only the messages after it, and its reports equal a's (which read
// every message) and the replay of every event: nothing lost, nothing
// applied twice. A restart of b keeps the imported jobs.
TEST_F(PartitionSnapshotTest, ImportAndTailReportAsTheWholePartition) {
  const std::vector<v1::Event> events = FleetEvents(21);
  const size_t cut = events.size() * 3 / 5;
  const std::map<int32_t, uint64_t> snapshot =
      ApplyThenSnapshot({events.begin(), events.begin() + cut},
                        {events.begin() + cut, events.end()});
  std::unique_ptr<Instance> b = NewInstance();
  const int64_t applied = b->ApplyAll();
  int64_t tail = static_cast<int64_t>(
      MessagesOf(&log_, Subject(cluster::kHeartbeatPartition)).size());
  int32_t with_snapshot = 0;
  for (const auto& [p, seq] : snapshot) {
    tail += MessagesAfter(p, seq);
    with_snapshot += seq > 0 ? 1 : 0;
    EXPECT_EQ(*b->sink->LastApplied(p), LastInLog(p)) << p;
  }
  EXPECT_EQ(applied, tail);  // the heartbeats and each partition's tail
  EXPECT_EQ(b->member->snapshot_stats().imported, with_snapshot);
  ASSERT_GT(with_snapshot, 0);
  const core::FleetReport whole = LiveReport();
  auto got = b->ingestor->Report(kAsOf, std::nullopt);
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectEqualReports(*got, whole);
  ExpectEqualReports(*got, Replay(events, config_, kAsOf));
  EXPECT_GT(b->ingestor->live_stats().imported_jobs, 0);
  EXPECT_EQ(ingestor_->live_stats().imported_jobs, 0);

  b->Start();  // a restart restores the imported jobs from the store
  EXPECT_EQ(b->ApplyAll(), 0);
  got = b->ingestor->Report(kAsOf, std::nullopt);
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectEqualReports(*got, Replay(events, config_, kAsOf));
}

// b runs under another config than a (here another --stall_after; another
// tracker state version, as in a rolling upgrade, fails the same way): a's
// state records do not load for b, so b imports no snapshot at all, counts
// each as an import error and reads every message of the partitions
// instead. Its reports equal the replay under its own config: no job held
// without its time before the snapshot.
TEST_F(PartitionSnapshotTest, ASnapshotWhoseRecordsDoNotLoadIsNotImported) {
  const std::vector<v1::Event> events = FleetEvents(22);
  const size_t cut = events.size() * 3 / 5;
  const std::map<int32_t, uint64_t> snapshot =
      ApplyThenSnapshot({events.begin(), events.begin() + cut},
                        {events.begin() + cut, events.end()});
  int32_t with_snapshot = 0;
  for (const auto& [p, seq] : snapshot) with_snapshot += seq > 0 ? 1 : 0;
  ASSERT_GT(with_snapshot, 0);
  core::Config other = config_;
  other.stall_after_ns = config_.stall_after_ns + core::kNanosPerSecond;
  Instance b(&clock_, &leases_store_, &log_, &publisher_, &snapshots_, &other);
  b.ApplyAll();
  EXPECT_EQ(b.member->snapshot_stats().imported, 0);
  EXPECT_EQ(b.member->snapshot_stats().import_errors, with_snapshot);
  EXPECT_EQ(b.ingestor->live_stats().imported_jobs, 0);
  for (int32_t p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(*b.sink->LastApplied(p), LastInLog(p)) << p;
  }
  auto got = b.ingestor->Report(kAsOf, std::nullopt);
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectEqualReports(*got, Replay(events, other, kAsOf));
}

// What b cannot answer for the time before its snapshot: an event of an
// imported job older than its imported state is refused (a dead letter
// naming the snapshot), also after a restart, and a report as of before it
// fails saying why. (The jobs run on: no job_ended, so they are imported
// and restored from their state records, not as final reports.)
TEST_F(PartitionSnapshotTest, WhatPrecedesTheSnapshotIsRefusedByName) {
  std::vector<v1::Event> events = FleetEvents(23);
  events.erase(
      std::remove_if(events.begin(), events.end(),
                     [](const v1::Event& e) { return e.has_job_ended(); }),
      events.end());
  ApplyThenSnapshot(events, {});
  std::unique_ptr<Instance> b = NewInstance();
  b->ApplyAll();
  ASSERT_GT(b->member->snapshot_stats().imported, 0);
  auto first_step =
      std::find_if(events.begin(), events.end(),
                   [](const v1::Event& e) { return e.has_step(); });
  ASSERT_NE(first_step, events.end());
  const v1::Event old = *first_step;
  auto past = b->ingestor->JobReport(old.job_id(), core::EventTimeNanos(old),
                                     std::nullopt);
  EXPECT_EQ(past.status().code(), absl::StatusCode::kFailedPrecondition)
      << past.status();
  EXPECT_THAT(std::string(past.status().message()),
              ::testing::HasSubstr("from a partition snapshot"));
  v1::Batch late;
  late.set_agent_id("agent-3");
  for (int restart = 0; restart < 2; ++restart) {
    if (restart) b->Start();  // the imported record says so again
    late.set_sequence(restart + 1);
    *late.add_events() = old;
    late.mutable_events(0)->mutable_step()->set_step(999999);
    ASSERT_TRUE(publisher_.Publish(late).ok());
    b->ApplyAll();
    EXPECT_EQ(b->sink->rejected_events(), 1) << restart;
    late.clear_events();
  }
  std::vector<v1::DeadLetter> letters;
  uint64_t total = 0;
  ASSERT_TRUE(b->store()->DeadLetters(10, &letters, &total).ok());
  ASSERT_EQ(letters.size(), 2u);
  for (const v1::DeadLetter& letter : letters) {
    EXPECT_THAT(letter.reason(), ::testing::HasSubstr("partition snapshot"));
  }
  auto got = b->ingestor->Report(kAsOf, std::nullopt);
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectEqualReports(*got, Replay(events, config_, kAsOf));
}

}  // namespace
}  // namespace goodput::server
