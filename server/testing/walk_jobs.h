#ifndef GOODPUT_SERVER_TESTING_WALK_JOBS_H_
#define GOODPUT_SERVER_TESTING_WALK_JOBS_H_

#include <string>
#include <vector>

#include "core/testing/timeline.h"
#include "proto/event.pb.h"

namespace goodput::server::testing {

// The jobs of the tests of walks that take a few jobs per hold of the
// ingest lock (ReportWalkTest's reports, MetricsScrapeTest's scrapes), on
// 2026-11-22. "e", 4 chips, trains from 10:00, completes steps 1 and 2
// (10:00:30, 10:01:30), checkpoints step 2 and ends at 10:02.
inline std::vector<v1::Event> EndedWalkJob() {
  return core::testing::JobEvents("e", R"(
10:00:00 {"job_submitted":{"chips":4,"workload":"TRAINING"}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:00:30 {"step":{"step":1}}
10:01:30 {"step":{"step":2}}
10:01:30 {"checkpoint":{"step":2}}
10:02:00 {"job_ended":{"outcome":"SUCCEEDED"}}
)");
}

// `job`, 8 chips, trains from 10:00 and completes steps 1 and 2 (10:05,
// 10:05:30), still running.
inline std::vector<v1::Event> RunningWalkJob(const std::string& job) {
  return core::testing::JobEvents(job, R"(
10:00:00 {"job_submitted":{"chips":8,"workload":"TRAINING"}}
10:00:00 {"started":{}}
10:00:00 {"activity":{"kind":"TRAINING"}}
10:05:00 {"step":{"step":1}}
10:05:30 {"step":{"step":2}}
)");
}

}  // namespace goodput::server::testing

#endif  // GOODPUT_SERVER_TESTING_WALK_JOBS_H_
