#ifndef GOODPUT_CORE_TESTING_TIMELINE_H_
#define GOODPUT_CORE_TESTING_TIMELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/report.h"
#include "proto/event.pb.h"

namespace goodput::core::testing {

// Parses JSON Lines text (one event per non-blank line, protobuf's JSON
// mapping) into events; fails the current test on a bad line.
std::vector<v1::Event> ParseEvents(const std::string& jsonl);

// Expands compact timeline text into JSON Lines: each non-blank line is
// "HH:MM:SS[.fff] {BODY}" and becomes
// {"time":"2026-11-22THH:MM:SS[.fff]Z","job_id":"j",BODY...}; a BODY that
// has its own "job_id" keeps it, and heartbeats and exclusions with
// "scope":"FLEET" or "scope":"HOSTS" get none.
std::string Timeline(const std::string& text);

// ParseEvents(Timeline(timeline)) with every event's job_id set to `job`.
std::vector<v1::Event> JobEvents(const std::string& job,
                                 const std::string& timeline);

// Nanoseconds since the epoch of an RFC 3339 time; fails the test if bad.
int64_t T(const std::string& rfc3339);

// Seconds as nanoseconds, e.g. S(1.5).
int64_t S(double seconds);

// Sorts the events at or before `as_of` into apply order, applies them to a
// FleetTracker with `config` (all must apply without error) and returns the
// report as of `as_of` (RFC 3339).
FleetReport Replay(const std::vector<v1::Event>& events, const Config& config,
                   const std::string& as_of);
// The same with as-of in nanoseconds since the epoch.
FleetReport Replay(const std::vector<v1::Event>& events, const Config& config,
                   int64_t as_of_ns);

// The report of the one job `job_id` in `report`; fails the test if absent.
const JobReport& Job(const FleetReport& report, const std::string& job_id);

// Sum of a job's category nanoseconds.
int64_t SumNanos(const JobReport& job);

}  // namespace goodput::core::testing

#endif  // GOODPUT_CORE_TESTING_TIMELINE_H_
