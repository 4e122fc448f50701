#include "sim/live_sink.h"

#include "gtest/gtest.h"

namespace goodput::sim {
namespace {

TEST(LiveSinkTest, CompressMapsTimeOntoTheWallClockAndScalesDurations) {
  v1::Event e;
  e.mutable_time()->set_seconds(3600);  // one simulated hour after start
  e.mutable_step()->set_step(5);
  e.mutable_step()->set_input_wait_seconds(60);
  e.mutable_step()->set_idle_seconds(6);
  const v1::Event out = LiveSink::Compress(e, 60, /*sim_start_ms=*/0,
                                           /*wall_start_ns=*/1'000'000'000'000);
  EXPECT_EQ(out.time().seconds(), 1000 + 60);  // a minute of wall time
  EXPECT_DOUBLE_EQ(out.step().input_wait_seconds(), 1);
  EXPECT_DOUBLE_EQ(out.step().idle_seconds(), 0.1);
  EXPECT_EQ(out.step().step(), 5);

  v1::Event s;
  s.mutable_job_submitted()->set_step_flops(6e15);
  EXPECT_DOUBLE_EQ(LiveSink::Compress(s, 60, 0, 0).job_submitted().step_flops(),
                   1e14);
}

TEST(LiveSinkTest, ConnectNamesTheSocketThatIsNotThere) {
  RealClock clock;
  auto sink = LiveSink::Connect({"/nonexistent/agent.sock"}, 60, 0, &clock,
                                [](int64_t) {});
  ASSERT_FALSE(sink.ok());
  EXPECT_NE(sink.status().message().find("/nonexistent/agent.sock"),
            std::string::npos);
}

}  // namespace
}  // namespace goodput::sim
