// Acceptance for the built-in profiles (issue 19): for each framework, a
// log with an interruption and a resume from a checkpoint, made from that
// framework's own format strings (each test names the file and function it
// followed), gives the same report as the equivalent hand-written events,
// and that report shows the interruption, the lost step and the resume.
#include "logs/builtin_profiles.h"

#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "clients/cpp/event_json.h"
#include "codec/line_decoder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "logs/log_matcher.h"
#include "nlohmann/json.hpp"
#include "report/replay.h"
#include "report/report_json.h"

namespace goodput::logs {
namespace {

using ::testing::ElementsAreArray;

constexpr char kDay[] = "2026-11-22";

// The events `lines` make through built-in profile `name`, as JSON lines.
std::vector<std::string> EventsFromLog(const std::string& name,
                                       const std::vector<std::string>& lines,
                                       MatcherOptions options = {}) {
  absl::StatusOr<LogProfile> profile = LoadLogProfile(name);
  EXPECT_TRUE(profile.ok()) << profile.status();
  if (options.job_id.empty()) options.job_id = "j";
  LogMatcher matcher(*profile, std::move(options));
  std::vector<v1::Event> events;
  for (const std::string& line : lines) {
    absl::Status s = matcher.Match(line, LogMatcher::kNoReadTime, &events);
    EXPECT_TRUE(s.ok()) << line << ": " << s;
  }
  std::vector<std::string> out;
  for (const v1::Event& e : events) out.push_back(client::EventToJsonLine(e));
  return out;
}

// `{"time":"<kDay>T<hms>Z","job_id":"j","attempt":A,<body>}` decoded and
// re-encoded, so that field order does not matter.
std::string E(const std::string& hms, const std::string& attempt,
              const std::string& body) {
  std::string line =
      absl::StrCat(R"({"time":")", kDay, "T", hms, R"(Z","job_id":"j")");
  if (!attempt.empty())
    absl::StrAppend(&line, R"(,"attempt":")", attempt, "\"");
  absl::StrAppend(&line, ",", body, "}");
  codec::LineDecoder decoder;
  v1::Event event;
  absl::Status s = decoder.DecodeLine(line, &event);
  EXPECT_TRUE(s.ok()) << line << ": " << s;
  return client::EventToJsonLine(event);
}

std::string Activity(const std::string& kind) {
  return absl::StrCat(R"("activity":{"kind":")", kind, R"("})");
}
std::string Step(int64_t n) {
  return absl::StrCat(R"("step":{"step":)", n, "}");
}
std::string Ckpt(int64_t n) {
  return absl::StrCat(R"("checkpoint":{"step":)", n, "}");
}
std::string Restore(int64_t n) {
  return absl::StrCat(R"("activity":{"kind":"RESTORE","step":)", n, "}");
}
constexpr char kStarted[] = R"("started":{})";
constexpr char kEnded[] = R"("job_ended":{"outcome":"SUCCEEDED"})";

// The SPEC report JSON of `jsonl`, replayed offline.
nlohmann::json Report(const std::vector<std::string>& jsonl) {
  report::Replayer replayer{report::ReplayOptions()};
  std::istringstream in(absl::StrJoin(jsonl, ""));
  EXPECT_TRUE(replayer.AddInput(in, "test").ok());
  absl::StatusOr<report::ReplayResult> result = replayer.Finish();
  EXPECT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(result->errors, ::testing::IsEmpty());
  absl::StatusOr<std::string> text = report::WriteReportJson(result->report);
  EXPECT_TRUE(text.ok());
  return nlohmann::json::parse(*text);
}

// The log's events are the hand-written ones, their reports are equal, and
// the one job was interrupted once and lost `lost` step completions (a step
// event for step n completes every step since the previous one).
void ExpectSameReport(const std::vector<std::string>& from_log,
                      const std::vector<std::string>& by_hand, int lost,
                      int64_t last_step, const std::string& state) {
  EXPECT_THAT(from_log, ElementsAreArray(by_hand));
  nlohmann::json a = Report(from_log);
  nlohmann::json b = Report(by_hand);
  EXPECT_EQ(a.dump(1), b.dump(1));
  ASSERT_EQ(a["jobs"].size(), 1u);
  const nlohmann::json& job = a["jobs"][0];
  EXPECT_EQ(job["interruptions"], 1) << job.dump(1);
  EXPECT_EQ(job["steps"]["lost"], lost) << job.dump(1);
  EXPECT_EQ(job["steps"]["last"], last_step) << job.dump(1);
  EXPECT_EQ(job["state"], state);
  EXPECT_GT(job["seconds"]["productive"].get<double>(), 0);
  EXPECT_GT(job["seconds"]["lost"].get<double>(), 0) << job.dump(1);
}

// ---- Megatron-LM ----------------------------------------------------------
// megatron/training/training.py print_datetime:
//   f'[{string}] datetime: {time_str} ' with '%Y-%m-%d %H:%M:%S.%f'.
std::string MegatronDatetime(const std::string& what, const std::string& hms) {
  return absl::StrCat("[", what, "] datetime: ", kDay, " ", hms, ".000000 ");
}
// megatron/training/training.py training_log: log_string.
std::string MegatronIteration(const std::string& hms, int it) {
  return absl::StrFormat(
      " [%s %s.000000] iteration %8d/%8d | consumed samples: %12d | elapsed "
      "time per iteration (ms): %.1f | learning rate: %E | global batch "
      "size: %5d | lm loss: %E | loss scale: 1.0 | grad norm: 1.234 |",
      kDay, hms, it, 1000, it * 64, 12000.0, 1e-4, 64, 2.5);
}
// megatron/training/checkpointing.py save_checkpoint.
std::string MegatronSaving(const std::string& hms, int it) {
  return absl::StrFormat(
      "[%s %s.000000] saving checkpoint at iteration %7d to /ckpt in "
      "torch_dist format",
      kDay, hms, it);
}
std::string MegatronSaved(const std::string& hms, int it) {
  return absl::StrFormat(
      "  [%s %s.000000] successfully saved checkpoint from iteration %7d to "
      "/ckpt [ t 1/8, gtp_remat 1/1, p 1/4 ]",
      kDay, hms, it);
}
// megatron/training/checkpointing.py _load_base_checkpoint, load_checkpoint.
std::string MegatronLoading(int it) {
  return absl::StrFormat(
      " loading distributed checkpoint from /ckpt at iteration %d", it);
}
std::string MegatronLoaded(int it) {
  return absl::StrFormat(
      "  successfully loaded checkpoint from /ckpt [ t 1/8, gtp_remat 1/1, p "
      "1/4 ] at iteration %d",
      it);
}

TEST(BuiltinProfilesTest, MegatronInterruptedAndResumedFromCheckpoint) {
  const char* kSetup = "after in-process setup and before initialize_megatron";
  const char* kBuilt =
      "after model, optimizer, and learning rate scheduler are built";
  std::vector<std::string> log = {
      MegatronDatetime(kSetup, "10:00:00"),
      MegatronDatetime("after megatron is initialized", "10:01:00"),
      MegatronDatetime(kBuilt, "10:02:00"),
      MegatronDatetime("after dataloaders are built", "10:02:30"),
      "training ...",
      MegatronIteration("10:04:30", 10),
      MegatronIteration("10:06:30", 20),
      MegatronSaving("10:06:31", 20),
      MegatronSaved("10:07:01", 20),
      MegatronIteration("10:09:01", 30),
      "Traceback (most recent call last):",
      "torch.distributed.DistBackendError: NCCL error",
      MegatronDatetime(kSetup, "10:15:00"),
      MegatronDatetime("after megatron is initialized", "10:16:00"),
      MegatronLoading(20),  // no timestamp: the previous line's time
      MegatronLoaded(20),
      MegatronDatetime(kBuilt, "10:17:00"),
      MegatronDatetime("after dataloaders are built", "10:17:30"),
      MegatronIteration("10:19:30", 30),
      MegatronIteration("10:21:30", 40),
      MegatronDatetime("after training is done", "10:21:31"),
      MegatronSaving("10:21:32", 40),  // after the end: dropped
  };
  std::vector<std::string> by_hand = {
      E("10:00:00", "1", kStarted),
      E("10:00:00", "1", Activity("INIT")),
      E("10:01:00", "1", Activity("PREP")),
      E("10:02:00", "1", Activity("PREP")),
      E("10:02:30", "1", Activity("TRAINING")),
      E("10:04:30", "1", Step(10)),
      E("10:06:30", "1", Step(20)),
      E("10:06:31", "1", Activity("CHECKPOINT")),
      E("10:07:01", "1", Ckpt(20)),
      E("10:07:01", "1", Activity("TRAINING")),
      E("10:09:01", "1", Step(30)),
      E("10:15:00", "2", kStarted),
      E("10:15:00", "2", Activity("INIT")),
      E("10:16:00", "2", Activity("PREP")),
      E("10:16:00", "2", Restore(20)),
      E("10:16:00", "2", Activity("TRAINING")),
      E("10:17:00", "2", Activity("PREP")),
      E("10:17:30", "2", Activity("TRAINING")),
      E("10:19:30", "2", Step(30)),
      E("10:21:30", "2", Step(40)),
      E("10:21:31", "2", kEnded),
  };
  ExpectSameReport(EventsFromLog("megatron", log), by_hand, 10, 40, "ENDED");
}

// The agent's tail re-reads a poll's lines when it is killed between
// spooling their events and saving its offsets and matcher state
// (docs/adapters.md). The repeats carry attempts, so SPEC rule 3 makes them
// duplicates: the report is that of one read, even across a SIGTERM line, a
// save and a restart inside the re-read part.
TEST(BuiltinProfilesTest, ReReadingAPollAfterAKillChangesNoReport) {
  const char* kSetup = "after in-process setup and before initialize_megatron";
  std::vector<std::string> log = {
      MegatronDatetime(kSetup, "10:00:00"),
      MegatronDatetime("after dataloaders are built", "10:02:30"),
      MegatronIteration("10:04:30", 10),
      // The poll read twice starts here.
      MegatronIteration("10:06:30", 20),
      MegatronSaving("10:06:31", 20),
      MegatronSaved("10:07:01", 20),
      MegatronIteration("10:09:01", 30),
      MegatronDatetime("exiting program after receiving SIGTERM.", "10:09:30"),
      MegatronDatetime(kSetup, "10:15:00"),
      MegatronLoading(20),
      MegatronLoaded(20),
      MegatronIteration("10:19:30", 30),
      // It ends here; the agent's saved state is from before it.
      MegatronIteration("10:21:30", 40),
  };
  const size_t kPollStart = 3, kPollEnd = 12;
  absl::StatusOr<LogProfile> profile = LoadLogProfile("megatron");
  ASSERT_TRUE(profile.ok());
  MatcherOptions options{.job_id = "j", .attempt_before_start = "0"};
  LogMatcher once(*profile, options);
  std::vector<v1::Event> events;
  MatcherState saved;
  for (size_t i = 0; i < log.size(); ++i) {
    if (i == kPollStart) saved = once.state();
    ASSERT_TRUE(once.Match(log[i], LogMatcher::kNoReadTime, &events).ok());
  }
  std::vector<std::string> one_read;
  for (const v1::Event& e : events)
    one_read.push_back(client::EventToJsonLine(e));
  // Killed after spooling lines [0, kPollEnd): restarted from `saved`.
  std::vector<v1::Event> twice;
  LogMatcher first(*profile, options);
  for (size_t i = 0; i < kPollEnd; ++i)
    ASSERT_TRUE(first.Match(log[i], LogMatcher::kNoReadTime, &twice).ok());
  LogMatcher restarted(*profile, options);
  restarted.set_state(saved);
  for (size_t i = kPollStart; i < log.size(); ++i)
    ASSERT_TRUE(restarted.Match(log[i], LogMatcher::kNoReadTime, &twice).ok());
  std::vector<std::string> two_reads;
  for (const v1::Event& e : twice)
    two_reads.push_back(client::EventToJsonLine(e));
  ASSERT_GT(two_reads.size(), one_read.size() + 8);
  nlohmann::json a = Report(one_read);
  nlohmann::json b = Report(two_reads);
  EXPECT_EQ(a["jobs"][0]["interruptions"], 1) << a.dump(1);
  EXPECT_EQ(a["jobs"][0]["steps"]["lost"], 10) << a.dump(1);
  EXPECT_EQ(a.dump(1), b.dump(1));
}

// ---- torchtitan -----------------------------------------------------------
// torchtitan/tools/logging.py init_logger:
//   "[titan] %(asctime)s - %(name)s - %(levelname)s - %(message)s".
std::string Titan(const std::string& hms, const std::string& message) {
  return absl::StrCat("[titan] ", kDay, " ", hms, ",000 - root - INFO - ",
                      message);
}
// torchtitan/components/metrics.py MetricsProcessor.log, with
// torchtitan/tools/utils.py Color.
std::string TitanStep(const std::string& hms, int step) {
  return Titan(hms,
               absl::StrFormat("\x1b[31mstep: %2d  \x1b[32mloss: %8.5f  "
                               "\x1b[38;2;180;60;0mgrad_norm: %7.4f  "
                               "\x1b[38;2;54;234;195mmemory: %5.2fGiB(%.2f%%)  "
                               "\x1b[34mtps: 1,234  \x1b[36mtflops: 123.45  "
                               "\x1b[35mmfu: 12.34%%\x1b[39m",
                               step, 3.12345, 1.2345, 12.34, 15.6));
}
// MetricsProcessor.log_validation: must not count as a step.
std::string TitanValidate(const std::string& hms, int step) {
  return Titan(hms, absl::StrFormat("\x1b[33mvalidate step: %2d  "
                                    "\x1b[32mloss: %7.4f\x1b[39m",
                                    step, 3.5));
}

TEST(BuiltinProfilesTest, TorchtitanInterruptedAndResumedFromCheckpoint) {
  const char* kVersion =
      "torchtitan version: 0.2.0 (0.0.0 means __version__ is not defined "
      "correctly).";
  std::vector<std::string> log = {
      // torchtitan/train.py main; torchtitan/trainer.py Trainer.__init__.
      Titan("10:00:00", kVersion),
      Titan("10:00:05", "Building llama3 8B"),
      // torchtitan/components/checkpointer/dcp.py load: a fresh start.
      Titan("10:00:50", "No checkpoint was provided, this is a fresh start."),
      Titan("10:01:00", "Training starts at step 1"),  // Trainer.train
      TitanStep("10:03:00", 10),
      TitanStep("10:05:00", 20),
      TitanValidate("10:05:10", 20),
      Titan("10:05:20", "Saving the checkpoint."),  // dcp.py save
      Titan("10:05:50", "Finished saving the checkpoint in 30.00 seconds."),
      TitanStep("10:08:00", 30),
      Titan("10:12:00", kVersion),
      Titan("10:12:05", "Building llama3 8B"),
      Titan("10:13:00",
            "Loading the checkpoint from ./outputs/checkpoint/step-20."),
      Titan("10:13:30", "Finished loading the checkpoint in 30.00 seconds."),
      Titan("10:13:31", "Training starts at step 21"),
      TitanStep("10:15:31", 30),
      TitanStep("10:17:31", 40),
      Titan("10:17:40", "Training completed"),
  };
  std::vector<std::string> by_hand = {
      E("10:00:00", "1", kStarted),
      E("10:00:00", "1", Activity("INIT")),
      E("10:00:05", "1", Activity("PREP")),
      E("10:01:00", "1", Activity("TRAINING")),
      E("10:03:00", "1", Step(10)),
      E("10:05:00", "1", Step(20)),
      E("10:05:20", "1", Activity("CHECKPOINT")),
      E("10:05:50", "1", Ckpt(20)),
      E("10:05:50", "1", Activity("TRAINING")),
      E("10:08:00", "1", Step(30)),
      E("10:12:00", "2", kStarted),
      E("10:12:00", "2", Activity("INIT")),
      E("10:12:05", "2", Activity("PREP")),
      E("10:13:00", "2", Restore(20)),
      E("10:13:30", "2", Activity("TRAINING")),
      E("10:13:31", "2", Activity("TRAINING")),
      E("10:15:31", "2", Step(30)),
      E("10:17:31", "2", Step(40)),
      E("10:17:40", "2", kEnded),
  };
  ExpectSameReport(EventsFromLog("torchtitan", log), by_hand, 10, 40, "ENDED");
}

// ---- DeepSpeed ------------------------------------------------------------
// deepspeed/utils/logging.py LoggerFactory.create_logger:
//   "[%(asctime)s] [%(levelname)s] [%(filename)s:%(lineno)d:%(funcName)s] "
// and log_dist's "[Rank N] " before the message.
std::string Ds(const std::string& hms, const std::string& where,
               const std::string& message) {
  return absl::StrCat("[", kDay, " ", hms, ",123] [INFO] [", where, "] ",
                      message);
}
std::string DsDist(const std::string& hms, const std::string& message) {
  return Ds(hms, "logging.py:128:log_dist", "[Rank 0] " + message);
}
// deepspeed/runtime/engine.py DeepSpeedEngine._report_progress.
std::string DsStep(const std::string& hms, int step) {
  return DsDist(hms, absl::StrFormat("step=%d, skipped=0, lr=[0.0001], "
                                     "mom=[(0.9, 0.999)]",
                                     step));
}
// deepspeed/runtime/checkpoint_engine/torch_checkpoint_engine.py.
std::string DsLoad(const std::string& hms, bool done, const std::string& f) {
  return Ds(hms,
            done ? "torch_checkpoint_engine.py:29:load"
                 : "torch_checkpoint_engine.py:27:load",
            absl::StrCat(done ? "[Torch] Loaded checkpoint from "
                              : "[Torch] Loading checkpoint from ",
                         "/ckpt/global_step20/", f, done ? "." : "..."));
}

TEST(BuiltinProfilesTest, DeepSpeedInterruptedAndResumedFromCheckpoint) {
  // deepspeed/__init__.py initialize.
  const char* kInfo =
      "DeepSpeed info: version=0.16.4, git-hash=unknown, git-branch=unknown";
  const char* kModel = "mp_rank_00_model_states.pt";
  const char* kOptim = "zero_pp_rank_0_mp_rank_00_optim_states.pt";
  std::vector<std::string> log = {
      DsDist("10:00:00", kInfo),
      DsStep("10:03:00", 10),
      DsStep("10:05:00", 20),
      DsDist("10:05:01",
             "[Torch] Checkpoint global_step20 is about to be saved!"),
      Ds("10:05:31", "torch_checkpoint_engine.py:33:commit",
         "[Torch] Checkpoint global_step20 is ready now!"),
      DsStep("10:08:00", 30),
      DsDist("10:12:00", kInfo),
      DsLoad("10:13:00", false, kModel),
      DsLoad("10:13:20", true, kModel),
      DsLoad("10:13:21", false, kOptim),
      DsLoad("10:13:40", true, kOptim),
      DsStep("10:15:40", 30),
      DsStep("10:17:40", 40),
  };
  std::vector<std::string> by_hand = {
      E("10:00:00.123", "1", kStarted),
      E("10:03:00.123", "1", Step(10)),
      E("10:05:00.123", "1", Step(20)),
      E("10:05:01.123", "1", Activity("CHECKPOINT")),
      E("10:05:31.123", "1", Ckpt(20)),
      E("10:05:31.123", "1", Activity("TRAINING")),
      E("10:08:00.123", "1", Step(30)),
      E("10:12:00.123", "2", kStarted),
      E("10:13:00.123", "2", Restore(20)),
      E("10:13:20.123", "2", Activity("TRAINING")),
      E("10:13:21.123", "2", Activity("RESTORE")),
      E("10:13:40.123", "2", Activity("TRAINING")),
      E("10:15:40.123", "2", Step(30)),
      E("10:17:40.123", "2", Step(40)),
  };
  ExpectSameReport(EventsFromLog("deepspeed", log), by_hand, 10, 40, "RUNNING");
}

// ---- MaxText --------------------------------------------------------------
// absl-py absl/logging/__init__.py get_absl_log_prefix:
//   '%c%02d%02d %02d:%02d:%02d.%06d %5d %s:%d] ' (no year), through
// src/maxtext/utils/max_logging.py log.
std::string Absl(const std::string& hms, const std::string& file,
                 const std::string& message) {
  return absl::StrCat("I1122 ", hms, ".000000 ", absl::StrFormat("%5d", 1234),
                      " ", file, "] ", message);
}
// src/maxtext/common/metric_logger.py, the training metrics line.
std::string MaxStep(const std::string& hms, int step) {
  return Absl(hms, "metric_logger.py:230",
              absl::StrFormat("completed step: %d, seconds: %.3f, "
                              "TFLOP/s/device: %.3f, Tokens/s/device: %.3f, "
                              "total_weights: 65536, loss: %.3f, lm_loss: "
                              "%.3f, perplexity: %.3f",
                              step, 12.0, 150.0, 3000.0, 2.5, 2.5, 12.2));
}

TEST(BuiltinProfilesTest, MaxTextInterruptedAndResumedFromCheckpoint) {
  // src/maxtext/common/checkpointing.py create_orbax_checkpoint_manager,
  // print_save_message, load_state_if_possible;
  // src/maxtext/trainers/pre_train/train.py (eval).
  const char* kManager =
      "Creating checkpoint manager with ocdbt=True and zarr3=True";
  std::vector<std::string> log = {
      Absl("10:00:00", "checkpointing.py:388", kManager),
      Absl("10:00:01", "checkpointing.py:521",
           "checkpoint manager exists so trying to load this run's existing "
           "checkpoint"),
      Absl("10:00:01", "checkpointing.py:681",
           "No existing checkpoints found, not restoring checkpoint."),
      MaxStep("10:03:00", 0),
      MaxStep("10:03:12", 1),
      MaxStep("10:03:24", 2),
      Absl("10:03:40", "checkpointing.py:453", "Saved a checkpoint at step 2."),
      Absl("10:03:41", "train.py:879", "Starting eval after train step 2"),
      MaxStep("10:04:30", 3),
      MaxStep("10:04:42", 4),
      Absl("10:10:00", "checkpointing.py:388", kManager),
      Absl("10:10:01", "checkpointing.py:525",
           "restoring from this run's directory step 2"),
      MaxStep("10:12:00", 3),
      MaxStep("10:12:12", 4),
      MaxStep("10:12:24", 5),
  };
  MatcherOptions options;
  options.default_year = 2026;
  std::vector<std::string> by_hand = {
      E("10:00:00", "1", kStarted),
      E("10:03:00", "1", Step(0)),
      E("10:03:12", "1", Step(1)),
      E("10:03:24", "1", Step(2)),
      E("10:03:40", "1", Ckpt(2)),
      E("10:03:41", "1", R"("activity":{"kind":"CUSTOM","name":"eval"})"),
      E("10:04:30", "1", Step(3)),
      E("10:04:42", "1", Step(4)),
      E("10:10:00", "2", kStarted),
      E("10:10:01", "2", Restore(2)),
      E("10:12:00", "2", Step(3)),
      E("10:12:12", "2", Step(4)),
      E("10:12:24", "2", Step(5)),
  };
  ExpectSameReport(EventsFromLog("maxtext", log, options), by_hand, 2, 5,
                   "RUNNING");
}

// ---- Hugging Face Transformers Trainer ------------------------------------
// Kubernetes container logs (CRI) give every line a time; the Trainer's own
// lines have none. src/transformers/trainer.py _inner_training_loop and
// _save log through transformers.utils.logging (message only);
// src/transformers/trainer_callback.py ProgressCallback.on_log writes
// str(logs), which has no step: each counts logging_steps (500).
std::string HfLogs(double loss, double epoch) {
  return absl::StrFormat(
      "{'loss': %.4f, 'grad_norm': 1.2345, 'learning_rate': 4.5e-05, "
      "'epoch': %.2f}",
      loss, epoch);
}

TEST(BuiltinProfilesTest, HfTrainerInterruptedAndResumedFromCheckpoint) {
  absl::StatusOr<LogProfile> profile = LoadLogProfile("hf_trainer");
  ASSERT_TRUE(profile.ok()) << profile.status();
  // (read time, line): what a reader of the container log would see.
  std::vector<std::pair<std::string, std::string>> log = {
      {"10:00:00", "***** Running training *****"},
      {"10:00:00", "  Num examples = 100,000"},
      {"10:10:00", HfLogs(2.5, 0.1)},
      {"10:20:00", HfLogs(2.4, 0.2)},
      {"10:20:01", "Saving model checkpoint to out/checkpoint-1000"},
      {"10:30:00", HfLogs(2.3, 0.3)},
      {"10:40:00", "***** Running training *****"},
      {"10:40:00",
       "  Continuing training from checkpoint, will skip to saved "
       "global_step"},
      {"10:40:00", "  Continuing training from epoch 0"},
      {"10:40:00", "  Continuing training from global step 1000"},
      {"10:50:00", HfLogs(2.3, 0.3)},
      {"11:00:00", HfLogs(2.2, 0.4)},
      {"11:00:30",
       "\n\nTraining completed. Do not forget to share your "
       "model on huggingface.co/models =)\n\n"},
  };
  LogMatcher matcher(*profile, MatcherOptions{.job_id = "j"});
  std::vector<v1::Event> events;
  for (const auto& [hms, line] : log) {
    absl::Time t;
    std::string err;
    ASSERT_TRUE(absl::ParseTime("%Y-%m-%d %H:%M:%S",
                                absl::StrCat(kDay, " ", hms), &t, &err));
    ASSERT_TRUE(matcher.Match(line, absl::ToUnixNanos(t), &events).ok());
  }
  std::vector<std::string> from_log;
  for (const v1::Event& e : events)
    from_log.push_back(client::EventToJsonLine(e));
  std::vector<std::string> by_hand = {
      E("10:00:00", "1", kStarted),
      E("10:10:00", "1", Step(500)),
      E("10:20:00", "1", Step(1000)),
      E("10:20:01", "1", Activity("CHECKPOINT")),
      E("10:30:00", "1", Step(1500)),
      E("10:40:00", "2", kStarted),
      E("10:40:00", "2", Restore(1000)),
      E("10:40:00", "2", Activity("TRAINING")),
      E("10:50:00", "2", Step(1500)),
      E("11:00:00", "2", Step(2000)),
      E("11:00:30", "2", kEnded),
  };
  ExpectSameReport(from_log, by_hand, 500, 2000, "ENDED");
}

// ---- NeMo 2 ---------------------------------------------------------------
// torchrun --tee prefixes each line with "[defaultN]:"; rank 0's are read.
// nemo/utils/formatters/base.py: "[NeMo %(levelname)1.1s %(asctime)s
// %(module)s:%(lineno)d] %(message)s".
std::string Nemo(const std::string& hms, const std::string& where,
                 const std::string& message) {
  return absl::StrCat("[default0]:[NeMo I ", kDay, " ", hms, " ", where, "] ",
                      message);
}
// nemo/lightning/pytorch/callbacks/progress_printer.py on_train_batch_end
// and format_string (metrics as logged by MegatronStrategy.training_step and
// TimingCallback, log_interval 10): `global_step` is the 0-based index.
std::string NemoStep(int iteration, int global_step, double seconds) {
  return absl::StrFormat(
      "[default0]:Training epoch 0, iteration %d/99 | lr: 1.499e-06 | "
      "global_batch_size: 512 | global_step: %d | reduced_train_loss: 11.03 "
      "| train_step_timing in s: %.4g | consumed_samples: %d",
      iteration, global_step, seconds, (global_step + 1) * 512);
}
// nemo/lightning/pytorch/callbacks/model_checkpoint.py finalize callback.
std::string NemoSaved(const std::string& hms, int step) {
  return Nemo(hms, "model_checkpoint:522",
              absl::StrFormat("Async checkpoint save for step %d "
                              "(/ckpt/model_name=0--val_loss=0.00-step=%d-"
                              "consumed_samples=%d.0-last.ckpt) finalized "
                              "successfully.",
                              step, step - 1, step * 512));
}

TEST(BuiltinProfilesTest, NemoInterruptedAndResumedFromCheckpoint) {
  const std::string kRun = "Experiments will be logged at /ckpt/demo";
  const std::string kDdp =
      "Setting up DistributedDataParallel with config "
      "DistributedDataParallelConfig(grad_reduce_in_fp32=True)";
  const std::string kWeights =
      "/ckpt/model_name=0--val_loss=0.00-step=19-consumed_samples=10240.0-"
      "last/weights";
  std::vector<std::string> log = {
      Nemo("10:00:00", "nemo_logger:145", kRun),
      Nemo("10:00:03", "utils:302", kDdp),
      "[default0]:91        Modules in train mode",
      "[default0]:0         Modules in eval mode",
      NemoStep(9, 9, 6.0),    // steps 1-10, 6 s each: 10:01:03
      NemoStep(19, 19, 6.0),  // 10:02:03
      Nemo("10:02:30", "model_checkpoint:497",
           "Scheduled async checkpoint save for /ckpt/x.ckpt"),
      NemoSaved("10:02:30", 20),
      NemoStep(29, 29, 6.0),  // from the last timed line: 10:03:30
      "[default0]:[rank0]: Traceback (most recent call last):",
      Nemo("10:10:00", "nemo_logger:145", kRun),
      Nemo("10:10:03", "utils:302", kDdp),
      "[default0]:0         Modules in eval mode",
      "[default0]:Restoring states from the checkpoint path at " + kWeights,
      "[default0]:Restored all states from the checkpoint at " + kWeights,
      NemoStep(29, 29, 6.0),  // 10:11:03
      NemoStep(39, 39, 6.0),  // 10:12:03
      "[default0]:`Trainer.fit` stopped: `max_steps=40` reached.",
  };
  std::vector<std::string> by_hand = {
      E("10:00:00", "1", kStarted),
      E("10:00:00", "1", Activity("INIT")),
      E("10:00:03", "1", Activity("PREP")),
      E("10:00:03", "1", Activity("TRAINING")),
      E("10:01:03", "1", Step(10)),
      E("10:02:03", "1", Step(20)),
      E("10:02:30", "1", Ckpt(20)),
      E("10:03:30", "1", Step(30)),
      E("10:10:00", "2", kStarted),
      E("10:10:00", "2", Activity("INIT")),
      E("10:10:03", "2", Activity("PREP")),
      E("10:10:03", "2", Activity("TRAINING")),
      E("10:10:03", "2", Restore(20)),
      E("10:10:03", "2", Activity("TRAINING")),
      E("10:11:03", "2", Step(30)),
      E("10:12:03", "2", Step(40)),
      E("10:12:03", "2", kEnded),
  };
  ExpectSameReport(EventsFromLog("nemo", log), by_hand, 10, 40, "ENDED");
}

}  // namespace
}  // namespace goodput::logs
