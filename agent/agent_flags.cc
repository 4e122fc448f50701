#include "agent/agent_flags.h"

#include <functional>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "util/flag_file.h"
#include "util/flag_values.h"
#include "util/shard_map.h"

namespace goodput::agent {
namespace {

// Sets the field of flag --`name` from `value`; an error names the flag.
using Setter = std::function<absl::Status(
    absl::string_view name, const std::string& value, AgentFlags*)>;

struct FlagSpec {
  const char* name;
  const char* value_name;
  const char* help;
  Setter set;
};

Setter String(std::string AgentFlags::*field) {
  return [field](absl::string_view, const std::string& v, AgentFlags* f) {
    f->*field = v;
    return absl::OkStatus();
  };
}

Setter TlsString(std::string ClientTlsFlags::*field) {
  return [field](absl::string_view, const std::string& v, AgentFlags* f) {
    f->tls.*field = v;
    return absl::OkStatus();
  };
}

template <typename Int>
Setter Count(Int AgentFlags::*field, Int min) {
  return [field, min](absl::string_view name, const std::string& v,
                      AgentFlags* f) {
    return SetIntFlag(name, v, static_cast<int64_t>(min), kNoMax, &(f->*field));
  };
}

Setter Duration(absl::Duration AgentFlags::*field) {
  return [field](absl::string_view name, const std::string& v, AgentFlags* f) {
    return SetDurationFlag(name, v, absl::Nanoseconds(1), &(f->*field));
  };
}

Setter Bytes(uint64_t AgentFlags::*field) {
  return [field](absl::string_view name, const std::string& v, AgentFlags* f) {
    auto n = ParseBytes(v);
    if (!n.ok())
      return BadFlag(name, "a positive size such as 1GiB or 65536", v);
    f->*field = *n;
    return absl::OkStatus();
  };
}

// The flag table (built per call: a few dozen bytes, no static state).
std::vector<FlagSpec> Specs() {
  return {
      {"server", "HOST:PORT[,...]",
       "goodputd ingest address, or the shard list: each event goes to the "
       "shard of its job_id, heartbeats to all (required)",
       String(&AgentFlags::server)},
      {"socket", "PATH", "Unix socket for JSON Lines, mode 0666 (required)",
       String(&AgentFlags::socket_path)},
      {"spool_dir", "DIR", "spool and agent identity (required)",
       String(&AgentFlags::spool_dir)},
      {"host", "NAME", "host set on events without one (default: hostname)",
       String(&AgentFlags::host)},
      {"metrics_address", "HOST:PORT",
       "/metrics and /healthz (default 127.0.0.1:7702; empty: off)",
       String(&AgentFlags::metrics_address)},
      {"chips", "N", "send heartbeats: this host has N chips",
       Count(&AgentFlags::chips, int64_t{1})},
      {"accelerator", "NAME", "the chips' accelerator, e.g. tpu-v5p",
       String(&AgentFlags::accelerator)},
      {"heartbeat_interval", "DURATION", "between heartbeats (default 60s)",
       Duration(&AgentFlags::heartbeat_interval)},
      {"batch_events", "N", "events per batch at most (default 500)",
       Count(&AgentFlags::batch_events, size_t{1})},
      {"batch_bytes", "BYTES",
       "serialized bytes per batch at most; keep it below goodputd's "
       "--max_batch_bytes (default 1MiB)",
       Bytes(&AgentFlags::batch_bytes)},
      {"batch_delay", "DURATION",
       "longest wait before a batch is spooled (default 200ms)",
       Duration(&AgentFlags::batch_delay)},
      {"max_spool_bytes", "BYTES",
       "spool bound; when full new events are dropped (default 1GiB)",
       Bytes(&AgentFlags::max_spool_bytes)},
      {"max_in_flight", "N", "batches awaiting acks at most (default 8)",
       Count(&AgentFlags::max_in_flight, size_t{1})},
      {"max_line_bytes", "BYTES", "longest socket line (default 1MiB)",
       Bytes(&AgentFlags::max_line_bytes)},
      {"max_connections", "N",
       "socket clients at once; a new one replaces the longest idle, or "
       "waits (default 256)",
       Count(&AgentFlags::max_connections, size_t{1})},
      {"client_idle_timeout", "DURATION",
       "a socket client that sent nothing this long is closed (default 5m)",
       Duration(&AgentFlags::client_idle_timeout)},
      {"tls_ca", "FILE", "PEM CA of goodputd's certificate: use TLS",
       TlsString(&ClientTlsFlags::ca)},
      {"tls_cert", "FILE", "PEM client certificate (mutual TLS)",
       TlsString(&ClientTlsFlags::cert)},
      {"tls_key", "FILE", "PEM key of --tls_cert",
       TlsString(&ClientTlsFlags::key)},
      {"tls_server_name", "NAME",
       "name expected in goodputd's certificate (default: HOST)",
       TlsString(&ClientTlsFlags::server_name)},
      {"auth_token_file", "FILE", "bearer token for goodputd (needs --tls_ca)",
       TlsString(&ClientTlsFlags::token_file)},
      {"metrics_basic_auth_file", "FILE",
       "\"user:password\" lines: basic auth on /metrics and /healthz",
       String(&AgentFlags::metrics_basic_auth_file)},
      {"client_spool_dir", "DIR",
       "ingest the spool files clients wrote while the agent was down",
       String(&AgentFlags::client_spool_dir)},
      {"log_format", "text|json",
       "log lines on stderr: text (default) or one JSON object per line",
       [](absl::string_view name, const std::string& v, AgentFlags* f) {
         auto format = Logger::ParseFormat(v);
         if (!format.ok()) return BadFlag(name, "text or json", v);
         f->log_format = *format;
         return absl::OkStatus();
       }},
      {"tail", "GLOB",
       "follow training log files matching GLOB through --log_profile",
       String(&AgentFlags::tail)},
      {"log_profile", "NAME|FILE",
       "log profile of --tail: megatron, nemo, torchtitan, maxtext, "
       "hf_trainer, deepspeed or a YAML file",
       String(&AgentFlags::log_profile)},
      {"tail_job_id", "RE",
       "RE2 pattern with (?P<job_id>...) taking the job id from a log's path "
       "(default: the file name without its extension)",
       String(&AgentFlags::tail_job_id)},
      {"tail_state", "FILE",
       "read offsets of --tail (default: SPOOL_DIR/tail-state)",
       String(&AgentFlags::tail_state)},
      {"tail_format", "F",
       "plain (default) or cri (Kubernetes container logs, /var/log/pods)",
       String(&AgentFlags::tail_format)},
  };
}

std::optional<FlagSpec> Find(absl::string_view name) {
  for (FlagSpec& spec : Specs()) {
    if (name == spec.name) return std::move(spec);
  }
  return std::nullopt;
}

absl::Status Check(const AgentFlags& f) {
  if (f.help || f.version) return absl::OkStatus();
  if (absl::Status s = ShardMap::Parse(f.server, "--server").status();
      !s.ok()) {
    return s;
  }
  if (f.socket_path.empty()) {
    return absl::InvalidArgumentError("--socket: required");
  }
  if (f.tail.empty() != f.log_profile.empty()) {
    return absl::InvalidArgumentError(
        "--tail and --log_profile: give both or neither");
  }
  if (f.tail_format != "plain" && f.tail_format != "cri") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--tail_format: must be plain or cri, got \"", f.tail_format, "\""));
  }
  if (f.spool_dir.empty()) {
    return absl::InvalidArgumentError("--spool_dir: required");
  }
  if (f.chips > 0 && f.accelerator.empty()) {
    return absl::InvalidArgumentError("--accelerator: required with --chips");
  }
  if (f.chips == 0 && !f.accelerator.empty()) {
    return absl::InvalidArgumentError("--chips: required with --accelerator");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<uint64_t> ParseBytes(absl::string_view text) {
  struct Unit {
    const char* suffix;
    uint64_t factor;
  };
  static constexpr Unit kUnits[] = {{"KiB", uint64_t{1} << 10},
                                    {"MiB", uint64_t{1} << 20},
                                    {"GiB", uint64_t{1} << 30},
                                    {"TiB", uint64_t{1} << 40},
                                    {"KB", 1000},
                                    {"MB", 1000 * 1000},
                                    {"GB", 1000 * 1000 * 1000},
                                    {"B", 1}};
  absl::string_view digits = text;
  uint64_t factor = 1;
  for (const Unit& u : kUnits) {
    if (absl::ConsumeSuffix(&digits, u.suffix)) {
      factor = u.factor;
      break;
    }
  }
  uint64_t n = 0;
  if (!absl::SimpleAtoi(digits, &n) || n == 0 ||
      n > std::numeric_limits<uint64_t>::max() / factor) {
    return absl::InvalidArgumentError(absl::StrCat(
        "must be a positive size such as 1GiB or 65536, got \"", text, "\""));
  }
  return n * factor;
}

namespace {

// Parses the flag args[*i] into `flags`, consuming args[*i + 1] for
// "--name value".
absl::Status ParseOne(const std::vector<std::string>& args, size_t* i,
                      AgentFlags* flags) {
  absl::string_view arg = args[*i];
  if (arg == "-h" || arg == "--help" || arg == "--version") {
    (arg == "--version" ? flags->version : flags->help) = true;
    return absl::OkStatus();
  }
  if (!absl::ConsumePrefix(&arg, "--")) {
    return absl::InvalidArgumentError(
        absl::StrCat("unexpected argument \"", arg, "\""));
  }
  const size_t eq = arg.find('=');
  absl::string_view name = arg.substr(0, eq);
  std::optional<FlagSpec> spec = Find(name);
  if (!spec) {
    return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
  }
  std::string value;
  if (eq != absl::string_view::npos) {
    value = std::string(arg.substr(eq + 1));
  } else if (*i + 1 < args.size()) {
    value = args[++*i];
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, ": needs a value"));
  }
  return spec->set(name, value, flags);
}

}  // namespace

absl::StatusOr<AgentFlags> ParseAgentFlags(
    const std::vector<std::string>& command_line) {
  auto args = ExpandFlagFile(command_line, [](const std::string& arg) {
    AgentFlags scratch;
    size_t i = 0;
    return ParseOne({arg}, &i, &scratch);
  });
  if (!args.ok()) return args.status();
  AgentFlags flags;
  for (size_t i = 0; i < args->size(); ++i) {
    if (absl::Status s = ParseOne(*args, &i, &flags); !s.ok()) return s;
  }
  absl::Status s = Check(flags);
  if (!s.ok()) return s;
  return flags;
}

std::string AgentUsage() {
  std::string out =
      "usage: goodput-agent --server=HOST:PORT --socket=PATH --spool_dir=DIR "
      "[flags]\n\n"
      "The goodput per-host agent: takes JSON Lines events on a Unix socket,\n"
      "spools them to disk and streams them to goodputd (see "
      "agent/README.md).\n\nflags:\n";
  for (const FlagSpec& spec : Specs()) {
    absl::StrAppendFormat(&out, "  %-30s %s\n",
                          absl::StrCat("--", spec.name, "=", spec.value_name),
                          spec.help);
  }
  absl::StrAppendFormat(&out, "  %-30s %s\n", "--flagfile=PATH",
                        "read flags from PATH first, one per line ('#' "
                        "comments); the command line overrides them");
  absl::StrAppendFormat(&out, "  %-30s %s\n", "--version",
                        "print the version and exit");
  absl::StrAppendFormat(&out, "  %-30s %s\n", "--help", "show this help");
  return out;
}

}  // namespace goodput::agent
