#include "agent/metrics.h"

#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "util/prometheus_text.h"

namespace goodput::agent {
namespace {

using ::testing::HasSubstr;

// "name{labels}" -> value of every series.
std::map<std::string, double> Series(const AgentSnapshot& s) {
  std::map<std::string, double> out;
  for (const core::MetricFamilyData& f : AgentFamilies(s)) {
    for (const core::MetricSample& m : f.samples) {
      std::string key = f.name;
      for (const auto& [k, v] : m.labels) key += "{" + k + "=" + v + "}";
      EXPECT_EQ(out.count(key), 0u) << key;
      out[key] = m.value;
    }
  }
  return out;
}

TEST(AgentFamiliesTest, EverySeriesComesFromItsStat) {
  AgentSnapshot a;
  a.intake.accepted_lines = 11;
  a.intake.invalid_lines = 2;
  a.intake.too_long_lines = 3;
  a.intake.partial_lines = 4;
  a.intake.duplicate_lines = 5;
  a.intake.connections = 6;
  a.intake.open_connections = 1;
  a.intake.idle_closed = 7;
  a.intake.evicted = 8;
  a.intake.full_waits = 9;
  a.batcher = {/*spooled_batches=*/12, /*spooled_events=*/13,
               /*dropped_events=*/14, /*write_errors_no_space=*/15,
               /*write_errors_io=*/16};
  a.spool.bytes = 17;
  a.spool.pending_batches = 18;
  a.spool.full = true;
  a.uplink.sent_batches = 19;
  a.uplink.acked_batches = 20;
  a.uplink.duplicate_acks = 21;
  a.uplink.server_rejected_events = 22;
  a.uplink.stream_errors = 23;
  a.uplink.corrupt_batches = 24;
  a.uplink.refused_batches = 25;
  a.heartbeats = 26;
  a.connected = true;
  a.oldest_unsent_age_seconds = 2.5;
  const std::map<std::string, double> s = Series(a);
  const std::map<std::string, double> want = {
      {"goodput_agent_accepted_lines_total", 11},
      {"goodput_agent_rejected_lines_total{reason=invalid}", 2},
      {"goodput_agent_rejected_lines_total{reason=too_long}", 3},
      {"goodput_agent_rejected_lines_total{reason=partial}", 4},
      {"goodput_agent_duplicate_events_total", 5},
      {"goodput_agent_connections_total", 6},
      {"goodput_agent_open_connections", 1},
      {"goodput_agent_socket_closed_total{reason=idle}", 7},
      {"goodput_agent_socket_closed_total{reason=evicted}", 8},
      {"goodput_agent_socket_full_total", 9},
      {"goodput_agent_spooled_batches_total", 12},
      {"goodput_agent_spooled_events_total", 13},
      {"goodput_agent_dropped_events_total", 14},
      {"goodput_agent_spool_write_errors_total{reason=no_space}", 15},
      {"goodput_agent_spool_write_errors_total{reason=io}", 16},
      {"goodput_agent_spool_bytes", 17},
      {"goodput_agent_spool_pending_batches", 18},
      {"goodput_agent_spool_full", 1},
      {"goodput_agent_spool_failing", 0},
      {"goodput_agent_oldest_unsent_event_age_seconds", 2.5},
      {"goodput_agent_connected", 1},
      {"goodput_agent_sent_batches_total", 19},
      {"goodput_agent_acked_batches_total", 20},
      {"goodput_agent_duplicate_acks_total", 21},
      {"goodput_agent_server_rejected_events_total", 22},
      {"goodput_agent_stream_errors_total", 23},
      {"goodput_agent_corrupt_batches_total", 24},
      {"goodput_agent_dead_letter_batches_total{reason=corrupt}", 24},
      {"goodput_agent_dead_letter_batches_total{reason=refused}", 25},
      {"goodput_agent_heartbeats_total", 26},
  };
  EXPECT_EQ(s, want);
}

TEST(AgentFamiliesTest, AFreshAgentExportsEverySeriesAtZero) {
  absl::StatusOr<std::string> text = PrometheusText(AgentFamilies({}));
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text,
              HasSubstr("# TYPE goodput_agent_rejected_lines_total counter\n"
                        "goodput_agent_rejected_lines_total{reason=\"invalid\"}"
                        " 0\n"));
  EXPECT_THAT(*text, HasSubstr("\ngoodput_agent_connected 0\n"));
  EXPECT_EQ(Series({}).size(), 30u);
}

}  // namespace
}  // namespace goodput::agent
