#include "server/security_flags.h"

#include <cstdint>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace goodput::server {
namespace {

// Parses `value` of `flag` as an integer in [min, max] into `out`.
template <typename Int>
absl::Status ParseCount(const char* flag,
                        const std::optional<std::string>& value, int64_t min,
                        int64_t max, Int* out) {
  if (!value) return absl::OkStatus();
  int64_t n = 0;
  if (!absl::SimpleAtoi(*value, &n) || n < min || n > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": want an integer in [", min, ", ", max,
                     "], got \"", *value, "\""));
  }
  *out = static_cast<Int>(n);
  return absl::OkStatus();
}

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
  parser->AddString("max_concurrent_queries", "N", &f->max_concurrent_queries,
                    "report, jobs and fleet queries running at once at most; "
                    "more are refused (4)");
}

absl::Status ApplySecurityFlags(const SecurityFlags& f,
                                GoodputdOptions* options) {
  options->tls.cert = f.tls_cert.value_or("");
  options->tls.key = f.tls_key.value_or("");
  options->tls.client_ca = f.tls_client_ca.value_or("");
  options->auth_tokens = f.auth_tokens.value_or("");
  options->metrics_basic_auth_file = f.metrics_basic_auth_file.value_or("");
  constexpr int64_t kBig = std::numeric_limits<int32_t>::max();
  IngestLimitOptions& limits = options->limits;
  codec::ValidationLimits& validation = options->validation;
  for (absl::Status s :
       {ParseCount("--max_jobs", f.max_jobs, 1, kBig, &limits.max_jobs),
        ParseCount("--max_labels", f.max_labels, 0, 10000,
                   &validation.max_labels),
        ParseCount("--max_string_bytes", f.max_string_bytes, 1, 1 << 20,
                   &validation.max_string_bytes),
        ParseCount("--max_batch_events", f.max_batch_events, 1, kBig,
                   &limits.max_batch_events),
        ParseCount("--max_batch_bytes", f.max_batch_bytes, 1024, kBig,
                   &limits.max_batch_bytes),
        ParseCount("--max_streams", f.max_streams, 1, 100000,
                   &options->max_streams),
        ParseCount("--max_concurrent_queries", f.max_concurrent_queries, 1,
                   100000, &options->max_concurrent_queries),
        ParseRate(f.max_agent_rate, &limits.agent_events_per_second)}) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace goodput::server
