#include "sim/sim_flags.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/catalog.h"
#include "util/flag_values.h"
#include "util/flags.h"
#include "util/time_format.h"

namespace goodput::sim {
namespace {

using Opt = std::optional<std::string>;

absl::Status ToMillis(const std::string& flag, const Opt& v, int64_t* out) {
  if (!v) return absl::OkStatus();
  absl::StatusOr<int64_t> ns = ParseDurationNanos(*v);
  if (!ns.ok() || *ns < 1'000'000) {
    return BadFlag(flag, "a duration of at least 1ms such as 30m or 6h", *v);
  }
  *out = *ns / 1'000'000;
  return absl::OkStatus();
}

// --duration: a duration, or 0 for a steady fleet that runs until stopped.
absl::Status ToDuration(const Opt& v, int64_t* out) {
  if (v && *v == "0") {
    *out = 0;
    return absl::OkStatus();
  }
  return ToMillis("duration", v, out);
}

absl::Status ToAccelerators(const Opt& v, std::vector<std::string>* out) {
  if (!v) return absl::OkStatus();
  const core::Catalog catalog = core::Catalog::Default();
  std::vector<std::string> names = absl::StrSplit(*v, ',', absl::SkipEmpty());
  for (const std::string& name : names) {
    if (catalog.Find(name) == nullptr) {
      return BadFlag("accelerators", "catalog names such as tpu-v5p,h100",
                     name);
    }
  }
  if (names.empty()) return BadFlag("accelerators", "at least one name", *v);
  *out = names;
  return absl::OkStatus();
}

absl::Status ToStart(const Opt& v, int64_t* out) {
  if (!v) return absl::OkStatus();
  absl::StatusOr<int64_t> ns = ParseRfc3339(*v);
  if (!ns.ok()) return BadFlag("start", "an RFC 3339 time", *v);
  *out = *ns / 1'000'000;
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseSimFlags(const std::vector<std::string>& args,
                           SimFlags* flags) {
  std::map<std::string, Opt> v;
  FlagParser p;
  auto add = [&](const char* name, const char* value, const char* help) {
    p.AddString(name, value, &v[name], help);
  };
  add("seed", "N", "random seed (1); the same seed gives the same fleet");
  add("hosts", "N", "simulated hosts (64)");
  add("jobs", "N", "jobs submitted over the run (40)");
  add("duration", "D",
      "simulated time to cover (6h); 0: a steady fleet until stopped");
  add("start", "T", "simulated start time (2026-11-22T00:00:00Z)");
  add("accelerators", "A,B", "generations (tpu-v5p,tpu-v5e,h100,a100)");
  add("max_job_chips", "N", "largest job (4096)");
  add("initial_jobs", "F", "share of jobs submitted at the start (0.5)");
  add("job_duration", "D", "median work of a job (3h)");
  add("mtbi", "D",
      "mean time between interruptions of a running job of --mtbi_chips "
      "chips (8h)");
  add("mtbi_chips", "N",
      "job size at which --mtbi holds; a job of n chips has --mtbi x N / n "
      "(1024); 0: every job has --mtbi");
  add("checkpoint_interval", "D", "training checkpoint interval (30m)");
  add("report_every", "D", "a job reports its steps about this often (10s)");
  add("heartbeat_interval", "D", "host heartbeats (60s)");
  add("elastic_jobs", "F",
      "share of elastic jobs (0): a host failure shrinks them (rule 14)");
  add("out", "FILE",
      "JSON Lines output, - for stdout (-); in live mode a copy of what "
      "was sent");
  add("truth", "FILE", "write the ground truth JSON here");
  add("sockets", "P1,P2", "live mode: agents' Unix sockets, routed by host");
  add("speed", "X", "live mode: simulated seconds per real second (1)");
  p.AddBool("help", &flags->help, "show this help and exit");
  p.AddBool("version", &flags->version, "print the version and exit");
  std::vector<std::string> positional;
  absl::Status s = p.Parse(args, &positional);
  flags->help_text = p.Help();
  if (!s.ok() || flags->help || flags->version) return s;
  if (!positional.empty()) {
    return absl::InvalidArgumentError("unexpected argument " + positional[0]);
  }
  SimConfig& c = flags->config;
  int64_t seed = 1;
  for (absl::Status st : {
           SetIntFlag("seed", v["seed"], 0, kNoMax, &seed),
           SetIntFlag("hosts", v["hosts"], 1, kNoMax, &c.hosts),
           SetIntFlag("jobs", v["jobs"], 0, kNoMax, &c.jobs),
           ToDuration(v["duration"], &c.duration_ms),
           ToStart(v["start"], &c.start_ms),
           ToAccelerators(v["accelerators"], &c.accelerators),
           SetIntFlag("max_job_chips", v["max_job_chips"], 1, kNoMax,
                      &c.max_job_chips),
           SetNumberFlag("initial_jobs", v["initial_jobs"], 0, 1,
                         &c.initial_jobs),
           ToMillis("job_duration", v["job_duration"], &c.job_duration_ms),
           ToMillis("mtbi", v["mtbi"], &c.mtbi_ms),
           SetIntFlag("mtbi_chips", v["mtbi_chips"], 0, kNoMax, &c.mtbi_chips),
           ToMillis("checkpoint_interval", v["checkpoint_interval"],
                    &c.checkpoint_interval_ms),
           ToMillis("report_every", v["report_every"], &c.report_every_ms),
           ToMillis("heartbeat_interval", v["heartbeat_interval"],
                    &c.heartbeat_interval_ms),
           SetNumberFlag("elastic_jobs", v["elastic_jobs"], 0, 1,
                         &c.elastic_jobs),
           SetNumberFlag("speed", v["speed"], 0.001, 1e6, &flags->speed),
       }) {
    if (!st.ok()) return st;
  }
  c.seed = static_cast<uint64_t>(seed);
  if (v["out"]) flags->out = *v["out"];
  flags->truth = v["truth"];
  if (c.duration_ms == 0 && flags->truth) {
    return absl::InvalidArgumentError(
        "--truth: a steady fleet (--duration=0) never ends, so it has no "
        "truth; give a --duration");
  }
  if (v["sockets"]) {
    flags->sockets = absl::StrSplit(*v["sockets"], ',', absl::SkipEmpty());
  }
  return absl::OkStatus();
}

}  // namespace goodput::sim
