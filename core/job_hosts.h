#ifndef GOODPUT_CORE_JOB_HOSTS_H_
#define GOODPUT_CORE_JOB_HOSTS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace goodput::core {

// The hosts a job runs on, as its events' `host` says (issue 18 part 4:
// goodput_job_host_info, the join key with per-host GPU telemetry such as
// DCGM's): each host with the newest event time it reported for the job.
// The current hosts are those that reported within `recent_ns` of the
// job's newest event, so hosts of an earlier attempt drop out once the
// job runs elsewhere. At most `max_hosts` are kept (the stalest go first).
// A value type owned by its job; not thread-safe.
class JobHosts {
 public:
  JobHosts(int64_t recent_ns, size_t max_hosts)
      : recent_ns_(recent_ns), max_hosts_(max_hosts) {}

  // Records that `host` (ignored if empty) reported an event at `time_ns`.
  void Add(const std::string& host, int64_t time_ns);

  // The current hosts, sorted by name.
  std::vector<std::string> Current() const;

 private:
  void DropStalest();

  int64_t recent_ns_;
  size_t max_hosts_;
  int64_t newest_ns_ = 0;
  std::map<std::string, int64_t> last_ns_;  // host -> newest event time
};

}  // namespace goodput::core

#endif  // GOODPUT_CORE_JOB_HOSTS_H_
