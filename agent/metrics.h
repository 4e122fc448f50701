// AgentMetrics: the agent's Prometheus registry and every metric it exports
// (listed in agent/README.md). Owns the registry; the members point into it
// and live as long as this object. prometheus-cpp counters and gauges are
// thread-safe, so components update them from any thread.
#ifndef GOODPUT_AGENT_METRICS_H_
#define GOODPUT_AGENT_METRICS_H_

#include <memory>
#include <string>

#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace goodput::agent {

class AgentMetrics {
 public:
  AgentMetrics();
  AgentMetrics(const AgentMetrics&) = delete;
  AgentMetrics& operator=(const AgentMetrics&) = delete;

  // The registry in Prometheus text exposition format 0.0.4.
  std::string Serialize() const;
  // Sum of rejected_lines over its reasons.
  double RejectedLines() const;

  // Intake (Unix socket).
  prometheus::Counter* accepted_lines;
  prometheus::Counter* rejected_invalid;   // reason="invalid"
  prometheus::Counter* rejected_too_long;  // reason="too_long"
  prometheus::Counter* rejected_partial;   // reason="partial"
  prometheus::Counter* connections;
  prometheus::Gauge* open_connections;
  prometheus::Counter* socket_closed_idle;     // reason="idle"
  prometheus::Counter* socket_closed_evicted;  // reason="evicted"
  prometheus::Counter* socket_full;
  // Events with a client id the agent had taken before (ack-mode resends,
  // client spool files): not spooled again.
  prometheus::Counter* duplicate_events;
  // Batcher and spool.
  prometheus::Counter* spooled_batches;
  prometheus::Counter* spooled_events;
  prometheus::Counter* dropped_events;
  prometheus::Gauge* spool_bytes;
  prometheus::Gauge* spool_pending_batches;
  prometheus::Gauge* oldest_unsent_age;
  prometheus::Gauge* spool_full;
  prometheus::Gauge* spool_failing;
  // Uplink (gRPC to goodputd).
  prometheus::Gauge* connected;
  prometheus::Counter* sent_batches;
  prometheus::Counter* acked_batches;
  prometheus::Counter* duplicate_acks;
  prometheus::Counter* server_rejected_events;
  prometheus::Counter* stream_errors;
  prometheus::Counter* corrupt_batches;
  // Batches moved to the spool's dead-letter/ directory, by reason.
  prometheus::Counter* dead_letter_corrupt;  // reason="corrupt"
  prometheus::Counter* dead_letter_refused;  // reason="refused" (by server)
  // Spool writes (Append) that failed, by reason.
  prometheus::Counter* spool_errors_no_space;  // reason="no_space"
  prometheus::Counter* spool_errors_io;        // reason="io"
  // Heartbeat.
  prometheus::Counter* heartbeats;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
};

}  // namespace goodput::agent

#endif  // GOODPUT_AGENT_METRICS_H_
