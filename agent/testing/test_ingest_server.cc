#include "agent/testing/test_ingest_server.h"

#include <chrono>
#include <deque>
#include <random>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"

namespace goodput::agent::testing {

class TestIngestServer::Service final : public v1::Ingest::Service {
 public:
  // A reader thread queues incoming batches (so held acks do not stop
  // reading); this thread judges and acks them in order.
  grpc::Status Stream(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::Ack, v1::Batch>* stream) override {
    StreamState state;
    {
      absl::MutexLock lock(&mu_);
      ++stats_.streams;
    }
    std::thread reader([&] { ReadBatches(stream, &state); });
    grpc::Status status = AckBatches(context, stream, &state);
    bool reader_done = false;
    {
      absl::MutexLock lock(&mu_);
      reader_done = state.done;
    }
    // Unblocks the reader if it still waits (a cancelled call's status is
    // CANCELLED, so not when the reader ended it with a refusal).
    if (!reader_done) context->TryCancel();
    reader.join();
    return status;
  }

  void Shutdown(bool down) {
    absl::MutexLock lock(&mu_);
    shutting_down_ = down;
  }
  void DropAfter(int64_t n) {
    absl::MutexLock lock(&mu_);
    drop_countdown_ = n;
  }
  void Hold(bool hold) {
    absl::MutexLock lock(&mu_);
    hold_ = hold;
  }
  void ForceDuplicate(bool force) {
    absl::MutexLock lock(&mu_);
    force_duplicate_ = force;
  }
  void Reject(const std::string& job_id) {
    absl::MutexLock lock(&mu_);
    reject_job_ = job_id;
  }
  void MaxBatchBytes(size_t bytes) {
    absl::MutexLock lock(&mu_);
    max_batch_bytes_ = bytes;
  }
  Stats stats() const {
    absl::MutexLock lock(&mu_);
    return stats_;
  }
  bool Await(const std::function<bool(const Stats&)>& done,
             absl::Duration timeout) const {
    struct Arg {
      const std::function<bool(const Stats&)>* done;
      const Stats* stats;
    } arg{&done, &stats_};
    absl::MutexLock lock(&mu_);
    return mu_.AwaitWithTimeout(
        absl::Condition(
            +[](Arg* a) { return (*a->done)(*a->stats); }, &arg),
        timeout);
  }

 private:
  struct StreamState {
    std::deque<v1::Batch> queue;  // guarded by mu_
    bool done = false;            // the client's side ended, or refused
    grpc::Status refused;         // ends the stream once the queue is acked
  };

  void ReadBatches(grpc::ServerReaderWriter<v1::Ack, v1::Batch>* stream,
                   StreamState* state) {
    v1::Batch batch;
    while (stream->Read(&batch)) {
      absl::MutexLock lock(&mu_);
      ++stats_.received_batches;
      state->refused = AdmitLocked(batch);
      if (!state->refused.ok()) break;  // stop reading, like goodputd
      state->queue.push_back(batch);
    }
    absl::MutexLock lock(&mu_);
    state->done = true;
  }

  grpc::Status AckBatches(grpc::ServerContext* context,
                          grpc::ServerReaderWriter<v1::Ack, v1::Batch>* stream,
                          StreamState* state) {
    while (true) {
      v1::Batch batch;
      if (!NextBatch(context, state, &batch)) {
        absl::MutexLock lock(&mu_);
        return state->refused;
      }
      bool drop = false;
      v1::Ack ack = Judge(batch, &drop);
      if (drop) return grpc::Status(grpc::UNAVAILABLE, "test: stream dropped");
      if (!stream->Write(ack)) return grpc::Status::OK;
    }
  }

  // The next batch to judge, waiting while acks are held; false when the
  // stream is over (client done, cancelled, or server shutting down).
  bool NextBatch(grpc::ServerContext* context, StreamState* state,
                 v1::Batch* batch) {
    absl::MutexLock lock(&mu_);
    auto ready = [this, state]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return shutting_down_ || (!state->queue.empty() && !hold_) ||
             (state->queue.empty() && state->done);
    };
    // Waits in 10 ms steps to notice a cancelled call.
    while (!mu_.AwaitWithTimeout(absl::Condition(&ready),
                                 absl::Milliseconds(10))) {
      if (context->IsCancelled()) return false;
    }
    if (shutting_down_ || state->queue.empty()) return false;
    *batch = std::move(state->queue.front());
    state->queue.pop_front();
    return true;
  }

  // goodputd's --max_batch_bytes check (server/ingest_limits.cc).
  grpc::Status AdmitLocked(const v1::Batch& batch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const size_t bytes = batch.ByteSizeLong();
    if (max_batch_bytes_ == 0 || bytes <= max_batch_bytes_) {
      return grpc::Status::OK;
    }
    ++stats_.refused_batches;
    return grpc::Status(
        grpc::INVALID_ARGUMENT,
        absl::StrCat("batch: ", bytes,
                     " bytes exceed --max_batch_bytes=", max_batch_bytes_));
  }

  v1::Ack Judge(const v1::Batch& batch, bool* drop) {
    absl::MutexLock lock(&mu_);
    v1::Ack ack;
    ack.set_sequence(batch.sequence());
    uint64_t& high = stats_.high_water[batch.agent_id()];
    if (force_duplicate_ || batch.sequence() <= high) {
      ack.set_duplicate(true);
      ++stats_.duplicate_acks;
      return ack;
    }
    high = batch.sequence();
    ++stats_.stored_batches;
    stats_.stored_sequences.push_back(batch.sequence());
    for (int i = 0; i < batch.events_size(); ++i) {
      const v1::Event& e = batch.events(i);
      if (!reject_job_.empty() && e.job_id() == reject_job_) {
        v1::Rejection* r = ack.add_rejections();
        r->set_index(static_cast<uint32_t>(i));
        r->set_reason(absl::StrCat("job_id: test rejects ", e.job_id()));
        continue;
      }
      stats_.events.push_back(e);
      ack.set_accepted(ack.accepted() + 1);
    }
    if (drop_countdown_ > 0 && --drop_countdown_ == 0) {
      *drop = true;
      ++stats_.dropped_streams;
    }
    return ack;
  }

  mutable absl::Mutex mu_;
  Stats stats_ ABSL_GUARDED_BY(mu_);
  bool hold_ ABSL_GUARDED_BY(mu_) = false;
  bool force_duplicate_ ABSL_GUARDED_BY(mu_) = false;
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  int64_t drop_countdown_ ABSL_GUARDED_BY(mu_) = 0;
  std::string reject_job_ ABSL_GUARDED_BY(mu_);
  size_t max_batch_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

TestIngestServer::TestIngestServer() : service_(std::make_unique<Service>()) {}

TestIngestServer::~TestIngestServer() { Stop(); }

// Tests stop this server and start it again on the same port. A port from
// the kernel's ephemeral range (32768-60999 here) can be taken in between by
// any outgoing connection of a test running beside it, so a fresh server picks
// one below that range, where only other listeners go.
absl::Status TestIngestServer::Start(int port) {
  if (port == 0) port = port_;
  service_->Shutdown(false);
  if (port != 0) return Listen(port);
  std::mt19937 gen{std::random_device{}()};
  std::uniform_int_distribution<int> below_ephemeral(20000, 31999);
  absl::Status status;
  for (int attempt = 0; attempt < 50; ++attempt) {
    status = Listen(below_ephemeral(gen));
    if (status.ok()) return status;
  }
  return status;
}

absl::Status TestIngestServer::Listen(int port) {
  grpc::ServerBuilder builder;
  int bound = 0;
  builder.AddListeningPort(absl::StrCat("127.0.0.1:", port),
                           grpc::InsecureServerCredentials(), &bound);
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || bound == 0) {
    server_.reset();
    return absl::UnavailableError(absl::StrCat("cannot listen on port ", port));
  }
  port_ = bound;
  return absl::OkStatus();
}

void TestIngestServer::Stop() {
  if (server_ == nullptr) return;
  service_->Shutdown(true);
  server_->Shutdown(std::chrono::system_clock::now());
  server_->Wait();
  server_.reset();
}

std::string TestIngestServer::address() const {
  return absl::StrCat("127.0.0.1:", port_);
}

void TestIngestServer::DropStreamAfter(int64_t n) { service_->DropAfter(n); }
void TestIngestServer::HoldAcks(bool hold) { service_->Hold(hold); }
void TestIngestServer::ForceDuplicate(bool force) {
  service_->ForceDuplicate(force);
}
void TestIngestServer::RejectJob(const std::string& job_id) {
  service_->Reject(job_id);
}
void TestIngestServer::SetMaxBatchBytes(size_t bytes) {
  service_->MaxBatchBytes(bytes);
}
TestIngestServer::Stats TestIngestServer::stats() const {
  return service_->stats();
}
bool TestIngestServer::Await(const std::function<bool(const Stats&)>& done,
                             absl::Duration timeout) const {
  return service_->Await(done, timeout);
}

}  // namespace goodput::agent::testing
