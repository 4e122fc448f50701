// Helpers for the agent's tests: temporary directories, a Unix-socket
// client (and the HTTP one of util/testing), JSON lines, waiting on a condition
// with a deadline, and a Sleeper that records backoff delays instead of
// sleeping through them.
#ifndef GOODPUT_AGENT_TESTING_TEST_UTIL_H_
#define GOODPUT_AGENT_TESTING_TEST_UTIL_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/sleeper.h"
#include "util/testing/http_client.h"

namespace goodput::agent::testing {

// A fresh directory under $TEST_TMPDIR or /tmp, removed with its contents
// when destroyed. Short paths: Unix socket paths must fit 107 bytes.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string File(absl::string_view name) const;

 private:
  std::string path_;
};

// A connected SOCK_STREAM client of the Unix socket at `path`.
absl::StatusOr<int> ConnectUnix(const std::string& path);
// Writes all of `data`; false on error.
bool SendAll(int fd, absl::string_view data);

// The HTTP test client, shared with the server's tests.
using ::goodput::testing::HttpGet;
using ::goodput::testing::HttpRequest;
using ::goodput::testing::HttpResult;

// A valid SPEC section 2 step event line (with its newline), stamped
// 2024-06-01T00:00:00Z: in the past for any sane clock.
std::string StepLine(absl::string_view job_id, int step);

// Polls `done` every millisecond until it holds; false at the deadline.
bool WaitFor(const std::function<bool()>& done,
             absl::Duration timeout = absl::Seconds(20));

// Records every requested delay and returns after at most 2 ms of real
// time (so a reconnect loop cannot spin a core), or at once after
// Interrupt().
class RecordingSleeper : public Sleeper {
 public:
  void Sleep(absl::Duration d) override;
  void Interrupt() override;
  std::vector<absl::Duration> delays() const;

 private:
  mutable absl::Mutex mu_;
  std::vector<absl::Duration> delays_ ABSL_GUARDED_BY(mu_);
  bool interrupted_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace goodput::agent::testing

#endif  // GOODPUT_AGENT_TESTING_TEST_UTIL_H_
