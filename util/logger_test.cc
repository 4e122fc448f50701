#include "util/logger.h"

#include <unistd.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace goodput {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kNow = 1'795'341'600'250'000'000;  // 2026-11-22T10:00:00.25Z

TEST(LoggerTest, TextIsTheComponentAndTheMessageAsBefore) {
  Logger log("goodputd");
  EXPECT_EQ(log.Line(Logger::Level::kInfo, "listening on port 7700", {}),
            "goodputd: listening on port 7700\n");
  EXPECT_EQ(log.Line(Logger::Level::kWarning, "no metrics", {{"port", "7701"}}),
            "goodputd: warning: no metrics\n")
      << "text leaves the fields out: its lines stay what scripts parse";
  EXPECT_EQ(log.Line(Logger::Level::kError, "store", {}), "goodputd: store\n");
}

TEST(LoggerTest, JsonIsOneObjectPerLineWithTimeLevelComponentFields) {
  FakeClock clock(kNow);
  Logger log("goodput-agent", Logger::Format::kJson, &clock);
  const std::string line =
      log.Line(Logger::Level::kWarning, "socket: line 3: \"bad\"\n\x01",
               {{"path", "/run/a.sock"}, {"n", "3"}});
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line";
  nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j["time"], "2026-11-22T10:00:00.250Z");
  EXPECT_EQ(j["level"], "warning");
  EXPECT_EQ(j["component"], "goodput-agent");
  EXPECT_EQ(j["message"], "socket: line 3: \"bad\"\n\x01");
  EXPECT_EQ(j["fields"]["path"], "/run/a.sock");
  EXPECT_EQ(j["fields"]["n"], "3");
  EXPECT_EQ(
      nlohmann::json::parse(log.Line(Logger::Level::kError, "x", {}))["level"],
      "error");
}

TEST(LoggerTest, LogWritesTheLineToItsFd) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  Logger log("goodputd", Logger::Format::kText, nullptr, fds[1]);
  log.Info("stopped");
  close(fds[1]);
  char buf[64] = {};
  ssize_t n = read(fds[0], buf, sizeof(buf) - 1);
  close(fds[0]);
  EXPECT_EQ(std::string(buf, n > 0 ? n : 0), "goodputd: stopped\n");
}

TEST(LoggerTest, ParseFormatNamesTheFlag) {
  EXPECT_EQ(*Logger::ParseFormat("json"), Logger::Format::kJson);
  EXPECT_EQ(*Logger::ParseFormat("text"), Logger::Format::kText);
  auto bad = Logger::ParseFormat("xml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "--log_format: want text or json, got \"xml\"");
}

}  // namespace
}  // namespace goodput
