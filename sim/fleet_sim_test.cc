#include "sim/fleet_sim.h"

#include <cstdint>
#include <map>

#include "gtest/gtest.h"
#include "sim/event_sink.h"

namespace goodput::sim {
namespace {

constexpr int64_t kHour = 3600'000;

// Counts job arrivals and ends per simulated hour; stops the simulator at
// `stop_ms` (a steady fleet runs until its sink stops it).
class HourlySink : public EventSink {
 public:
  HourlySink(int64_t start_ms, int64_t stop_ms)
      : start_ms_(start_ms), stop_ms_(stop_ms) {}
  void Emit(const v1::Event& e) override {
    last_ms_ = e.time().seconds() * 1000 + e.time().nanos() / 1'000'000;
    const int64_t hour = (last_ms_ - start_ms_) / kHour;
    if (e.has_job_submitted()) ++submitted_[hour];
    if (e.has_job_ended()) ++ended_[hour];
  }
  bool Stopped() const override { return last_ms_ >= stop_ms_; }
  // Jobs submitted and not ended by the end of `hour`.
  int64_t InFleetAfter(int64_t hour) const {
    int64_t n = 0;
    for (const auto& [h, c] : submitted_) n += h <= hour ? c : 0;
    for (const auto& [h, c] : ended_) n -= h <= hour ? c : 0;
    return n;
  }
  int64_t Submitted(int64_t hour) const { return Get(submitted_, hour); }
  int64_t Ended(int64_t hour) const { return Get(ended_, hour); }
  int64_t last_ms() const { return last_ms_; }

 private:
  static int64_t Get(const std::map<int64_t, int64_t>& m, int64_t hour) {
    auto it = m.find(hour);
    return it == m.end() ? 0 : it->second;
  }
  int64_t start_ms_, stop_ms_, last_ms_ = 0;
  std::map<int64_t, int64_t> submitted_, ended_;
};

SimConfig Steady() {
  SimConfig c;
  c.duration_ms = 0;
  c.hosts = 64;
  c.jobs = 20;
  c.job_duration_ms = kHour;
  c.max_job_chips = 64;
  return c;
}

TEST(FleetSimTest, SteadyFleetKeepsJobsArrivingAndEndingUntilTheSinkStops) {
  const SimConfig c = Steady();
  HourlySink sink(c.start_ms, c.start_ms + 48 * kHour);
  FleetSim sim(c);
  ASSERT_TRUE(sim.Run(sink).ok());
  EXPECT_GE(sink.last_ms(), c.start_ms + 48 * kHour);  // ran past any end
  EXPECT_LT(sink.last_ms(), c.start_ms + 49 * kHour);  // and stopped there
  for (int64_t hour : {12, 24, 36, 47}) {
    // Little's law: about `jobs` in the fleet at any time, never empty.
    EXPECT_GE(sink.InFleetAfter(hour), c.jobs / 4) << "hour " << hour;
    EXPECT_LE(sink.InFleetAfter(hour), c.jobs * 4) << "hour " << hour;
    EXPECT_GT(sink.Submitted(hour) + sink.Submitted(hour - 1), 0) << hour;
    EXPECT_GT(sink.Ended(hour) + sink.Ended(hour - 1), 0) << hour;
  }
}

TEST(FleetSimTest, AWindowedFleetStopsAtItsDuration) {
  SimConfig c = Steady();
  c.duration_ms = 6 * kHour;
  HourlySink sink(c.start_ms, c.start_ms + 48 * kHour);
  FleetSim sim(c);
  ASSERT_TRUE(sim.Run(sink).ok());
  EXPECT_LT(sink.last_ms(), c.start_ms + 6 * kHour);
  EXPECT_EQ(sim.truth().jobs.size(), static_cast<size_t>(c.jobs));
}

}  // namespace
}  // namespace goodput::sim
