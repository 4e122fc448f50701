#include "clients/cpp/recorder.h"

#include <cstdlib>
#include <utility>

#include "clients/cpp/event_json.h"
#include "util/uuid.h"

namespace goodput::client {
namespace {

std::string PickAttempt(const std::string& given) {
  if (!given.empty()) return given;
  const char* env = std::getenv("GOODPUT_ATTEMPT");
  if (env != nullptr && *env != '\0') return env;
  return RandomUuid().value_or("");
}

}  // namespace

Recorder::Recorder(RecorderOptions options, Clock* clock)
    : options_(std::move(options)),
      clock_(clock),
      attempt_(PickAttempt(options_.attempt)),
      window_(options_.max_unacked),
      spool_(options_.spool_dir.empty() ? DefaultClientSpoolDir()
                                        : options_.spool_dir) {
  if (options_.enabled) thread_ = std::thread([this] { Run(); });
}

Recorder::~Recorder() { Close(absl::Seconds(5)); }

bool Recorder::Started() {
  v1::Event e;
  e.mutable_started();
  return Send(std::move(e));
}

bool Recorder::Activity(v1::Activity::Kind kind, const std::string& name,
                        std::optional<int64_t> step) {
  v1::Event e;
  e.mutable_activity()->set_kind(kind);
  if (!name.empty()) e.mutable_activity()->set_name(name);
  if (step) e.mutable_activity()->set_step(*step);
  return Send(std::move(e));
}

bool Recorder::Step(int64_t step, double flops, double bytes,
                    double input_wait_seconds, double idle_seconds) {
  v1::Event e;
  v1::Step* s = e.mutable_step();
  s->set_step(step);
  s->set_flops(flops);
  s->set_bytes(bytes);
  s->set_input_wait_seconds(input_wait_seconds);
  s->set_idle_seconds(idle_seconds);
  return Send(std::move(e));
}

bool Recorder::Checkpoint(int64_t step) {
  v1::Event e;
  e.mutable_checkpoint()->set_step(step);
  return Send(std::move(e));
}

bool Recorder::Ended(v1::JobEnded::Outcome outcome) {
  v1::Event e;
  e.mutable_job_ended()->set_outcome(outcome);
  return Send(std::move(e));
}

bool Recorder::Send(v1::Event event) {
  if (!options_.enabled) return false;
  if (!event.has_time()) SetTimeMillis(clock_->NowNanos(), &event);
  if (event.job_id().empty()) event.set_job_id(options_.job_id);
  if (event.attempt().empty() && !event.has_job_submitted()) {
    event.set_attempt(attempt_);
  }
  absl::MutexLock lock(&mu_);
  if (stop_ || queue_.size() >= options_.queue_capacity) {
    ++counts_.dropped;
    return false;
  }
  queue_.push_back(std::move(event));
  return true;
}

bool Recorder::Flush(absl::Duration timeout) {
  if (!options_.enabled) return true;
  absl::MutexLock lock(&mu_);
  auto drained = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return queue_.empty() && !busy_ && unacked_ == 0;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&drained), timeout);
}

void Recorder::Close(absl::Duration timeout) {
  if (!thread_.joinable()) return;
  (void)Flush(timeout);
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

RecorderCounts Recorder::counts() const {
  absl::MutexLock lock(&mu_);
  return counts_;
}

void Recorder::Run() {
  // With events unacknowledged, the thread looks for acks this often.
  constexpr absl::Duration kAckPoll = absl::Milliseconds(20);
  for (;;) {
    v1::Event event;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return stop_ || !queue_.empty();
      };
      if (unacked_ == 0) {
        mu_.Await(absl::Condition(&ready));
      } else if (!mu_.AwaitWithTimeout(absl::Condition(&ready), kAckPoll)) {
        busy_ = true;
        mu_.Unlock();
        PollAcks(absl::ZeroDuration());
        mu_.Lock();
        busy_ = false;
        continue;
      }
      if (queue_.empty()) break;  // stop_ with nothing left
      event = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    Deliver(event);
    absl::MutexLock lock(&mu_);
    busy_ = false;
  }
  SpoolWindow();  // unacknowledged at the end: the agent drops repeats
  socket_.Close();
  (void)spool_.Close();
}

void Recorder::Deliver(const v1::Event& event) {
  if (options_.ack) return DeliverAcked(event);
  RecorderCounts delta;
  if (WriteSocket(EventToJsonLine(event))) {
    delta.sent = 1;
  } else if (spool_.Append(event).ok()) {
    delta.spooled = 1;
  } else {
    delta.dropped = 1;
  }
  absl::MutexLock lock(&mu_);
  counts_.sent += delta.sent;
  counts_.spooled += delta.spooled;
  counts_.dropped += delta.dropped;
}

void Recorder::DeliverAcked(const v1::Event& event) {
  const std::string id = RandomUuid().value_or("");
  if (id.empty() || (!socket_.connected() && !ConnectSocket())) {
    return Spool(id, event);
  }
  if (!acking_) {  // an agent without the ack mode: plain lines
    const bool sent = WriteSocket(EventToJsonLine(event)) && !acking_;
    if (!sent) return Spool(id, event);
    absl::MutexLock lock(&mu_);
    ++counts_.sent;
    return;
  }
  for (Unacked& old : window_.Add({id, event, SpoolRecordLine(id, event)})) {
    Spool(old.id, old.event);  // over max_unacked: the oldest go to disk
  }
  NoteWindow();
  WriteUnsent();
  PollAcks(absl::ZeroDuration());
}

void Recorder::WriteUnsent() {
  if (socket_.Write(window_.TakeUnsent()).ok()) return;
  Resend();
}

void Recorder::Resend() {
  for (int i = 0; i < 64 && socket_.connected(); ++i) {  // acks still queued
    absl::StatusOr<std::string> more = socket_.Read(absl::ZeroDuration());
    if (!more.ok() || more->empty()) break;
    window_.Feed(*more);
  }
  socket_.Close();
  window_.Reset();
  next_connect_ns_ = 0;  // try at once: the agent may be back already
  if (window_.size() > 0 && ConnectSocket() && acking_ &&
      socket_.Write(window_.TakeUnsent()).ok()) {
    return NoteWindow();
  }
  socket_.Close();
  SpoolWindow();
}

void Recorder::PollAcks(absl::Duration wait) {
  if (!socket_.connected() || !acking_) return;
  absl::StatusOr<std::string> got = socket_.Read(wait);
  if (!got.ok()) return Resend();
  const AckWindow::Progress p = window_.Feed(*got);
  absl::MutexLock lock(&mu_);
  counts_.sent += p.acked;
  counts_.rejected += p.rejected;
  unacked_ = window_.size();
}

void Recorder::Spool(const std::string& id, const v1::Event& event) {
  const bool spooled =
      (id.empty() ? spool_.Append(event) : spool_.Append(id, event)).ok();
  absl::MutexLock lock(&mu_);
  ++(spooled ? counts_.spooled : counts_.dropped);
}

void Recorder::SpoolWindow() {
  for (const Unacked& u : window_.TakeAll()) Spool(u.id, u.event);
  NoteWindow();
}

void Recorder::NoteWindow() {
  absl::MutexLock lock(&mu_);
  unacked_ = window_.size();
}

bool Recorder::WriteSocket(const std::string& line) {
  if (socket_.connected()) {
    absl::Status written = socket_.Write(line);
    if (written.ok()) return true;
    // Only if the agent closed the connection (idle, or to make room for a
    // new client: agent/README.md): that write took nothing, so one try on
    // a new connection cannot count the event twice. A stuck agent (send
    // timeout) is not tried again.
    if (!absl::IsAborted(written)) return false;
  }
  return ConnectSocket() && socket_.Write(line).ok();
}

bool Recorder::ConnectSocket() {
  const int64_t now = clock_->NowNanos();
  if (now < next_connect_ns_) return false;
  const std::string path = options_.socket_path.empty() ? DefaultAgentSocket()
                                                        : options_.socket_path;
  absl::StatusOr<bool> acks = false;
  absl::Status connected = socket_.Connect(path);
  if (connected.ok() && options_.ack) {
    acks = socket_.AskAck(options_.hello_timeout);
    if (acks.ok() && !*acks) {
      // No answer in time. A busy agent (all its --max_connections taken)
      // accepts this connection late, answers the hello then and holds it
      // in ack mode, rejecting every plain line (.ci/adversarial lost
      // events so): plain lines go on a new connection, without the hello.
      socket_.Close();
      connected = socket_.Connect(path);
    }
  }
  if (!connected.ok() || !acks.ok()) {
    socket_.Close();
    next_connect_ns_ =
        now + absl::ToInt64Nanoseconds(options_.reconnect_interval);
    return false;
  }
  acking_ = *acks;
  window_.Reset();
  (void)spool_.Close();  // the agent is back: hand it the spool file
  return true;
}

}  // namespace goodput::client
