// TestIngestServer: a real in-process gRPC server on 127.0.0.1 serving
// goodput.v1.Ingest the way goodputd does (SPEC section 5): a batch at or
// below its agent's high-water sequence is acked duplicate=true and stores
// nothing, so the events it stores are what "exactly once" means. Tests
// can make it drop a stream, hold acks, force duplicate acks or reject
// events, and can stop and restart it on the same port; stored state
// survives restarts (as goodputd's RocksDB does). Owns its grpc::Server.
// Thread-safe.
#ifndef GOODPUT_AGENT_TESTING_TEST_INGEST_SERVER_H_
#define GOODPUT_AGENT_TESTING_TEST_INGEST_SERVER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "proto/service.grpc.pb.h"

namespace goodput::agent::testing {

class TestIngestServer {
 public:
  struct Stats {
    int64_t streams = 0;
    int64_t received_batches = 0;  // every Batch read, resends included
    int64_t stored_batches = 0;    // new (agent_id, sequence)
    int64_t duplicate_acks = 0;
    int64_t dropped_streams = 0;
    int64_t refused_batches = 0;    // over the max bytes: stream ended
    std::vector<v1::Event> events;  // stored, in arrival order
    std::vector<uint64_t> stored_sequences;
    std::map<std::string, uint64_t> high_water;  // per agent_id
  };

  TestIngestServer();
  ~TestIngestServer();

  // Starts serving on 127.0.0.1:`port` (0: the port of the last start, or a
  // free one below the ephemeral range on the first, so a restart can have it
  // back).
  absl::Status Start(int port = 0);
  // Shuts down at once, cancelling open streams.
  void Stop();
  int port() const { return port_; }
  std::string address() const;

  // The next `n`-th batch received is stored, then its stream fails
  // (UNAVAILABLE) without acking it: a lost ack.
  void DropStreamAfter(int64_t n);
  // While set, received batches are neither stored nor acked.
  void HoldAcks(bool hold);
  // While set, every batch is acked duplicate=true and nothing is stored.
  void ForceDuplicate(bool force);
  // Events with this job_id are rejected (index and reason in the ack).
  void RejectJob(const std::string& job_id);
  // Like goodputd's --max_batch_bytes: a batch whose serialized size is
  // over `bytes` is neither stored nor acked, and its stream ends with
  // INVALID_ARGUMENT "batch: N bytes exceed --max_batch_bytes=M". 0: off.
  void SetMaxBatchBytes(size_t bytes);

  Stats stats() const;
  // Waits until `done(stats())` holds; false on timeout.
  bool Await(const std::function<bool(const Stats&)>& done,
             absl::Duration timeout) const;

 private:
  class Service;

  absl::Status Listen(int port);

  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace goodput::agent::testing

#endif  // GOODPUT_AGENT_TESTING_TEST_INGEST_SERVER_H_
