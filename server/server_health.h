#ifndef GOODPUT_SERVER_SERVER_HEALTH_H_
#define GOODPUT_SERVER_SERVER_HEALTH_H_

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "server/ingestor.h"
#include "util/clock.h"
#include "util/http_server.h"

namespace goodput::server {

// ServerHealth: goodputd's answers to GET /healthz (liveness) and GET
// /readyz (readiness), from its start-up phase and the ingest path's health.
// /healthz is 503 only when the process is wedged (a batch has been in the
// ingest path longer than `wedged_after_ns` by the clock) or its store is
// failing (the last `store_failures` batch writes in a row failed); it is
// 200 while the store opens and the live state recovers. /readyz is 200 only
// once ingest and queries are served and /healthz is 200; otherwise 503 with
// the reason as the body. Does not own the clock or the ingestor, which must
// outlive it. Thread-safe.
class ServerHealth {
 public:
  enum class Phase {
    kOpeningStore,
    kRecovering,
    kStartingGrpc,
    kServing,
    kStopping
  };
  struct Options {
    int64_t store_failures = 3;
    int64_t wedged_after_ns = 60 * int64_t{1000000000};
  };

  ServerHealth(Clock* clock, Options options)
      : clock_(clock), options_(options) {}

  void SetPhase(Phase phase);
  // The ingest path to watch, once it exists (null: nothing to watch).
  void Watch(const Ingestor* ingestor);

  // A further condition of readiness (cluster mode: NATS reachable): while
  // serving, /readyz is 503 with its message when it is not OK. Call
  // before serving.
  void set_ready_check(std::function<absl::Status()> check) {
    absl::MutexLock lock(&mu_);
    ready_check_ = std::move(check);
  }

  HttpResponse Healthz();
  HttpResponse Readyz();

 private:
  // OK, or Unavailable saying why the process is not live.
  absl::Status Live();

  Clock* const clock_;
  const Options options_;
  absl::Mutex mu_;
  Phase phase_ ABSL_GUARDED_BY(mu_) = Phase::kOpeningStore;
  const Ingestor* ingestor_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::function<absl::Status()> ready_check_ ABSL_GUARDED_BY(mu_);
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_SERVER_HEALTH_H_
