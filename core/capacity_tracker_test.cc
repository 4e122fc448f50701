// Capacity chip-seconds (SPEC section 3 rule 10) are exact: they do not
// depend on how the hosts' heartbeats interleave, so live and replay agree
// to the last bit.
#include "core/capacity_tracker.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace goodput::core {
namespace {

constexpr int64_t kMilli = 1'000'000;
constexpr int64_t kTen = 1795341600 * kNanosPerSecond;  // 2026-11-22T10:00Z

v1::Event Beat(const std::string& host, int64_t ms, int64_t chips) {
  v1::Event e;
  e.mutable_time()->set_seconds((kTen + ms * kMilli) / kNanosPerSecond);
  e.mutable_time()->set_nanos(
      static_cast<int32_t>((kTen + ms * kMilli) % kNanosPerSecond));
  e.set_host(host);
  e.mutable_heartbeat()->set_chips(chips);
  e.mutable_heartbeat()->set_accelerator("tpu-v5p");
  return e;
}

std::map<std::string, double> Capacity(const std::vector<v1::Event>& beats,
                                       int64_t as_of_ns) {
  Config config;
  CapacityTracker capacity(&config);
  for (const v1::Event& e : beats) capacity.Apply(e);
  return capacity.ChipSeconds(as_of_ns);
}

// Hosts h1, h2, h3 hold 0.1, 0.2 and 0.3 chip-seconds before their second
// heartbeat. In doubles, (0.1 + 0.2) + 0.3 != (0.3 + 0.2) + 0.1.
TEST(CapacityTrackerTest, SumIsTheSameForEveryInterleavingOfHosts) {
  const std::vector<v1::Event> first = {Beat("h1", 0, 1), Beat("h2", 0, 1),
                                        Beat("h3", 0, 1)};
  const std::vector<v1::Event> second = {Beat("h1", 100, 0), Beat("h2", 200, 0),
                                         Beat("h3", 300, 0)};
  std::vector<v1::Event> forward = first, backward = first;
  forward.insert(forward.end(), second.begin(), second.end());
  backward.insert(backward.end(), second.rbegin(), second.rend());
  const int64_t as_of = kTen + kNanosPerSecond;
  const std::map<std::string, double> want = {{"tpu-v5p", 0.6}};
  EXPECT_EQ(Capacity(forward, as_of), want);
  EXPECT_EQ(Capacity(backward, as_of), want);
}

// Open heartbeats (no next one yet) are summed exactly too, whatever the
// order in which the hosts were first seen.
TEST(CapacityTrackerTest, OpenHeartbeatsSumExactlyInAnyHostOrder) {
  std::vector<v1::Event> beats = {Beat("h1", 900, 1), Beat("h2", 800, 1),
                                  Beat("h3", 700, 1)};
  const std::map<std::string, double> want = {{"tpu-v5p", 0.6}};
  const int64_t as_of = kTen + kNanosPerSecond;
  do {
    EXPECT_EQ(Capacity(beats, as_of), want);
  } while (std::next_permutation(beats.begin(), beats.end(),
                                 [](const v1::Event& a, const v1::Event& b) {
                                   return a.host() < b.host();
                                 }));
}

// HOSTS and FLEET exclusions leave their hosts' time out of capacity
// (docs/semantics.md, "Exclusions"), overlaps once, also for a host first
// seen after the exclusion was applied, and within a --since window.
// h1 (4 chips) and h2 (8) beat at 0 and 60 s, h3 (1) at 50 s; as of 100 s.
// FLEET excludes 10 -> 20, HOSTS h1 15 -> 40, HOSTS h3 40 -> 60.
TEST(CapacityTrackerTest, HostAndFleetExclusionsLeaveTheirHostsTimeOut) {
  auto capacity = [](int64_t since_s) {
    Config config;
    config.since_ns = kTen + since_s * kNanosPerSecond;
    CapacityTracker c(&config);
    auto at = [](int64_t s) { return kTen + s * kNanosPerSecond; };
    c.Apply(Beat("h1", 0, 4));
    c.Apply(Beat("h2", 0, 8));
    c.Exclude(at(10), at(20), {});
    c.Exclude(at(15), at(40), {"h1"});
    c.Exclude(at(40), at(60), {"h3"});
    c.Apply(Beat("h3", 50'000, 1));
    c.Apply(Beat("h1", 60'000, 4));
    c.Apply(Beat("h2", 60'000, 8));
    return c.ChipSeconds(at(100)).at("tpu-v5p");
  };
  // h1: 100 - 30 (10 -> 40) = 70 s x 4; h2: 90 s x 8; h3: 50 - 10 s x 1.
  EXPECT_EQ(capacity(-1), 280 + 720 + 40);
  // Since 30 s: h1 60 s (30 -> 40 out) x 4, h2 70 s x 8, h3 40 s.
  EXPECT_EQ(capacity(30), 240 + 560 + 40);
}

// A restart resumes from a saved state: restore it into a new tracker,
// add the exclusions again, apply the heartbeats after it, and every
// capacity sum equals an uninterrupted tracker's to the last bit. Random
// hosts, accelerators, gaps past the timeout and exclusions; saved at
// every point of the stream.
TEST(CapacityTrackerTest, SavedStatePlusTheRestEqualsAnUninterruptedRun) {
  std::mt19937 rng(7);
  Config config;
  config.host_timeout_ns = 30 * kNanosPerSecond;
  std::vector<v1::Event> beats;
  int64_t ms = 0;
  for (int i = 0; i < 60; ++i) {
    ms += static_cast<int64_t>(rng() % 20'000);
    v1::Event e = Beat("h" + std::to_string(rng() % 5), ms, rng() % 9);
    e.mutable_heartbeat()->set_accelerator(rng() % 2 ? "tpu-v5p" : "h100");
    beats.push_back(e);
  }
  auto exclude = [](CapacityTracker* c) {
    c->Exclude(kTen + 100 * kNanosPerSecond, kTen + 250 * kNanosPerSecond,
               {"h1", "h3"});
    c->Exclude(kTen + 400 * kNanosPerSecond, kTen + 420 * kNanosPerSecond, {});
  };
  const int64_t as_of = kTen + (ms + 45'000) * kMilli;
  CapacityTracker whole(&config);
  exclude(&whole);
  for (const v1::Event& e : beats) whole.Apply(e);
  const std::map<std::string, double> want = whole.ChipSeconds(as_of);
  for (size_t cut = 0; cut <= beats.size(); ++cut) {
    CapacityTracker before(&config);
    exclude(&before);
    for (size_t i = 0; i < cut; ++i) before.Apply(beats[i]);
    internal::v1::CapacityTrackerState state;
    before.SaveState(&state);
    CapacityTracker after(&config);
    ASSERT_TRUE(after.RestoreState(state).ok()) << cut;
    exclude(&after);
    for (size_t i = cut; i < beats.size(); ++i) after.Apply(beats[i]);
    EXPECT_EQ(after.ChipSeconds(as_of), want) << cut;
  }
}

TEST(CapacityTrackerTest, RestoreRefusesAnotherTimeoutOrABrokenState) {
  Config config;
  CapacityTracker c(&config);
  c.Apply(Beat("h1", 0, 4));
  c.Apply(Beat("h1", 1000, 4));
  internal::v1::CapacityTrackerState state;
  c.SaveState(&state);
  ASSERT_EQ(state.closed_size(), 1);
  EXPECT_EQ(state.closed(0).low(), 4'000'000'000u);  // 1 s x 4 chips
  Config other;
  other.host_timeout_ns = config.host_timeout_ns + 1;
  CapacityTracker d(&other);
  EXPECT_EQ(d.RestoreState(state).code(), absl::StatusCode::kInvalidArgument);
  internal::v1::CapacityTrackerState twice = state;
  *twice.add_hosts() = state.hosts(0);
  CapacityTracker e(&config);
  const absl::Status s = e.RestoreState(twice);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("\"h1\""), std::string::npos) << s;
  EXPECT_TRUE(e.empty());  // nothing changed
}

}  // namespace
}  // namespace goodput::core
