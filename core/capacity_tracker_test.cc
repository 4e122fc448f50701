// Capacity chip-seconds (SPEC section 3 rule 10) are exact: they do not
// depend on how the hosts' heartbeats interleave, so live and replay agree
// to the last bit.
#include "core/capacity_tracker.h"

#include <algorithm>
#include <cstdint>
#include <map>
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

}  // namespace
}  // namespace goodput::core
