#include "agent/metrics.h"

#include <string>
#include <utility>

namespace goodput::agent {
namespace {

using core::MetricFamilyData;
using core::MetricKind;

MetricFamilyData One(std::string name, std::string help, MetricKind kind,
                     double value) {
  MetricFamilyData f = core::NewFamily(std::move(name), std::move(help), kind);
  core::AddSample(&f, {}, value);
  return f;
}

MetricFamilyData Counter(std::string name, std::string help, int64_t value) {
  return One(std::move(name), std::move(help), MetricKind::kCounter,
             static_cast<double>(value));
}

MetricFamilyData Gauge(std::string name, std::string help, double value) {
  return One(std::move(name), std::move(help), MetricKind::kGauge, value);
}

// A counter with one series per reason.
MetricFamilyData ByReason(
    std::string name, std::string help,
    std::vector<std::pair<std::string, int64_t>> reasons) {
  MetricFamilyData f =
      core::NewFamily(std::move(name), std::move(help), MetricKind::kCounter);
  for (auto& [reason, value] : reasons) {
    core::AddSample(&f, {{"reason", std::move(reason)}},
                    static_cast<double>(value));
  }
  return f;
}

void AddIntake(const Intake::Stats& s, std::vector<MetricFamilyData>* out) {
  out->push_back(Counter("goodput_agent_accepted_lines_total",
                         "Valid events taken from the Unix socket.",
                         s.accepted_lines));
  out->push_back(ByReason(
      "goodput_agent_rejected_lines_total",
      "Socket lines refused, by reason: invalid (decode or validation), "
      "too_long, partial (no newline at disconnect).",
      {{"invalid", s.invalid_lines},
       {"too_long", s.too_long_lines},
       {"partial", s.partial_lines}}));
  out->push_back(Counter(
      "goodput_agent_duplicate_events_total",
      "Events whose client id was taken before (resends), not spooled again.",
      s.duplicate_lines));
  out->push_back(Counter("goodput_agent_connections_total",
                         "Client connections accepted on the socket.",
                         s.connections));
  out->push_back(Gauge("goodput_agent_open_connections",
                       "Client connections open on the socket.",
                       static_cast<double>(s.open_connections)));
  out->push_back(
      ByReason("goodput_agent_socket_closed_total",
               "Socket clients the agent closed, by reason: idle (no bytes for "
               "--client_idle_timeout), evicted (the longest idle, at "
               "--max_connections, for a new client).",
               {{"idle", s.idle_closed}, {"evicted", s.evicted}}));
  out->push_back(
      Counter("goodput_agent_socket_full_total",
              "Times new socket clients had to wait: --max_connections were "
              "connected and none idle for 1s.",
              s.full_waits));
}

void AddSpool(const AgentSnapshot& a, std::vector<MetricFamilyData>* out) {
  const Batcher::Stats& b = a.batcher;
  out->push_back(Counter("goodput_agent_spooled_batches_total",
                         "Batches written to the spool.", b.spooled_batches));
  out->push_back(Counter("goodput_agent_spooled_events_total",
                         "Events written to the spool.", b.spooled_events));
  out->push_back(
      Counter("goodput_agent_dropped_events_total",
              "Accepted events dropped because the spool was full or failed.",
              b.dropped_events));
  out->push_back(Gauge("goodput_agent_spool_bytes",
                       "Bytes of unacknowledged batches in the spool.",
                       static_cast<double>(a.spool.bytes)));
  out->push_back(
      Gauge("goodput_agent_spool_pending_batches",
            "Batches in the spool not yet acknowledged by the server.",
            static_cast<double>(a.spool.pending_batches)));
  out->push_back(
      Gauge("goodput_agent_oldest_unsent_event_age_seconds",
            "Age of the oldest event not yet acknowledged (0 when none).",
            a.oldest_unsent_age_seconds));
  out->push_back(Gauge(
      "goodput_agent_spool_full",
      "1 while the spool refuses new batches (over --max_spool_bytes, or the "
      "disk is full).",
      a.spool.full ? 1 : 0));
  out->push_back(Gauge(
      "goodput_agent_spool_failing",
      "1 while the spool's last write failed on an I/O error (write, fsync, "
      "rename, directory fsync); cleared by the next write that works.",
      a.spool.failing ? 1 : 0));
  out->push_back(ByReason(
      "goodput_agent_spool_write_errors_total",
      "Batches the spool failed to write (their events are dropped): "
      "no_space (ENOSPC/EDQUOT: the disk is full), io (failed write, fsync "
      "or rename, or the directory fsync of a group commit).",
      {{"no_space", b.write_errors_no_space}, {"io", b.write_errors_io}}));
}

void AddUplink(const AgentSnapshot& a, std::vector<MetricFamilyData>* out) {
  const Uplink::Stats& u = a.uplink;
  out->push_back(Gauge("goodput_agent_connected",
                       "1 while a stream to the server is up.",
                       a.connected ? 1 : 0));
  out->push_back(Counter("goodput_agent_sent_batches_total",
                         "Batches written to the stream (resends too).",
                         u.sent_batches));
  out->push_back(Counter("goodput_agent_acked_batches_total",
                         "Batches acknowledged by the server.",
                         u.acked_batches));
  out->push_back(
      Counter("goodput_agent_duplicate_acks_total",
              "Acknowledgements with duplicate=true (stored earlier).",
              u.duplicate_acks));
  out->push_back(Counter(
      "goodput_agent_server_rejected_events_total",
      "Events the server rejected (dead-lettered there, never retried).",
      u.server_rejected_events));
  out->push_back(Counter("goodput_agent_stream_errors_total",
                         "Streams to the server that ended in an error.",
                         u.stream_errors));
  out->push_back(
      Counter("goodput_agent_corrupt_batches_total",
              "Spool files that could not be read back and were discarded.",
              u.corrupt_batches));
  out->push_back(ByReason(
      "goodput_agent_dead_letter_batches_total",
      "Batches moved to the spool's dead-letter/ directory and never sent "
      "again: corrupt (checksum or parse) or refused (the server answered "
      "INVALID_ARGUMENT, e.g. over --max_batch_bytes).",
      {{"corrupt", u.corrupt_batches}, {"refused", u.refused_batches}}));
}

}  // namespace

std::vector<MetricFamilyData> AgentFamilies(const AgentSnapshot& s) {
  std::vector<MetricFamilyData> out;
  AddIntake(s.intake, &out);
  AddSpool(s, &out);
  AddUplink(s, &out);
  out.push_back(Counter("goodput_agent_heartbeats_total",
                        "Heartbeat events emitted by the agent.",
                        s.heartbeats));
  return out;
}

}  // namespace goodput::agent
