#include "server/batch_parser.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace goodput::server {
namespace {

v1::Batch ThreeEvents() {
  v1::Batch batch;
  batch.set_agent_id("agent-1");
  batch.set_sequence(7);
  for (const char* job : {"job-a", "job-b", "job-c"}) {
    v1::Event* e = batch.add_events();
    e->set_job_id(job);
    e->mutable_started();
  }
  return batch;
}

// Replaces the first `from` in `bytes` with `to` (same length).
std::string Patch(std::string bytes, const std::string& from,
                  const std::string& to) {
  bytes.replace(bytes.find(from), from.size(), to);
  return bytes;
}

TEST(BatchParserTest, ParsesAGoodBatch) {
  v1::Batch parsed;
  ASSERT_TRUE(ParseBatch(ThreeEvents().SerializeAsString(), &parsed).ok());
  EXPECT_EQ(parsed.agent_id(), "agent-1");
  EXPECT_EQ(parsed.events_size(), 3);
}

TEST(BatchParserTest, InvalidUtf8NamesTheEvent) {
  // "job-b" -> "job\xff" + "b": the second event (index 1) is bad.
  const std::string bytes = Patch(ThreeEvents().SerializeAsString(), "job-b",
                                  std::string("job\xff") + "b");
  v1::Batch parsed;
  absl::Status s = ParseBatch(bytes, &parsed);
  ASSERT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_TRUE(absl::StartsWith(
      s.message(), "batch.events[1]: does not parse as goodput.v1.Event (at "))
      << s;
}

TEST(BatchParserTest, InvalidUtf8InTheAgentIdNamesIt) {
  const std::string bytes = Patch(ThreeEvents().SerializeAsString(), "agent-1",
                                  std::string("agent\xc3") + "1");
  v1::Batch parsed;
  absl::Status s = ParseBatch(bytes, &parsed);
  ASSERT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find("is agent_id valid UTF-8?"), std::string::npos)
      << s;
}

}  // namespace
}  // namespace goodput::server
