#include "server/query_admission.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace goodput::server {

QueryAdmission::QueryAdmission(int max_running,
                               std::function<void()> on_refused)
    : max_running_(max_running), on_refused_(std::move(on_refused)) {}

absl::Status QueryAdmission::Enter() {
  {
    absl::MutexLock lock(&mu_);
    if (running_ < max_running_) {
      ++running_;
      return absl::OkStatus();
    }
  }
  if (on_refused_) on_refused_();
  return absl::ResourceExhaustedError(
      absl::StrCat("query refused: ", max_running_,
                   " report, jobs, fleet or summary queries are running "
                   "already (--max_concurrent_queries=",
                   max_running_, "); retry later"));
}

void QueryAdmission::Leave() {
  absl::MutexLock lock(&mu_);
  --running_;
}

int QueryAdmission::running() const {
  absl::MutexLock lock(&mu_);
  return running_;
}

}  // namespace goodput::server
