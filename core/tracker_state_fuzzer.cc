// libFuzzer harness for the tracker state's decoder (JobTracker::FromState
// of a proto/tracker_state.proto record). Running jobs' state records are
// read back from the store at every restart, late-event rebuild and
// partition takeover; a torn or foreign record must be refused with a
// status, never crash. The input is a record's bytes. Checks, trapping with
// a message on the first violation:
//   - a record that does not parse or load is refused, without undefined
//     behaviour (the fuzz build runs ASan and UBSan), under a config with
//     and without a `since` window;
//   - a record that loads (no window) saves again to one that loads, and
//     that one saves to the same record (field for field; maps serialize in
//     no fixed order): what FromState accepts is a state SaveState can
//     write and read back.
// Seeds: core/testdata/corpus/tracker_state_fuzzer/: records of versions 6
// and 7 of a random fleet's jobs at several points, written by
// JobTrackerStateFieldsTest.DISABLED_WriteFuzzSeeds (job_tracker_state_test).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "core/config.h"
#include "core/job_tracker.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/util/field_comparator.h"
#include "google/protobuf/util/message_differencer.h"
#include "proto/tracker_state.pb.h"

namespace goodput::core {
namespace {

using Proto = internal::v1::JobTrackerState;

void Fail(const char* what) {
  std::fprintf(stderr, "tracker_state_fuzzer: %s\n", what);
  std::abort();
}

Proto Saved(const JobTracker& t) {
  Proto state;
  t.SaveState(&state);
  return state;
}

// Loads `bytes` under `config`; if it loads and `check`, the round trip.
void Check(const std::string& bytes, const Config& config, bool check) {
  Proto state;
  if (!state.ParseFromString(bytes)) return;
  absl::StatusOr<JobTracker> t = JobTracker::FromState(state, &config);
  if (!t.ok() || !check) return;
  const Proto once = Saved(*t);
  Proto again;
  if (!again.ParseFromString(once.SerializeAsString())) {
    Fail("a saved state does not parse");
  }
  absl::StatusOr<JobTracker> back = JobTracker::FromState(again, &config);
  if (!back.ok()) Fail("a loaded state, saved again, does not load");
  // A NaN the record brought stays a NaN: equal here (the loader does not
  // check doubles for being finite; RocksDB's checksums keep torn bytes
  // out of a record).
  google::protobuf::util::DefaultFieldComparator nan_equal;
  nan_equal.set_treat_nan_as_equal(true);
  google::protobuf::util::MessageDifferencer differ;
  differ.set_field_comparator(&nan_equal);
  std::string diff;
  differ.ReportDifferencesToString(&diff);
  if (!differ.Compare(once, Saved(*back))) {
    std::fprintf(stderr, "%s", diff.c_str());
    Fail("a state changes on a second round trip");
  }
}

}  // namespace
}  // namespace goodput::core

// Invalid UTF-8 in a string field fails the parse; protobuf's log line
// about each would drown the run's output.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using goodput::core::Config;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  static const Config plain;
  static const Config windowed = [] {
    Config c;
    c.since_ns = int64_t{1795341600} * goodput::core::kNanosPerSecond;
    return c;
  }();
  goodput::core::Check(bytes, plain, /*check=*/true);
  goodput::core::Check(bytes, windowed, /*check=*/false);
  return 0;
}
