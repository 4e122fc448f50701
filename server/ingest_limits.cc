#include "server/ingest_limits.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace goodput::server {
namespace {

constexpr size_t kManyBuckets = 10000;
constexpr double kNanosPerSecond = 1e9;

double Burst(const IngestLimitOptions& o) {
  return o.agent_burst_events > 0 ? o.agent_burst_events
                                  : 2 * o.agent_events_per_second;
}

// The validator's wording of its size limits (codec/event_validator.cc:
// "FIELD: must have at most N labels, got M", "FIELD: must be at most N
// bytes, got M bytes ..."); ingest_limits_test pins it.
bool IsLabelsLimit(absl::string_view message) {
  return absl::StrContains(message, ": must have at most ") &&
         absl::StrContains(message, " labels, got ");
}
bool IsStringLimit(absl::string_view message) {
  return absl::StrContains(message, ": must be at most ") &&
         absl::StrContains(message, " bytes, got ");
}

}  // namespace

IngestLimits::IngestLimits(IngestLimitOptions options, Clock* clock)
    : options_(options), burst_(Burst(options)), clock_(clock) {}

absl::Status IngestLimits::AdmitBatchBytes(size_t bytes) {
  if (bytes <= options_.max_batch_bytes) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  ++stats_.bytes_limited_batches;
  return absl::InvalidArgumentError(absl::StrCat(
      "batch: ", bytes,
      " bytes exceed --max_batch_bytes=", options_.max_batch_bytes));
}

int IngestLimits::TransportLimit() const {
  constexpr size_t kMax = std::numeric_limits<int>::max();
  return static_cast<int>(std::min(kMax, 2 * options_.max_batch_bytes));
}

absl::Status IngestLimits::AdmitBatch(const std::string& agent, size_t events,
                                      absl::Duration* retry_after) {
  absl::MutexLock lock(&mu_);
  if (events > options_.max_batch_events) {
    ++stats_.batches_too_large;
    return absl::InvalidArgumentError(absl::StrCat(
        "batch: ", events,
        " events exceed --max_batch_events=", options_.max_batch_events));
  }
  if (options_.agent_events_per_second <= 0) return absl::OkStatus();
  const int64_t now_ns = clock_->NowNanos();
  ForgetIdle(now_ns);
  auto [it, fresh] = buckets_.try_emplace(agent, Bucket{burst_, now_ns});
  Bucket& bucket = it->second;
  Refill(&bucket, now_ns);
  if (bucket.tokens <= 0) {
    ++stats_.rate_limited_batches;
    *retry_after = absl::Nanoseconds(
        std::ceil((1 - bucket.tokens) / options_.agent_events_per_second *
                  kNanosPerSecond));
    return absl::ResourceExhaustedError(absl::StrCat(
        "agent ", agent,
        ": over --max_agent_rate=", options_.agent_events_per_second,
        " events/s; retry after ", absl::FormatDuration(*retry_after)));
  }
  bucket.tokens -= static_cast<double>(events);
  return absl::OkStatus();
}

void IngestLimits::Refill(Bucket* bucket, int64_t now_ns) const {
  const double elapsed_s =
      std::max<int64_t>(0, now_ns - bucket->updated_ns) / kNanosPerSecond;
  bucket->tokens = std::min(
      burst_, bucket->tokens + elapsed_s * options_.agent_events_per_second);
  bucket->updated_ns = std::max(bucket->updated_ns, now_ns);
}

void IngestLimits::ForgetIdle(int64_t now_ns) {
  if (buckets_.size() < kManyBuckets) return;
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    Refill(&it->second, now_ns);
    it = it->second.tokens >= burst_ ? buckets_.erase(it) : std::next(it);
  }
}

absl::Status IngestLimits::AdmitJob(
    const v1::Event& e, bool is_known, size_t known_jobs,
    std::unordered_set<std::string>* new_in_batch) {
  if (e.job_id().empty() || is_known ||  // heartbeats, fleet exclusions
      new_in_batch->count(e.job_id()) > 0) {
    return absl::OkStatus();
  }
  if (known_jobs + new_in_batch->size() < options_.max_jobs) {
    new_in_batch->insert(e.job_id());
    return absl::OkStatus();
  }
  absl::MutexLock lock(&mu_);
  ++stats_.jobs_limited_events;
  return absl::ResourceExhaustedError(
      absl::StrCat("job_id: job \"", e.job_id(), "\" would exceed --max_jobs=",
                   options_.max_jobs, " jobs held by the server"));
}

void IngestLimits::CountInvalidEvent(const absl::Status& invalid) {
  const absl::string_view message = invalid.message();
  const bool labels = IsLabelsLimit(message);
  if (!labels && !IsStringLimit(message)) return;
  absl::MutexLock lock(&mu_);
  ++(labels ? stats_.labels_limited_events : stats_.strings_limited_events);
}

void IngestLimits::CountRefusedStream() {
  absl::MutexLock lock(&mu_);
  ++stats_.refused_streams;
}

void IngestLimits::CountRefusedQuery() {
  absl::MutexLock lock(&mu_);
  ++stats_.refused_queries;
}

IngestLimitStats IngestLimits::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace goodput::server
