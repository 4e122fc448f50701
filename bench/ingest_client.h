// Load-generation pieces for the ingest benchmarks: pre-built batches, a
// client that streams them over Ingest.Stream and waits for every ack, a
// bare sink service that acks and discards, and a Query.Report timer. Not
// for production code.
#ifndef GOODPUT_BENCH_INGEST_CLIENT_H_
#define GOODPUT_BENCH_INGEST_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "proto/service.grpc.pb.h"

namespace goodput::bench {

// `events` cut into batches of `batch_events`, sequences first_sequence,
// first_sequence + 1, ... of agent `agent_id`.
std::vector<v1::Batch> MakeBatches(const std::vector<v1::Event>& events,
                                   size_t batch_events,
                                   const std::string& agent_id,
                                   uint64_t first_sequence = 1);

// `events` as `agents` per-host agents send them: each job's events go to
// one agent (jobs dealt out in the order they first appear), each agent's in
// their order, cut into batches of `batch_events` with sequences from 1 and
// agent ids `agent_prefix`-0, -1, ... One agent: MakeBatches with
// `agent_prefix` itself.
std::vector<std::vector<v1::Batch>> MakeAgentBatches(
    const std::vector<v1::Event>& events, size_t batch_events, int agents,
    const std::string& agent_prefix);

struct StreamResult {
  int64_t batches = 0;
  int64_t events_sent = 0;
  int64_t accepted = 0;               // summed over the acks
  int64_t rejected = 0;               // rejections in the acks
  int64_t duplicates = 0;             // acks with duplicate=true
  double seconds = 0;                 // first Write to last ack
  std::vector<double> ack_latency_s;  // per batch: Write to its ack
  double events_per_second() const { return accepted / seconds; }
};

// Streams `batches` in order over one Ingest.Stream on `channel`, with at
// most `in_flight` batches unacknowledged, and waits for every ack (which
// goodputd sends only once the batch is durable and applied). Fails if the
// stream breaks or an ack is out of order.
absl::StatusOr<StreamResult> StreamBatches(
    const std::shared_ptr<grpc::Channel>& channel,
    const std::vector<v1::Batch>& batches, size_t in_flight);

// StreamBatches of each agent's batches at once, each over its own stream
// on its own channel (NewChannel) to `target`, a thread each. The result
// sums them; `seconds` is from the first stream's start to the last ack of
// any (the fleet's rate); ack latencies are every stream's.
absl::StatusOr<StreamResult> StreamAgents(
    const std::string& target,
    const std::vector<std::vector<v1::Batch>>& per_agent, size_t in_flight);

// An Ingest service that acknowledges every batch as fully accepted and
// discards it: the gRPC cost alone (server-side parse included). Counts
// what it acknowledged. Thread-safe (gRPC may run streams at once).
class DiscardingIngest final : public v1::Ingest::Service {
 public:
  grpc::Status Stream(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::Ack, v1::Batch>* stream) override;
  int64_t batches() const { return batches_.load(); }
  int64_t events() const { return events_.load(); }

 private:
  std::atomic<int64_t> batches_{0};
  std::atomic<int64_t> events_{0};
};

// A channel to `target` (HOST:PORT) that does not share its connection with
// other channels of this process.
std::shared_ptr<grpc::Channel> NewChannel(const std::string& target);

// Calls Query.Report with the default as-of (the server's clock) and
// returns its latency in seconds; the response in `*out` if not null.
absl::StatusOr<double> TimeReport(v1::Query::Stub* stub,
                                  v1::ShardReport* out = nullptr);

}  // namespace goodput::bench

#endif  // GOODPUT_BENCH_INGEST_CLIENT_H_
