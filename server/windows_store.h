#ifndef GOODPUT_SERVER_WINDOWS_STORE_H_
#define GOODPUT_SERVER_WINDOWS_STORE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/metrics_state.pb.h"
#include "storage/event_store.h"

namespace goodput::server {

// The metrics exporter's state (core::FleetMetrics::SaveState) in the
// store's meta records (storage/KEY_LAYOUT.md, "Metrics windows"): the
// record "windows" holds everything but the jobs and names the part
// records that hold them, the jobs spread over kParts parts by a hash of
// their id. Save writes only the parts whose jobs changed, each under a new
// name (a few parts per write, about kMaxWriteBytes), then the record (one
// small write that commits them all), then deletes the parts it no longer
// names: no single write holds every job, so a batch waits on a save for
// one such write at most, and a job that did not change is not written
// again. Does not own the store, which must outlive
// it. Not thread-safe.
class WindowsStore {
 public:
  // Part records go to the store in writes of about `max_write_bytes`.
  explicit WindowsStore(storage::EventStore* store,
                        size_t max_write_bytes = kMaxWriteBytes)
      : store_(store), max_write_bytes_(max_write_bytes) {}

  // The stored state with the jobs of its parts in `jobs` (nullopt: none
  // stored); an error names the record that failed. Deletes part records
  // that the stored record does not name (a save cut short).
  absl::StatusOr<std::optional<internal::v1::FleetMetricsState>> Load();
  // After a Load whose state was refused: its parts are deleted at the next
  // Save.
  void Refused();
  // Stores `state` (its jobs in `jobs`, by id); writes nothing if nothing
  // changed since the last Save or Load. A failed write leaves the stored
  // state as it was; the next Save writes again what it did not commit.
  absl::Status Save(internal::v1::FleetMetricsState state);

  static constexpr char kRecord[] = "windows";
  static constexpr char kPartPrefix[] = "windows/";
  static constexpr size_t kParts = 256;
  static constexpr size_t kMaxWriteBytes = 1 << 20;
  // The part of job `job_id` (stable across builds and restarts).
  static size_t PartOf(const std::string& job_id);

 private:
  struct Part {
    std::string name;   // empty: no jobs
    std::string bytes;  // as last written or read
  };
  // Adds the jobs of the part records `state` names, taken from `stored`
  // (name -> bytes, every part record), to its `jobs` and notes the parts.
  absl::Status ReadParts(std::map<std::string, std::string>* stored,
                         internal::v1::FleetMetricsState* state);
  // Deletes the part records in `stored` that `named` does not name; sets
  // next_serial_ past every name.
  void DeleteUnnamed(const std::vector<std::string>& named,
                     const std::map<std::string, std::string>& stored);
  // `state`'s jobs by part, serialized ("" for a part without jobs).
  static std::vector<std::string> SplitJobs(
      internal::v1::FleetMetricsState* state);
  // Writes the changed parts of `bytes` under new names into `names`.
  absl::Status WriteParts(const std::vector<std::string>& bytes,
                          std::vector<std::string>* names);
  // The new part records among the first `n` of `names` (written, or maybe
  // written, but not named by the record): deleted after the next commit.
  void Uncommitted(const std::vector<std::string>& names, size_t n);
  // After the record named `names`: notes them and deletes the old ones.
  void Commit(std::vector<std::string> names, std::vector<std::string> bytes);

  storage::EventStore* store_;
  const size_t max_write_bytes_;
  std::vector<Part> parts_ = std::vector<Part>(kParts);
  std::string record_;                // the record as last written or read
  std::vector<std::string> loaded_;   // the parts the loaded record named
  std::vector<std::string> unnamed_;  // part records to delete
  uint64_t next_serial_ = 0;          // of the next part record's name
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_WINDOWS_STORE_H_
