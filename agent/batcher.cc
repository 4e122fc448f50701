#include "agent/batcher.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace goodput::agent {
namespace {

// A Batch's own fields: agent_id (a 36-byte UUID) and sequence, tagged.
constexpr uint64_t kBatchOverheadBytes = 64;

}  // namespace

uint64_t Batcher::EventBytes(size_t size) {
  return size + 1 + 10;  // tag, length varint (<= 10)
}

Batcher::Batcher(Options options, Spool* spool, Clock* clock)
    : options_(std::move(options)),
      spool_(spool),
      clock_(clock),
      drop_log_(clock, absl::Minutes(1), 1),
      commit_log_(clock, absl::Minutes(1), 1) {
  ids_.reserve(options_.batch_events);
}

void Batcher::Add(v1::Event event) { AddWithId(std::move(event), 0); }

void Batcher::AddWithId(v1::Event event, uint64_t id) {
  if (event.host().empty()) event.set_host(options_.host);
  AddSerialized(event.ByteSizeLong(), id,
                [&](uint8_t* p) { event.SerializeWithCachedSizesToArray(p); });
}

void Batcher::AddPlainStep(const codec::PlainStep& step) {
  codec::PlainStep filled = step;
  if (filled.host.empty()) filled.host = options_.host;
  AddSerialized(codec::PlainStepWireSize(filled), 0,
                [&](uint8_t* p) { codec::WritePlainStepWire(filled, p); });
}

void Batcher::AddSerialized(size_t size, uint64_t id,
                            absl::FunctionRef<void(uint8_t*)> write) {
  const uint64_t bytes = EventBytes(size);
  bool started = false;
  {
    absl::MutexLock lock(&mu_);
    // Split before the event that would take the batch over batch_bytes.
    if (count_ > 0 && bytes_ + bytes > options_.batch_bytes) FlushLocked();
    if (count_ == 0) {
      first_ns_ = clock_->NowNanos();
      bytes_ = kBatchOverheadBytes;
      started = true;
    }
    AppendEventLocked(size, write);
    ++count_;
    ids_.push_back(id);
    has_ids_ = has_ids_ || id != 0;
    bytes_ += bytes;
    if (count_ >= options_.batch_events || bytes_ >= options_.batch_bytes) {
      FlushLocked();
    }
  }
  if (started && options_.on_batch_started) options_.on_batch_started();
}

void Batcher::AppendEventLocked(size_t size,
                                absl::FunctionRef<void(uint8_t*)> write) {
  AppendEventsField(size, write, &wire_);
}

void Batcher::Poll() {
  const int64_t now = clock_->NowNanos();
  const int64_t delay = absl::ToInt64Nanoseconds(options_.batch_delay);
  {
    absl::MutexLock lock(&mu_);
    if (count_ > 0 && now - first_ns_ >= delay) FlushLocked();
    if (now - last_commit_ns_ < delay) return;
    last_commit_ns_ = now;
  }
  (void)Commit();
}

void Batcher::Flush() {
  {
    absl::MutexLock lock(&mu_);
    FlushLocked();
  }
  (void)Commit();
}

absl::Status Batcher::Sync() {
  absl::Status s;
  {
    absl::MutexLock lock(&mu_);
    FlushLocked();
    s = std::move(dropped_since_sync_);
    dropped_since_sync_ = absl::OkStatus();
  }
  absl::Status committed = Commit();  // outside mu_: Add goes on meanwhile
  return s.ok() ? committed : s;
}

absl::Status Batcher::Commit() {
  absl::Status s = spool_->Commit();
  if (s.ok()) return s;
  absl::MutexLock lock(&mu_);
  ++stats_.write_errors_io;
  int64_t suppressed = 0;
  if (commit_log_.Allow(&suppressed)) {
    options_.log.Warning(
        absl::StrCat("spool: directory fsync failed (", s.ToString(),
                     "); the batches stay spooled and are committed again"));
  }
  return s;
}

std::optional<int64_t> Batcher::DeadlineNanos() const {
  absl::MutexLock lock(&mu_);
  if (count_ == 0) return std::nullopt;
  return first_ns_ + absl::ToInt64Nanoseconds(options_.batch_delay);
}

size_t Batcher::buffered() const {
  absl::MutexLock lock(&mu_);
  return count_;
}

Batcher::Stats Batcher::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void Batcher::Stats::Add(const Stats& o) {
  spooled_batches += o.spooled_batches;
  spooled_events += o.spooled_events;
  dropped_events += o.dropped_events;
  write_errors_no_space += o.write_errors_no_space;
  write_errors_io += o.write_errors_io;
}

void Batcher::FlushLocked() {
  if (count_ == 0) return;
  const size_t n = count_;
  std::vector<uint64_t> ids;  // empty unless an event has an id
  if (has_ids_) ids = ids_;
  ids_.clear();
  has_ids_ = false;
  const SpoolStats before = spool_->Stats();  // only this batcher appends
  absl::StatusOr<uint64_t> seq = spool_->AppendWire(wire_, n, first_ns_, ids);
  wire_.clear();  // keeps its capacity for the next batch
  count_ = 0;
  if (!seq.ok()) {
    if (options_.ids != nullptr) options_.ids->Release(ids);
    dropped_since_sync_ = seq.status();
    CountWriteError(before, spool_->Stats());
    ReportDrop(n, seq.status());
    return;
  }
  ++stats_.spooled_batches;
  stats_.spooled_events += static_cast<int64_t>(n);
}

void Batcher::CountWriteError(const SpoolStats& before,
                              const SpoolStats& after) {
  const uint64_t no_space = after.no_space - before.no_space;
  const uint64_t errors = after.write_errors - before.write_errors;
  stats_.write_errors_no_space += static_cast<int64_t>(no_space);
  stats_.write_errors_io += static_cast<int64_t>(errors - no_space);
}

void Batcher::FlushSuppressedLogs(bool all) {
  absl::MutexLock lock(&mu_);
  if (drop_log_.TakeSuppressed(all) > 0 && dropped_unlogged_ > 0) {
    options_.log.Warning(absl::StrCat("spool: dropped ", dropped_unlogged_,
                                      " more events since the last message"));
    dropped_unlogged_ = 0;
  }
  if (const int64_t n = commit_log_.TakeSuppressed(all); n > 0) {
    options_.log.Warning(absl::StrCat("spool: directory fsync failed ", n,
                                      " more times (not logged)"));
  }
}

void Batcher::ReportDrop(size_t events, const absl::Status& status) {
  stats_.dropped_events += static_cast<int64_t>(events);
  dropped_unlogged_ += static_cast<int64_t>(events);
  int64_t suppressed = 0;
  if (!drop_log_.Allow(&suppressed)) return;
  options_.log.Warning(
      absl::StrCat("spool: dropped ", dropped_unlogged_,
                   " events since the last message: ", status.ToString()));
  dropped_unlogged_ = 0;
}

}  // namespace goodput::agent
