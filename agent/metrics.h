// AgentSnapshot: everything goodput-agent exports (listed in
// agent/README.md), as plain values the agent gathers from its components'
// Stats at each scrape and /healthz; AgentFamilies turns one into metric
// families (core/metric_family.h) that util/prometheus_text.h renders, the
// same path as goodputd's. The components keep only Stats: no metrics
// library below this file. A plain value; AgentFamilies is a pure function.
#ifndef GOODPUT_AGENT_METRICS_H_
#define GOODPUT_AGENT_METRICS_H_

#include <cstdint>
#include <vector>

#include "agent/batcher.h"
#include "agent/intake.h"
#include "agent/spool.h"
#include "agent/uplink.h"
#include "core/metric_family.h"

namespace goodput::agent {

struct AgentSnapshot {
  Intake::Stats intake;
  Batcher::Stats batcher;  // every shard's, summed
  SpoolStats spool;        // every shard's, as Agent::SpoolTotals sums them
  Uplink::Stats uplink;    // every shard's, summed
  int64_t heartbeats = 0;
  bool connected = false;                // every shard's stream is up
  double oldest_unsent_age_seconds = 0;  // 0 when nothing waits
};

// The agent's families, every series present from the start (at 0).
std::vector<core::MetricFamilyData> AgentFamilies(const AgentSnapshot& s);

}  // namespace goodput::agent

#endif  // GOODPUT_AGENT_METRICS_H_
