#include "server/security_flags.h"

#include <cstdint>
#include <limits>
#include <type_traits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "util/flag_values.h"
#include "util/time_format.h"

namespace goodput::server {
namespace {

absl::Status ParseRate(const std::optional<std::string>& value, double* out) {
  if (!value) return absl::OkStatus();
  double rate = 0;
  if (!absl::SimpleAtod(*value, &rate) || !(rate >= 0) || rate > 1e12) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_agent_rate: want events per second >= 0 (0 = unlimited), got "
        "\"",
        *value, "\""));
  }
  *out = rate;
  return absl::OkStatus();
}

// Parses `value` of `flag` as a DURATION ("0" = none) into `out`.
template <typename Out>
absl::Status ParseAge(const char* flag, const std::optional<std::string>& value,
                      Out* out) {
  if (!value) return absl::OkStatus();
  absl::StatusOr<int64_t> ns =
      *value == "0" ? absl::StatusOr<int64_t>(0) : ParseDurationNanos(*value);
  if (!ns.ok() || *ns < 0) {
    return BadFlag(absl::StripPrefix(flag, "--"),
                   "a duration such as 720h, or 0 for none", *value);
  }
  if constexpr (std::is_same_v<Out, int64_t>) {
    *out = *ns;
  } else {
    *out = *ns > 0 ? Out(*ns) : std::nullopt;
  }
  return absl::OkStatus();
}

void AddIdentityFlags(FlagParser* parser, SecurityFlags* f) {
  parser->AddString("max_agent_id_bytes", "N", &f->max_agent_id_bytes,
                    "longest batch agent_id; longer ones end the stream (128)");
  parser->AddString("agent_takeover_after", "DURATION",
                    &f->agent_takeover_after,
                    "a stream idle this long yields its agent id to a new "
                    "stream of that id; a busier one refuses it (3m)");
  parser->AddString("max_sequence_jump", "N", &f->max_sequence_jump,
                    "batches more than N above their agent's acknowledged "
                    "sequence are refused (1000000; 0 = no limit)");
  parser->AddString("agent_series_ttl", "DURATION", &f->agent_series_ttl,
                    "an agent's last-seen series ends after this silence "
                    "(24h; 0 = never)");
  parser->AddString("max_event_age", "DURATION", &f->max_event_age,
                    "events older than this are rejected (43800h = 5 "
                    "years; 0 = no limit)");
  parser->AddString("max_chips", "N", &f->max_chips,
                    "largest chips of an event (1048576)");
  parser->AddString("max_flops", "X", &f->max_flops,
                    "largest FLOPs of a step event or step_flops (1e24)");
  parser->AddString("max_bytes", "X", &f->max_bytes,
                    "largest bytes of a step event or step_bytes (1e22)");
  parser->AddString("max_step", "N", &f->max_step,
                    "largest step number (1000000000000)");
}

absl::Status ApplyIdentityFlags(const SecurityFlags& f,
                                GoodputdOptions* options) {
  codec::ValidationLimits& v = options->validation;
  constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();
  for (absl::Status s :
       {SetIntFlag("max_agent_id_bytes", f.max_agent_id_bytes, 1, 1 << 16,
                   &options->agent_guard.max_agent_id_bytes),
        ParseAge("--agent_takeover_after", f.agent_takeover_after,
                 &options->agent_guard.takeover_after_ns),
        SetIntFlag("max_sequence_jump", f.max_sequence_jump, 0, kMaxInt,
                   &options->max_sequence_jump),
        ParseAge("--agent_series_ttl", f.agent_series_ttl,
                 &options->agent_series_ttl_ns),
        ParseAge("--max_event_age", f.max_event_age, &v.max_age_ns),
        SetIntFlag("max_chips", f.max_chips, 1, kMaxInt, &v.max_chips),
        SetNumberFlag("max_flops", f.max_flops, 1, 1e300, &v.max_flops),
        SetNumberFlag("max_bytes", f.max_bytes, 1, 1e300, &v.max_bytes),
        SetIntFlag("max_step", f.max_step, 1, kMaxInt, &v.max_step)}) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

void AddSecurityFlags(FlagParser* parser, SecurityFlags* f) {
  parser->AddString("tls_cert", "FILE", &f->tls_cert,
                    "PEM certificate: serve gRPC over TLS (with --tls_key)");
  parser->AddString("tls_key", "FILE", &f->tls_key, "PEM key of --tls_cert");
  parser->AddString("tls_client_ca", "FILE", &f->tls_client_ca,
                    "require client certificates signed by this CA (mTLS)");
  parser->AddString("auth_tokens", "FILE", &f->auth_tokens,
                    "lines \"agent_name token\": every call needs a token");
  parser->AddString("metrics_basic_auth_file", "FILE",
                    &f->metrics_basic_auth_file,
                    "lines \"user:password\": /metrics needs HTTP basic auth");
  parser->AddString("max_jobs", "N", &f->max_jobs,
                    "jobs held at most; events of more are rejected (1000000)");
  parser->AddString("max_labels", "N", &f->max_labels,
                    "labels per job_submitted at most (32)");
  parser->AddString("max_string_bytes", "N", &f->max_string_bytes,
                    "longest id, name, label key or value (256)");
  parser->AddString("max_batch_events", "N", &f->max_batch_events,
                    "events per batch at most (10000)");
  parser->AddString("max_batch_bytes", "N", &f->max_batch_bytes,
                    "largest batch, serialized (4194304)");
  parser->AddString("max_agent_rate", "EVENTS/S", &f->max_agent_rate,
                    "per-agent event rate, bursts of 2 s (0 = unlimited)");
  parser->AddString("max_streams", "N", &f->max_streams,
                    "concurrent gRPC calls at most (256)");
  parser->AddString(
      "max_concurrent_queries", "N", &f->max_concurrent_queries,
      "report, jobs, fleet and summary queries running at once at most; "
      "more are refused (4)");
  parser->AddString("query_nice", "N", &f->query_nice,
                    "heavy queries and /metrics run this much nicer than "
                    "ingest, 0-19 (10; 0 = the same priority)");
  parser->AddString("max_ingest_streams", "N", &f->max_ingest_streams,
                    "agent streams open at once at most; the rest of "
                    "--max_streams is kept for queries and health (default: "
                    "--max_streams minus max(2, --max_streams/8))");
  parser->AddString("stream_idle_timeout", "DURATION", &f->stream_idle_timeout,
                    "an agent stream with no batch this long is ended (15m; "
                    "0 = never)");
  AddIdentityFlags(parser, f);
}

absl::Status ApplySecurityFlags(const SecurityFlags& f,
                                GoodputdOptions* options) {
  options->tls.cert = f.tls_cert.value_or("");
  options->tls.key = f.tls_key.value_or("");
  options->tls.client_ca = f.tls_client_ca.value_or("");
  options->auth_tokens = f.auth_tokens.value_or("");
  options->metrics_basic_auth_file = f.metrics_basic_auth_file.value_or("");
  constexpr int64_t kBig = std::numeric_limits<int32_t>::max();
  options->stream_idle_timeout_ns = 15 * 60 * int64_t{1000000000};
  IngestLimitOptions& limits = options->limits;
  codec::ValidationLimits& validation = options->validation;
  for (absl::Status s :
       {SetIntFlag("max_jobs", f.max_jobs, 1, kBig, &limits.max_jobs),
        SetIntFlag("max_labels", f.max_labels, 0, 10000,
                   &validation.max_labels),
        SetIntFlag("max_string_bytes", f.max_string_bytes, 1, 1 << 20,
                   &validation.max_string_bytes),
        SetIntFlag("max_batch_events", f.max_batch_events, 1, kBig,
                   &limits.max_batch_events),
        SetIntFlag("max_batch_bytes", f.max_batch_bytes, 1024, kBig,
                   &limits.max_batch_bytes),
        SetIntFlag("max_streams", f.max_streams, 1, 100000,
                   &options->max_streams),
        SetIntFlag("max_concurrent_queries", f.max_concurrent_queries, 1,
                   100000, &options->max_concurrent_queries),
        SetIntFlag("query_nice", f.query_nice, 0, 19, &options->query_nice),
        SetIntFlag("max_ingest_streams", f.max_ingest_streams, 1, 100000,
                   &options->max_ingest_streams),
        ParseAge("--stream_idle_timeout", f.stream_idle_timeout,
                 &options->stream_idle_timeout_ns),
        ParseRate(f.max_agent_rate, &limits.agent_events_per_second)}) {
    if (!s.ok()) return s;
  }
  if (options->max_ingest_streams > options->max_streams - 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_ingest_streams=", options->max_ingest_streams,
        " must leave at least 2 of --max_streams=", options->max_streams,
        " for queries and health checks"));
  }
  return ApplyIdentityFlags(f, options);
}

}  // namespace goodput::server
