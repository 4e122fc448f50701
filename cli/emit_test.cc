#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "cli/emit_command.h"
#include "codec/emit_event.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace goodput::cli {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kNow = int64_t{1795000000} * 1000000000;

absl::StatusOr<v1::Event> Build(const std::string& kind,
                                codec::EmitFields fields) {
  return codec::BuildEvent(kind, fields, kNow);
}

TEST(EmitEventTest, BuildsEveryFieldTypeFromStrings) {
  auto e = Build("job_submitted", {{"job_id", "j"},
                                   {"chips", "256"},
                                   {"accelerator", "tpu-v5p"},
                                   {"workload", "training"},
                                   {"label", "team=x"},
                                   {"label", "tier=a=b"},
                                   {"step_flops", "1.5e15"}});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->job_id(), "j");
  EXPECT_EQ(e->time().seconds(), 1795000000);
  EXPECT_EQ(e->job_submitted().chips(), 256);
  EXPECT_EQ(e->job_submitted().workload(), v1::JobSubmitted::TRAINING);
  EXPECT_EQ(e->job_submitted().labels().at("tier"), "a=b");
  EXPECT_EQ(e->job_submitted().step_flops(), 1.5e15);
  auto i = Build("interruption", {{"job_id", "j"},
                                  {"reason", "PREEMPTED"},
                                  {"notice", ""},
                                  {"time", "2026-11-18T11:06:39.5Z"}});
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_TRUE(i->interruption().notice());
  EXPECT_EQ(i->time().nanos(), 500000000);
  auto d = Build("job_submitted", {{"job_id", "j"}, {"chips", "8"}});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->job_submitted().workload(), v1::JobSubmitted::TRAINING);
  auto a = Build("allocation", {{"job_id", "j"}, {"chips", "0"}});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->has_allocation());
}

// SPEC rule 14: min_chips and RESHARD, checked like every other field.
TEST(EmitEventTest, ElasticFields) {
  auto e = Build("job_submitted",
                 {{"job_id", "j"}, {"chips", "8"}, {"min_chips", "4"}});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(e->job_submitted().has_min_chips());
  EXPECT_EQ(e->job_submitted().min_chips(), 4);
  auto r = Build("activity", {{"job_id", "j"}, {"kind", "RESHARD"}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->activity().kind(), v1::Activity::RESHARD);
  auto bad = Build("job_submitted",
                   {{"job_id", "j"}, {"chips", "8"}, {"min_chips", "9"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("job_submitted.min_chips: must be at most "
                        "job_submitted.chips (8), got 9"));
}

// Exclusions (docs/semantics.md): a time field, a repeated field, and the
// validator's field-named errors.
TEST(EmitEventTest, ExclusionFields) {
  auto j = Build("exclusion", {{"job_id", "j"},
                               {"time", "2026-11-18T10:00:00Z"},
                               {"until", "2026-11-18T11:00:00Z"},
                               {"reason", "planned maintenance"},
                               {"scope", "job"}});
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->exclusion().until().seconds() - j->time().seconds(), 3600);
  EXPECT_EQ(j->exclusion().scope(), v1::Exclusion::JOB);
  auto h = Build("exclusion", {{"time", "2026-11-18T10:00:00Z"},
                               {"until", "2026-11-18T10:30:00Z"},
                               {"reason", "rack 4"},
                               {"scope", "HOSTS"},
                               {"hosts", "host-1,host-2"},
                               {"hosts", "host-3"}});
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_THAT(h->exclusion().hosts(),
              ::testing::ElementsAre("host-1", "host-2", "host-3"));
  EXPECT_TRUE(h->job_id().empty());
  auto error = [](codec::EmitFields f) {
    return std::string(Build("exclusion", f).status().message());
  };
  EXPECT_THAT(error({{"until", "soon"}}),
              HasSubstr("--until: must be RFC 3339, got \"soon\""));
  EXPECT_THAT(error({{"time", "2026-11-18T10:00:00Z"},
                     {"until", "2026-11-18T09:00:00Z"},
                     {"reason", "r"},
                     {"scope", "FLEET"}}),
              HasSubstr("exclusion.until: must be after time"));
  EXPECT_THAT(error({{"job_id", "j"},
                     {"time", "2026-11-18T10:00:00Z"},
                     {"until", "2026-11-18T11:00:00Z"},
                     {"reason", "r"},
                     {"scope", "FLEET"}}),
              HasSubstr("job_id: must be empty for a HOSTS or FLEET "
                        "exclusion"));
}

TEST(EmitEventTest, ErrorsNameTheFieldAndValue) {
  auto error = [](const std::string& kind, codec::EmitFields f) {
    return std::string(Build(kind, f).status().message());
  };
  EXPECT_THAT(error("jobsubmitted", {}), HasSubstr("KIND: must be one of"));
  EXPECT_THAT(error("allocation", {{"job_id", "j"}, {"chip", "8"}}),
              HasSubstr("--chip: not a field of Allocation (fields: chips)"));
  EXPECT_THAT(error("allocation", {{"job_id", "j"}, {"chips", "eight"}}),
              HasSubstr("--chips: must be an integer, got \"eight\""));
  EXPECT_THAT(error("job_submitted", {{"job_id", "j"}, {"chips", "0"}}),
              HasSubstr("job_submitted.chips: must be > 0, got 0"));
  EXPECT_THAT(error("interruption", {{"job_id", "j"}, {"reason", "BORED"}}),
              HasSubstr("BORED"));
  EXPECT_THAT(error("step", {{"step", "3"}}), HasSubstr("job_id"));
  EXPECT_THAT(error("job_submitted", {{"job_id", "j"}, {"label", "x"}}),
              HasSubstr("--label: must be KEY=VALUE"));
  EXPECT_THAT(error("started", {{"job_id", "j"}, {"time", "yesterday"}}),
              HasSubstr("--time: must be RFC 3339"));
}

class EmitCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/emit_XXXXXX";
    dir_ = mkdtemp(tmpl.data());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  int Run(std::vector<std::string> args) {
    CommandContext context{in_, out_, err_};
    return RunEmitCommand(args, context);
  }
  std::string dir_;
  std::istringstream in_;
  std::ostringstream out_, err_;
};

TEST_F(EmitCommandTest, PrintWritesTheEventsJsonLine) {
  EXPECT_EQ(Run({"allocation", "--job_id=j", "--chips=8", "--print"}), 0);
  auto line = nlohmann::json::parse(out_.str());
  EXPECT_EQ(line["job_id"], "j");
  EXPECT_EQ(line["allocation"]["chips"], "8");  // int64: a JSON string
}

TEST_F(EmitCommandTest, WithoutAgentTheEventGoesToTheClientSpool) {
  EXPECT_EQ(Run({"job_ended", "--job_id=j", "--outcome=SUCCEEDED",
                 "--socket=" + dir_ + "/none.sock",
                 "--spool_dir=" + dir_ + "/spool"}),
            0);
  EXPECT_THAT(err_.str(), HasSubstr("spooled to"));
  int files = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir_ + "/spool")) {
    EXPECT_EQ(f.path().extension(), ".jsonl");
    std::ifstream in(f.path());
    std::string text((std::istreambuf_iterator<char>(in)), {});
    auto record = nlohmann::json::parse(text);
    EXPECT_EQ(record["event"]["job_ended"]["outcome"], "SUCCEEDED");
    ++files;
  }
  EXPECT_EQ(files, 1);
}

// A listening Unix socket at `path` that never accepts, with its backlog
// full: another connect() finds no room (issue 15 item 4: an agent whose
// --max_connections clients are all busy and whose backlog filled up).
class FullBacklog {
 public:
  explicit FullBacklog(const std::string& path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
    listener_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    EXPECT_EQ(
        ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::listen(listener_, 0), 0);
    // With a backlog of 0, one waiting connection fills it.
    queued_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    EXPECT_EQ(
        ::connect(queued_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)),
        0);
  }
  ~FullBacklog() { Close(); }
  // Closing the listener also wakes a connect() blocked on it.
  void Close() {
    if (listener_ >= 0) ::close(listener_);
    if (queued_ >= 0) ::close(queued_);
    listener_ = queued_ = -1;
  }

 private:
  int listener_ = -1;
  int queued_ = -1;
};

TEST_F(EmitCommandTest, AnAgentThatCannotTakeTheClientSpoolsAtOnce) {
  FullBacklog agent(dir_ + "/agent.sock");
  int code = -1;
  absl::Notification done;
  std::thread emit([&] {
    code = Run({"job_ended", "--job_id=j", "--outcome=SUCCEEDED",
                "--socket=" + dir_ + "/agent.sock",
                "--spool_dir=" + dir_ + "/spool"});
    done.Notify();
  });
  const bool returned = done.WaitForNotificationWithTimeout(absl::Seconds(20));
  agent.Close();  // unblocks a connect() that waited (the old behaviour)
  emit.join();
  EXPECT_TRUE(returned) << "emit blocked on the agent's full backlog";
  EXPECT_EQ(code, 0);
  EXPECT_THAT(err_.str(), HasSubstr("spooled to"));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/spool"));
}

TEST_F(EmitCommandTest, UsageErrorsExit2WithOneLine) {
  EXPECT_EQ(Run({"--job_id=j"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("missing KIND"));
  EXPECT_EQ(Run({"allocation", "step", "--job_id=j"}), kExitUsage);
  EXPECT_EQ(Run({"allocation", "--job_id=j", "--chips=-1", "--print"}),
            kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("allocation.chips"));
}

TEST_F(EmitCommandTest, HelpListsKinds) {
  EXPECT_EQ(Run({"--help"}), 0);
  EXPECT_THAT(out_.str(), HasSubstr("job_submitted, allocation, started"));
}

}  // namespace
}  // namespace goodput::cli
