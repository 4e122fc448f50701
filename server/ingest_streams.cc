#include "server/ingest_streams.h"

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace goodput::server {

IngestStreams::IngestStreams(Options options, Clock* clock)
    : options_(options), clock_(clock) {}

absl::StatusOr<std::unique_ptr<IngestStreams::Handle>> IngestStreams::Enter(
    grpc::ServerContext* context) {
  absl::MutexLock lock(&mu_);
  if (options_.max_streams > 0 &&
      open_.size() >= static_cast<size_t>(options_.max_streams)) {
    ++stats_.refused;
    return absl::ResourceExhaustedError(absl::StrCat(
        "ingest: ", open_.size(),
        " ingest streams are open, the most "
        "goodputd takes (--max_ingest_streams=",
        options_.max_streams,
        "; the rest of --max_streams is kept for queries); retry later, or "
        "raise both flags for a larger fleet"));
  }
  open_[context] =
      Open{.peer = context->peer(), .last_active_ns = clock_->NowNanos()};
  stats_.open = static_cast<int64_t>(open_.size());
  return std::unique_ptr<Handle>(new Handle(this, context));
}

IngestStreams::Handle::~Handle() {
  absl::MutexLock lock(&owner_->mu_);
  owner_->open_.erase(context_);
  owner_->stats_.open = static_cast<int64_t>(owner_->open_.size());
}

void IngestStreams::Handle::Touch() {
  const int64_t now = owner_->clock_->NowNanos();
  absl::MutexLock lock(&owner_->mu_);
  owner_->open_[context_].last_active_ns = now;
}

int IngestStreams::CancelIdle() {
  if (options_.idle_timeout_ns <= 0) return 0;
  const int64_t now = clock_->NowNanos();
  absl::MutexLock lock(&mu_);
  int cancelled = 0;
  for (auto& [context, open] : open_) {
    if (open.cancelled || now - open.last_active_ns < options_.idle_timeout_ns)
      continue;
    open.cancelled = true;
    context->TryCancel();
    ++cancelled;
    options_.log.Info(absl::StrCat(
        "ended ingest stream from ", open.peer, ": no batch for ",
        absl::FormatDuration(absl::Nanoseconds(now - open.last_active_ns)),
        " (--stream_idle_timeout=",
        absl::FormatDuration(absl::Nanoseconds(options_.idle_timeout_ns)),
        ")"));
  }
  stats_.idle_closed += cancelled;
  return cancelled;
}

IngestStreams::Stats IngestStreams::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace goodput::server
