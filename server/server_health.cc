#include "server/server_health.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "util/time_format.h"

namespace goodput::server {
namespace {

constexpr char kText[] = "text/plain; charset=utf-8";

const char* Describe(ServerHealth::Phase phase) {
  switch (phase) {
    case ServerHealth::Phase::kOpeningStore:
      return "opening the store";
    case ServerHealth::Phase::kRecovering:
      return "recovering the live state from the store";
    case ServerHealth::Phase::kStartingGrpc:
      return "starting the gRPC server";
    case ServerHealth::Phase::kServing:
      return "serving";
    case ServerHealth::Phase::kStopping:
      return "shutting down";
  }
  return "unknown";
}

}  // namespace

void ServerHealth::SetPhase(Phase phase) {
  absl::MutexLock lock(&mu_);
  phase_ = phase;
}

void ServerHealth::Watch(const Ingestor* ingestor) {
  absl::MutexLock lock(&mu_);
  ingestor_ = ingestor;
}

absl::Status ServerHealth::Live() {
  const Ingestor* ingestor;
  {
    absl::MutexLock lock(&mu_);
    ingestor = ingestor_;
  }
  if (ingestor == nullptr) return absl::OkStatus();
  const IngestHealth h = ingestor->health();
  if (h.store_failures_in_a_row >= options_.store_failures) {
    return absl::UnavailableError(
        absl::StrCat("store failing: the last ", h.store_failures_in_a_row,
                     " batch writes failed; last error: ", h.last_store_error));
  }
  const int64_t busy_ns =
      h.busy_since_ns ? clock_->NowNanos() - *h.busy_since_ns : 0;
  if (busy_ns > options_.wedged_after_ns) {
    return absl::UnavailableError(
        absl::StrCat("wedged: one batch has been in the ingest path for ",
                     FormatShortDuration(busy_ns)));
  }
  return absl::OkStatus();
}

HttpResponse ServerHealth::Healthz() {
  if (absl::Status s = Live(); !s.ok()) {
    return {503, kText, absl::StrCat(s.message(), "\n")};
  }
  absl::MutexLock lock(&mu_);
  return {200, kText, absl::StrCat("ok: ", Describe(phase_), "\n")};
}

HttpResponse ServerHealth::Readyz() {
  Phase phase;
  std::function<absl::Status()> check;
  {
    absl::MutexLock lock(&mu_);
    phase = phase_;
    check = ready_check_;
  }
  if (phase != Phase::kServing) {
    return {503, kText, absl::StrCat("not ready: ", Describe(phase), "\n")};
  }
  if (absl::Status s = Live(); !s.ok()) {
    return {503, kText, absl::StrCat("not ready: ", s.message(), "\n")};
  }
  if (absl::Status s = check ? check() : absl::OkStatus(); !s.ok()) {
    return {503, kText, absl::StrCat("not ready: ", s.message(), "\n")};
  }
  return {200, kText, "ready\n"};
}

}  // namespace goodput::server
