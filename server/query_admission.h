#ifndef GOODPUT_SERVER_QUERY_ADMISSION_H_
#define GOODPUT_SERVER_QUERY_ADMISSION_H_

#include <functional>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace goodput::server {

// The cap on heavy queries (Query.Report, Jobs, Fleet) running at once,
// --max_concurrent_queries: Enter admits a query while fewer than the cap
// run and refuses it at once otherwise (no queueing); each admitted query
// must Leave. Owns only its count and `on_refused`. Thread-safe.
class QueryAdmission {
 public:
  // `max_running` >= 1; `on_refused` (may be empty) is called once per
  // refusal, e.g. to count it for goodput_limit_rejected_total.
  QueryAdmission(int max_running, std::function<void()> on_refused);

  // OK and one more running query, or ResourceExhausted naming the flag.
  absl::Status Enter();
  // Ends a query Enter admitted.
  void Leave();
  int running() const;

 private:
  const int max_running_;
  const std::function<void()> on_refused_;
  mutable absl::Mutex mu_;
  int running_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_QUERY_ADMISSION_H_
