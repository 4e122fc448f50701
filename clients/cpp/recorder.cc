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
    return queue_.empty() && !busy_;
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
  for (;;) {
    v1::Event event;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return stop_ || !queue_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) break;  // stop_ with nothing left
      event = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    Deliver(event);
    absl::MutexLock lock(&mu_);
    busy_ = false;
  }
  socket_.Close();
  (void)spool_.Close();
}

void Recorder::Deliver(const v1::Event& event) {
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
  if (!socket_.Connect(path).ok()) {
    next_connect_ns_ =
        now + absl::ToInt64Nanoseconds(options_.reconnect_interval);
    return false;
  }
  (void)spool_.Close();  // the agent is back: hand it the spool file
  return true;
}

}  // namespace goodput::client
