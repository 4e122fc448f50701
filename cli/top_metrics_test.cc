#include "cli/top_metrics.h"

#include "gtest/gtest.h"

namespace goodput::cli {
namespace {

TEST(TopMetricsTest, PicksTheIngestCountersAndCountsAgents) {
  const char* text =
      "# HELP goodput_ingest_events_total events judged\n"
      "# TYPE goodput_ingest_events_total counter\n"
      "goodput_ingest_events_total{result=\"accepted\"} 1500\n"
      "goodput_ingest_events_total{result=\"rejected\"} 2\n"
      "goodput_ingest_events_total_extra 9\n"
      "goodput_ingest_batches_total{result=\"duplicate\"} 1\n"
      "goodput_agent_last_seen_timestamp_seconds{agent_id=\"a\"} 1.7e9\n"
      "goodput_agent_last_seen_timestamp_seconds{agent_id=\"b\"} 1.7e9\n";
  auto counters = IngestCounters(text);
  EXPECT_EQ(counters["events accepted"], 1500);
  EXPECT_EQ(counters["events rejected"], 2);
  EXPECT_EQ(counters["batches duplicate"], 1);
  EXPECT_EQ(counters["agents"], 2);
  EXPECT_EQ(counters.size(), 4u);
}

TEST(TopMetricsTest, BadUrlsAndClosedPortsAreErrorsNamingTheUrl) {
  EXPECT_FALSE(HttpGet("ftp://x/metrics", 100).ok());
  EXPECT_FALSE(HttpGet("http://127.0.0.1/metrics", 100).ok());
  // Port 1 on loopback: nothing listens there (connection refused).
  auto got = HttpGet("http://127.0.0.1:1/metrics", 100);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("127.0.0.1:1"), std::string::npos);
}

}  // namespace
}  // namespace goodput::cli
