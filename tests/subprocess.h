#ifndef GOODPUT_TESTS_SUBPROCESS_H_
#define GOODPUT_TESTS_SUBPROCESS_H_

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace goodput::testing {

// A child process for end-to-end tests: argv[0] is a path; stdout and
// stderr go to `log_path` (appended). Killed with SIGKILL if still running
// when destroyed. Not thread-safe.
class Subprocess {
 public:
  Subprocess(std::vector<std::string> argv, std::string log_path);
  ~Subprocess();

  pid_t pid() const { return pid_; }
  // Sends `signal` (e.g. SIGKILL, SIGTERM).
  void Kill(int signal);
  // Waits for exit; returns the exit code, or 128 + signal if killed.
  int Wait();
  // Like Wait, but after `timeout_s` seconds kills the process and returns
  // -1 (a test then fails instead of hanging).
  int WaitFor(double timeout_s);
  bool running() const { return pid_ > 0; }

 private:
  pid_t pid_ = -1;
};

// Runs argv to completion with stdout captured into `*out` (stderr to
// `log_path`); returns the exit code.
int RunCapture(const std::vector<std::string>& argv,
               const std::string& log_path, std::string* out);

// Reads `log_path` until `pattern` (a regex with one integer group)
// matches (up to `timeout_s` seconds, polling the file) and returns the
// integer, or -1.
int WaitForLogInt(const std::string& log_path, const std::string& pattern,
                  double timeout_s);

// WaitForLogInt for goodputd's "goodputd: listening on port N".
int WaitForPort(const std::string& log_path, double timeout_s);

// A TCP port on 127.0.0.1 that was free a moment ago, from below the kernel's
// ephemeral range (32768-60999), so a server killed and started again on it
// cannot lose it to another test's outgoing connection. -1 if none is found.
int RestartablePort();

// Polls `done` every 20 ms until it returns true or `timeout_s` passes;
// returns its last value. For conditions in other processes.
bool Eventually(const std::function<bool()>& done, double timeout_s);

// The body of GET `path` on 127.0.0.1:`port` (whatever its status), or ""
// if there is no answer (util/testing/http_client.h's HttpGet).
std::string HttpGet(int port, const std::string& path);

// `path` exists and is a Unix socket (e.g. an agent is listening).
bool IsUnixSocket(const std::string& path);

// Connects to the Unix socket `path` and writes `data`; false on failure.
bool WriteUnixSocket(const std::string& path, const std::string& data);

}  // namespace goodput::testing

#endif  // GOODPUT_TESTS_SUBPROCESS_H_
