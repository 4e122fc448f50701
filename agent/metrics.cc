#include "agent/metrics.h"

#include "prometheus/text_serializer.h"

namespace goodput::agent {
namespace {

prometheus::Counter* NewCounter(prometheus::Registry& registry,
                                const std::string& name,
                                const std::string& help,
                                const prometheus::Labels& labels = {}) {
  return &prometheus::BuildCounter()
              .Name(name)
              .Help(help)
              .Register(registry)
              .Add(labels);
}

prometheus::Gauge* NewGauge(prometheus::Registry& registry,
                            const std::string& name, const std::string& help) {
  return &prometheus::BuildGauge().Name(name).Help(help).Register(registry).Add(
      {});
}

}  // namespace

AgentMetrics::AgentMetrics()
    : registry_(std::make_shared<prometheus::Registry>()) {
  prometheus::Registry& r = *registry_;
  accepted_lines = NewCounter(r, "goodput_agent_accepted_lines_total",
                              "Valid events taken from the Unix socket.");
  auto& rejected = prometheus::BuildCounter()
                       .Name("goodput_agent_rejected_lines_total")
                       .Help(
                           "Socket lines refused, by reason: invalid "
                           "(decode or validation), too_long, partial "
                           "(no newline at disconnect).")
                       .Register(r);
  rejected_invalid = &rejected.Add({{"reason", "invalid"}});
  rejected_too_long = &rejected.Add({{"reason", "too_long"}});
  rejected_partial = &rejected.Add({{"reason", "partial"}});
  duplicate_events = NewCounter(
      r, "goodput_agent_duplicate_events_total",
      "Events whose client id was taken before (resends), not spooled again.");
  connections = NewCounter(r, "goodput_agent_connections_total",
                           "Client connections accepted on the socket.");
  open_connections = NewGauge(r, "goodput_agent_open_connections",
                              "Client connections open on the socket.");
  auto& closed = prometheus::BuildCounter()
                     .Name("goodput_agent_socket_closed_total")
                     .Help(
                         "Socket clients the agent closed, by reason: idle "
                         "(no bytes for --client_idle_timeout), evicted (the "
                         "longest idle, at --max_connections, for a new "
                         "client).")
                     .Register(r);
  socket_closed_idle = &closed.Add({{"reason", "idle"}});
  socket_closed_evicted = &closed.Add({{"reason", "evicted"}});
  socket_full =
      NewCounter(r, "goodput_agent_socket_full_total",
                 "Times new socket clients had to wait: --max_connections were "
                 "connected and none idle for 1s.");
  spooled_batches = NewCounter(r, "goodput_agent_spooled_batches_total",
                               "Batches written to the spool.");
  spooled_events = NewCounter(r, "goodput_agent_spooled_events_total",
                              "Events written to the spool.");
  dropped_events = NewCounter(
      r, "goodput_agent_dropped_events_total",
      "Accepted events dropped because the spool was full or failed.");
  spool_bytes = NewGauge(r, "goodput_agent_spool_bytes",
                         "Bytes of unacknowledged batches in the spool.");
  spool_pending_batches =
      NewGauge(r, "goodput_agent_spool_pending_batches",
               "Batches in the spool not yet acknowledged by the server.");
  oldest_unsent_age =
      NewGauge(r, "goodput_agent_oldest_unsent_event_age_seconds",
               "Age of the oldest event not yet acknowledged (0 when none).");
  spool_full = NewGauge(
      r, "goodput_agent_spool_full",
      "1 while the spool refuses new batches (over --max_spool_bytes, or the "
      "disk is full).");
  spool_failing = NewGauge(
      r, "goodput_agent_spool_failing",
      "1 while the spool's last write failed on an I/O error (write, fsync, "
      "rename, directory fsync); cleared by the next write that works.");
  connected = NewGauge(r, "goodput_agent_connected",
                       "1 while a stream to the server is up.");
  sent_batches = NewCounter(r, "goodput_agent_sent_batches_total",
                            "Batches written to the stream (resends too).");
  acked_batches = NewCounter(r, "goodput_agent_acked_batches_total",
                             "Batches acknowledged by the server.");
  duplicate_acks =
      NewCounter(r, "goodput_agent_duplicate_acks_total",
                 "Acknowledgements with duplicate=true (stored earlier).");
  server_rejected_events = NewCounter(
      r, "goodput_agent_server_rejected_events_total",
      "Events the server rejected (dead-lettered there, never retried).");
  stream_errors = NewCounter(r, "goodput_agent_stream_errors_total",
                             "Streams to the server that ended in an error.");
  corrupt_batches =
      NewCounter(r, "goodput_agent_corrupt_batches_total",
                 "Spool files that could not be read back and were discarded.");
  auto& dead_letters =
      prometheus::BuildCounter()
          .Name("goodput_agent_dead_letter_batches_total")
          .Help(
              "Batches moved to the spool's dead-letter/ directory and never "
              "sent again: corrupt (checksum or parse) or refused (the server "
              "answered INVALID_ARGUMENT, e.g. over --max_batch_bytes).")
          .Register(r);
  dead_letter_corrupt = &dead_letters.Add({{"reason", "corrupt"}});
  dead_letter_refused = &dead_letters.Add({{"reason", "refused"}});
  auto& spool_errors =
      prometheus::BuildCounter()
          .Name("goodput_agent_spool_write_errors_total")
          .Help(
              "Batches the spool failed to write (their events are dropped): "
              "no_space (ENOSPC/EDQUOT: the disk is full), io (failed write, "
              "fsync or rename, or the directory fsync of a group commit).")
          .Register(r);
  spool_errors_no_space = &spool_errors.Add({{"reason", "no_space"}});
  spool_errors_io = &spool_errors.Add({{"reason", "io"}});
  heartbeats = NewCounter(r, "goodput_agent_heartbeats_total",
                          "Heartbeat events emitted by the agent.");
}

std::string AgentMetrics::Serialize() const {
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

double AgentMetrics::RejectedLines() const {
  return rejected_invalid->Value() + rejected_too_long->Value() +
         rejected_partial->Value();
}

}  // namespace goodput::agent
