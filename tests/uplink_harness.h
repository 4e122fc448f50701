// An in-process agent for cross-module tests: a spool in a temporary
// directory and an Uplink (real gRPC) to a given goodputd, with a
// RecordingSleeper so reconnect delays are recorded, not slept. Owns all
// of it. Not thread-safe (one test thread drives it).
#ifndef GOODPUT_TESTS_UPLINK_HARNESS_H_
#define GOODPUT_TESTS_UPLINK_HARNESS_H_

#include <memory>
#include <string>
#include <vector>

#include "agent/spool.h"
#include "agent/testing/test_util.h"
#include "agent/uplink.h"
#include "proto/event.pb.h"
#include "util/clock.h"

namespace goodput::testing {

// `n` valid step events of job `job`, steps first..first+n-1, stamped
// `time_s` (Unix seconds) on host "h1".
std::vector<v1::Event> StepEvents(int n, const std::string& job, int first,
                                  int64_t time_s);

class UplinkHarness {
 public:
  UplinkHarness();
  ~UplinkHarness();

  // Spools one batch of `events`.
  void Spool(std::vector<v1::Event> events);
  // Starts the uplink with `options` (its seed is fixed).
  void Start(agent::Uplink::Options options);
  void Stop();

  agent::Uplink& uplink() { return *uplink_; }
  agent::testing::RecordingSleeper& sleeper() { return sleeper_; }
  size_t pending() { return spool_->Pending().size(); }

 private:
  agent::testing::TempDir dir_;
  RealClock clock_;
  agent::testing::RecordingSleeper sleeper_;
  std::unique_ptr<agent::Spool> spool_;
  std::unique_ptr<agent::Uplink> uplink_;
};

}  // namespace goodput::testing

#endif  // GOODPUT_TESTS_UPLINK_HARNESS_H_
