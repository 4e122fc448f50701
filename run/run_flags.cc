#include "run/run_flags.h"

#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "clients/cpp/agent_socket.h"
#include "codec/emit_event.h"
#include "util/flag_values.h"
#include "util/flags.h"

namespace goodput::run {
namespace {

using Opt = std::optional<std::string>;

struct RawFlags {
  bool help = false, version = false, submit = false, no_job_ended = false;
  Opt job_id, chips, min_chips, accelerator, workload, framework, labels,
      step_flops, step_bytes, max_restarts, stop_reason, agent_socket,
      spool_dir, log_profile;
};

void Register(FlagParser* p, RawFlags* f) {
  p->AddString("job_id", "ID", &f->job_id, "the job (required)");
  p->AddString("chips", "N", &f->chips, "requested chips; sends job_submitted");
  p->AddString("min_chips", "N", &f->min_chips,
               "fewest chips it runs on: an elastic job (SPEC rule 14)");
  p->AddString("accelerator", "NAME", &f->accelerator, "e.g. tpu-v5p");
  p->AddString("workload", "W", &f->workload,
               "TRAINING (default), SERVING, BULK_INFERENCE or OTHER");
  p->AddString("framework", "NAME", &f->framework, "e.g. pytorch, jax");
  p->AddString("labels", "K=V,...", &f->labels, "job labels");
  p->AddString("step_flops", "F", &f->step_flops, "FLOPs of one step");
  p->AddString("step_bytes", "B", &f->step_bytes, "HBM bytes of one step");
  p->AddBool("submit", &f->submit, "send job_submitted (implied by --chips)");
  p->AddString("max_restarts", "N", &f->max_restarts,
               "restarts after a failed attempt (default 0)");
  p->AddBool("no_job_ended", &f->no_job_ended,
             "never send job_ended (the scheduler restarts and ends the job)");
  p->AddString("stop_reason", "R", &f->stop_reason,
               "interruption reason on SIGTERM (default PREEMPTED)");
  p->AddString("agent_socket", "PATH", &f->agent_socket,
               "the agent's socket (default $GOODPUT_SOCKET or " +
                   std::string(client::kDefaultAgentSocket) + ")");
  p->AddString("spool_dir", "DIR", &f->spool_dir,
               "client spool when the agent is down (default "
               "$GOODPUT_SPOOL_DIR or " +
                   std::string(client::kDefaultClientSpoolDir) + ")");
  p->AddString(
      "log_profile", "NAME|FILE", &f->log_profile,
      "turn CMD's output lines into events through this log "
      "profile (built-in: megatron, nemo, torchtitan, maxtext, hf_trainer, "
      "deepspeed; or a YAML file); the output is passed on as is");
  p->AddBool("help", &f->help, "show this help and exit");
  p->AddBool("version", &f->version, "print the version and exit");
}

absl::StatusOr<v1::JobSubmitted> Submitted(const RawFlags& f, int64_t now_ns) {
  codec::EmitFields fields = {{"job_id", *f.job_id}};
  auto add = [&](const char* name, const Opt& v) {
    if (v) fields.emplace_back(name, *v);
  };
  add("chips", f.chips);
  add("min_chips", f.min_chips);
  add("accelerator", f.accelerator);
  add("workload", f.workload ? f.workload : Opt("TRAINING"));
  add("framework", f.framework);
  add("step_flops", f.step_flops);
  add("step_bytes", f.step_bytes);
  if (f.labels) {
    for (absl::string_view kv :
         absl::StrSplit(*f.labels, ',', absl::SkipEmpty())) {
      fields.emplace_back("label", std::string(kv));
    }
  }
  absl::StatusOr<v1::Event> e =
      codec::BuildEvent("job_submitted", fields, now_ns);
  if (!e.ok()) return e.status();
  return e->job_submitted();
}

absl::Status Fill(const RawFlags& f, int64_t now_ns, RunFlags* out) {
  LauncherOptions& o = out->launcher;
  if (!f.job_id || f.job_id->empty()) {
    return absl::InvalidArgumentError("--job_id: required");
  }
  o.job_id = *f.job_id;
  o.send_job_ended = !f.no_job_ended;
  if (absl::Status s = SetIntFlag("max_restarts", f.max_restarts, 0, kNoMax,
                                  &o.max_restarts);
      !s.ok()) {
    return s;
  }
  if (f.stop_reason &&
      !v1::Interruption::Reason_Parse(*f.stop_reason, &o.stop_reason)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--stop_reason: must be PREEMPTED, FAILED, HOST_FAILURE, MAINTENANCE "
        "or OTHER, got \"",
        *f.stop_reason, "\""));
  }
  if (f.submit || f.chips) {
    absl::StatusOr<v1::JobSubmitted> s = Submitted(f, now_ns);
    if (!s.ok()) return s.status();
    o.submitted = *s;
  }
  out->log_profile = f.log_profile.value_or("");
  out->agent_socket = f.agent_socket.value_or(client::DefaultAgentSocket());
  out->spool_dir = f.spool_dir.value_or(client::DefaultClientSpoolDir());
  return absl::OkStatus();
}

}  // namespace

std::string RunUsage() {
  FlagParser p;
  RawFlags f;
  Register(&p, &f);
  return absl::StrCat(
      "goodput-run: run a job's program and report its attempts to goodput.\n"
      "\nUsage: goodput-run --job_id=ID [FLAGS] -- CMD ARGS...\n\n"
      "Sends started (a new attempt id per run, passed to CMD as "
      "GOODPUT_ATTEMPT,\nwith GOODPUT_JOB_ID), then job_ended SUCCEEDED on "
      "exit 0, or interruption\nFAILED and a restart (up to --max_restarts) "
      "or job_ended FAILED. SIGTERM is\nforwarded to CMD with an interruption "
      "notice. Exit status: CMD's (128+signal\nwhen killed), 127 if CMD "
      "cannot run, 2 for a usage error.\n\nFlags:\n",
      p.Help());
}

absl::StatusOr<RunFlags> ParseRunFlags(const std::vector<std::string>& args,
                                       int64_t now_ns) {
  FlagParser p(/*stop_at_positional=*/true);
  RawFlags f;
  Register(&p, &f);
  RunFlags out;
  absl::Status s = p.Parse(args, &out.launcher.argv);
  if (!s.ok()) return s;
  out.help = f.help;
  out.version = f.version;
  if (out.help || out.version) return out;
  s = Fill(f, now_ns, &out);
  if (!s.ok()) return s;
  if (out.launcher.argv.empty()) {
    return absl::InvalidArgumentError("missing the command: -- CMD ARGS...");
  }
  return out;
}

}  // namespace goodput::run
