#include "agent/uplink.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/await_stats.h"
#include "util/grpc_status.h"
#include "util/retry_hint.h"

namespace goodput::agent {
namespace {

std::shared_ptr<grpc::Channel> NewChannel(const Uplink::Options& options) {
  grpc::ChannelArguments args;
  const int initial_ms =
      static_cast<int>(absl::ToInt64Milliseconds(options.initial_backoff));
  // gRPC's own reconnect backoff (1 s, up to 120 s by default) would gate
  // ours: make the channel retry as eagerly as the uplink does.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, initial_ms);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, initial_ms);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
              static_cast<int>(absl::ToInt64Milliseconds(options.max_backoff)));
  if (!options.tls_server_name.empty()) {
    args.SetSslTargetNameOverride(options.tls_server_name);
  }
  return grpc::CreateCustomChannel(options.server,
                                   options.credentials
                                       ? options.credentials
                                       : grpc::InsecureChannelCredentials(),
                                   args);
}

// What the generated stub does for Ingest.Stream, with the batch as bytes.
using StreamFactory =
    grpc::internal::ClientReaderWriterFactory<grpc::ByteBuffer, v1::Ack>;

uint64_t Seed(uint64_t seed) {
  return seed != 0 ? seed : std::random_device()();
}

}  // namespace

Uplink::Uplink(Options options, Spool* spool, Clock* clock, Sleeper* sleeper)
    : options_(std::move(options)),
      spool_(spool),
      clock_(clock),
      sleeper_(sleeper),
      channel_(NewChannel(options_)),
      stream_method_("/goodput.v1.Ingest/Stream",
                     grpc::internal::RpcMethod::BIDI_STREAMING, channel_),
      backoff_(options_.initial_backoff, options_.max_backoff,
               Seed(options_.seed)),
      retry_log_(clock, absl::Seconds(30), 1),
      rejection_log_(clock, absl::Seconds(1), 10) {}

Uplink::~Uplink() { Stop(); }

void Uplink::Start() {
  thread_ = std::thread([this] { Run(); });
}

void Uplink::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    if (context_ != nullptr) context_->TryCancel();
  }
  sleeper_->Interrupt();
  if (thread_.joinable()) thread_.join();
}

void Uplink::Notify() {
  absl::MutexLock lock(&mu_);
  ++append_generation_;
}

bool Uplink::connected() const {
  absl::MutexLock lock(&mu_);
  return session_active_ &&
         channel_->GetState(/*try_to_connect=*/false) == GRPC_CHANNEL_READY;
}

void Uplink::Run() {
  while (true) {
    const int64_t start_ns = clock_->NowNanos();
    absl::Status status = RunSession();
    bool acked = false;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      acked = session_acked_;
      ++stats_.stream_errors;
    }
    // A stream that made progress, or stayed up for a while, was healthy:
    // start the backoff over, and always say that it broke.
    const bool healthy =
        acked || clock_->NowNanos() - start_ns >=
                     absl::ToInt64Nanoseconds(options_.max_backoff);
    if (healthy) backoff_.Reset();
    // The server's retry hint (over its rate limit) is a floor.
    const absl::Duration delay =
        std::max(backoff_.Next(), retry_hint_.value_or(absl::ZeroDuration()));
    LogRetry(status, delay, healthy);
    sleeper_->Sleep(delay);
  }
}

absl::Status Uplink::RunSession() {
  grpc::ClientContext context;
  context.set_wait_for_ready(false);  // fail fast: our backoff decides
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return absl::CancelledError("stopping");
    context_ = &context;
    broken_ = false;
    session_active_ = true;
    session_acked_ = false;
    session_error_ = absl::OkStatus();
    in_flight_.clear();
    ++stats_.streams;
  }
  std::unique_ptr<Stream> stream(
      StreamFactory::Create(channel_.get(), stream_method_, &context));
  std::thread reader([&] { ReadAcks(stream.get(), &context); });
  absl::Status write_status = WriteBatches(stream.get());
  {
    absl::MutexLock lock(&mu_);
    // Stopping: unblock the reader. Otherwise the stream is already dead
    // (the reader finished or a write failed) and ends by itself.
    if (stopping_) context.TryCancel();
  }
  reader.join();
  absl::Status finish = FromGrpc(stream->Finish());
  retry_hint_ = GetRetryHint(context);
  if (std::optional<uint64_t> refused = EndSession(finish)) {
    DeadLetterRefused(*refused, finish);
  }
  absl::MutexLock lock(&mu_);
  if (!session_error_.ok()) return session_error_;
  if (!finish.ok()) return finish;
  if (!write_status.ok()) return write_status;
  return absl::UnavailableError("the server closed the stream");
}

std::optional<uint64_t> Uplink::EndSession(const absl::Status& finish) {
  absl::MutexLock lock(&mu_);
  if (retry_hint_) ++stats_.retry_hints;
  context_ = nullptr;
  session_active_ = false;
  std::optional<uint64_t> refused;
  // The server judges batches in order: the one it refused is the oldest
  // unacknowledged. Our own protocol errors are not a verdict on a batch.
  if (absl::IsInvalidArgument(finish) && session_error_.ok() &&
      !in_flight_.empty()) {
    refused = in_flight_.front();
  }
  in_flight_.clear();
  return refused;
}

void Uplink::DeadLetterRefused(uint64_t sequence, const absl::Status& status) {
  absl::Status s = spool_->DeadLetter(
      sequence,
      absl::StrCat("refused by ", options_.server, ": ", status.ToString()));
  options_.log.Warning(absl::StrCat(
      "uplink: ", options_.server, " refused batch ", sequence, " as invalid (",
      status.ToString(), "); never resending it: ",
      s.ok() ? absl::StrCat("moved to ", spool_->dir(), "/dead-letter/")
             : absl::StrCat("deleted, it could not be moved: ", s.ToString())));
  absl::MutexLock lock(&mu_);
  ++stats_.refused_batches;
  ++stats_.dead_lettered;
  session_acked_ = true;  // progress: the next stream starts without delay
}

absl::Status Uplink::WriteBatches(Stream* stream) {
  uint64_t last_sent = 0;  // a new stream resends from the oldest batch
  while (true) {
    std::optional<uint64_t> next = WaitForNext(last_sent);
    if (!next) return absl::OkStatus();  // stopping, or the stream broke
    last_sent = *next;
    absl::StatusOr<grpc::ByteBuffer> batch = ReadForSending(*next);
    if (absl::IsNotFound(batch.status())) continue;
    if (!batch.ok()) return batch.status();  // I/O: retry after a backoff
    {
      absl::MutexLock lock(&mu_);
      in_flight_.push_back(*next);  // before Write: its ack may come fast
      stats_.max_in_flight_seen =
          std::max(stats_.max_in_flight_seen, in_flight_.size());
    }
    if (!stream->Write(*batch)) {
      return absl::UnavailableError("stream write failed");
    }
    absl::MutexLock lock(&mu_);
    ++stats_.sent_batches;
  }
}

std::optional<uint64_t> Uplink::WaitForNext(uint64_t last_sent) {
  while (true) {
    uint64_t generation = 0;
    {
      absl::MutexLock lock(&mu_);
      auto window_open = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || broken_ ||
               in_flight_.size() < options_.max_in_flight;
      };
      mu_.Await(absl::Condition(&window_open));
      if (stopping_ || broken_) return std::nullopt;
      generation = append_generation_;
    }
    // Read after taking the generation: an append in between wakes us.
    std::optional<uint64_t> next = spool_->NextPendingAfter(last_sent);
    if (next) return next;
    absl::MutexLock lock(&mu_);
    auto woken = [this, generation]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopping_ || broken_ || append_generation_ != generation;
    };
    mu_.Await(absl::Condition(&woken));
  }
}

absl::StatusOr<grpc::ByteBuffer> Uplink::ReadForSending(uint64_t sequence) {
  absl::StatusOr<std::string> batch = spool_->ReadWire(sequence);
  if (batch.ok()) {
    grpc::Slice slice(*batch);
    return grpc::ByteBuffer(&slice, 1);
  }
  if (!absl::IsDataLoss(batch.status())) return batch.status();
  absl::Status s = spool_->DeadLetter(
      sequence, absl::StrCat("corrupt: ", batch.status().ToString()));
  options_.log.Error(absl::StrCat(
      "spool: batch ", sequence, " is corrupt (", batch.status().message(),
      "); never sending it: ",
      s.ok() ? absl::StrCat("moved to ", spool_->dir(), "/dead-letter/")
             : absl::StrCat("deleted, it could not be moved: ", s.ToString())));
  absl::MutexLock lock(&mu_);
  ++stats_.corrupt_batches;
  ++stats_.dead_lettered;
  return absl::NotFoundError("dead-lettered");
}

void Uplink::ReadAcks(Stream* stream, grpc::ClientContext* context) {
  v1::Ack ack;
  bool failed = false;
  while (stream->Read(&ack)) {
    if (failed) continue;  // drain until the cancellation lands
    absl::Status s = HandleAck(ack);
    if (!s.ok()) {
      failed = true;
      absl::MutexLock lock(&mu_);
      session_error_ = s;
      context->TryCancel();
    }
  }
  absl::MutexLock lock(&mu_);
  broken_ = true;
}

absl::Status Uplink::HandleAck(const v1::Ack& ack) {
  {
    absl::MutexLock lock(&mu_);
    if (in_flight_.empty() || in_flight_.front() != ack.sequence()) {
      return absl::InternalError(absl::StrCat(
          "protocol: ack for sequence ", ack.sequence(), ", expected ",
          in_flight_.empty() ? std::string("none")
                             : absl::StrCat(in_flight_.front())));
    }
  }
  LogRejections(ack);
  absl::Status s = spool_->Ack(ack.sequence());
  if (!s.ok()) {  // stays spooled; the next stream resends, deduped
    options_.log.Error(absl::StrCat("spool: cannot delete acknowledged batch ",
                                    ack.sequence(), ": ", s.ToString()));
  }
  absl::MutexLock lock(&mu_);
  in_flight_.pop_front();
  session_acked_ = true;
  ++stats_.acked_batches;
  if (ack.duplicate()) ++stats_.duplicate_acks;
  stats_.server_rejected_events += ack.rejections_size();
  return absl::OkStatus();
}

void Uplink::FlushSuppressedLogs(bool all) {
  if (const int64_t n = rejection_log_.TakeSuppressed(all); n > 0) {
    options_.log.Warning(
        absl::StrCat("server rejected ", n, " more events (not logged)"));
  }
  if (const int64_t n = retry_log_.TakeSuppressed(all); n > 0) {
    options_.log.Warning(absl::StrCat("uplink: stream to ", options_.server,
                                      " ended ", n,
                                      " more times (not logged)"));
  }
}

void Uplink::LogRejections(const v1::Ack& ack) {
  for (const v1::Rejection& r : ack.rejections()) {
    int64_t suppressed = 0;
    if (!rejection_log_.Allow(&suppressed)) continue;
    options_.log.Warning(absl::StrCat(
        "server rejected event ", r.index(), " of batch ", ack.sequence(), ": ",
        r.reason(),
        suppressed > 0 ? absl::StrCat(" (", suppressed, " more suppressed)")
                       : ""));
  }
}

void Uplink::LogRetry(const absl::Status& status, absl::Duration delay,
                      bool always) {
  int64_t suppressed = 0;
  if (!retry_log_.Allow(&suppressed) && !always) return;
  options_.log.Warning(absl::StrCat(
      "uplink: stream to ", options_.server, " ended: ", status.ToString(),
      "; reconnecting in ", absl::FormatDuration(delay),
      suppressed > 0 ? absl::StrCat(" (", suppressed, " failures not logged)")
                     : ""));
}

void Uplink::Stats::Add(const Stats& o) {
  streams += o.streams;
  stream_errors += o.stream_errors;
  sent_batches += o.sent_batches;
  acked_batches += o.acked_batches;
  duplicate_acks += o.duplicate_acks;
  server_rejected_events += o.server_rejected_events;
  corrupt_batches += o.corrupt_batches;
  refused_batches += o.refused_batches;
  dead_lettered += o.dead_lettered;
  retry_hints += o.retry_hints;
  max_in_flight_seen = std::max(max_in_flight_seen, o.max_in_flight_seen);
}

Uplink::Stats Uplink::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

bool Uplink::AwaitStats(const std::function<bool(const Stats&)>& done,
                        absl::Duration timeout) const {
  return agent::AwaitStats(mu_, stats_, done, timeout);
}

}  // namespace goodput::agent
