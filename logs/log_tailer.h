// LogTailer: follows log files that match a glob and turns their lines into
// events through a LogProfile, for processes goodput-run does not start
// (Kubernetes container logs under /var/log/pods, a SLURM job's output
// file). Like Fluent Bit's tail input it follows files by identity (device
// and inode), reads a file renamed away by rotation to its end before
// dropping it (after `rotate_wait`), starts a truncated file (copytruncate)
// over, and keeps its read offsets, with each job's matcher state, in a
// state file that it rewrites atomically (write, fsync, rename) only after
// `deliver` said the events before those offsets are durable. A job's id
// comes from the file's path by a pattern. A line longer than max_line is
// matched on its first max_line bytes, so memory stays bounded on a line
// without a newline.
//
// Delivery: at least once. If `deliver` fails, nothing is committed and
// the next Poll starts again from the state file. If the process dies
// after `deliver` succeeded but before the state file was renamed, those
// lines are read again and their events sent twice; every event carries an
// attempt ("0" before the first start line), so SPEC rule 3 makes the
// repeats duplicates that change no report.
//
// Owns its file descriptors and matchers; borrows the profile and clock.
// Not thread-safe: one thread calls Init and Poll.
#ifndef GOODPUT_LOGS_LOG_TAILER_H_
#define GOODPUT_LOGS_LOG_TAILER_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "logs/cri_line.h"
#include "logs/log_matcher.h"
#include "logs/log_profile.h"
#include "proto/event.pb.h"
#include "re2/re2.h"
#include "util/clock.h"

namespace goodput::logs {

struct TailOptions {
  std::string glob;  // e.g. /var/log/pods/*/*/*.log
  // RE2 with a (?P<job_id>...) capture, searched in the path; empty: the
  // file name without its last extension.
  std::string job_id_pattern;
  std::string state_path;  // offsets and matcher states
  bool cri = false;        // lines are CRI container log lines
  size_t max_line = 64 * 1024;
  int64_t rotate_wait_ns = int64_t{5} * 1000 * 1000 * 1000;
};

struct TailStats {
  int64_t lines = 0;        // complete lines read
  int64_t events = 0;       // events delivered
  int64_t bad = 0;          // lines a rule took but could not use
  int64_t truncations = 0;  // files that shrank: read again from 0
  int64_t unnamed = 0;      // files whose path gave no job id (skipped)
};

class LogTailer {
 public:
  // Makes `events` durable (the agent's spool); OK only when they are.
  using Deliver = std::function<absl::Status(const std::vector<v1::Event>&)>;

  LogTailer(const LogProfile* profile, TailOptions options, Clock* clock,
            Deliver deliver);
  ~LogTailer();
  LogTailer(const LogTailer&) = delete;
  LogTailer& operator=(const LogTailer&) = delete;

  // Checks the job id pattern and loads the state file (missing: start
  // every file from its beginning). Errors name the option or the line.
  absl::Status Init();

  // One pass: new and rotated files, everything appended since, delivery,
  // then the state file. Stats are this pass's.
  absl::StatusOr<TailStats> Poll();

  // Bytes held for lines not complete yet, over all files (bounded by
  // max_line per file).
  size_t pending_bytes() const;

 private:
  struct Key {
    dev_t dev;
    ino_t ino;
    bool operator<(const Key& o) const {
      return std::make_pair(dev, ino) < std::make_pair(o.dev, o.ino);
    }
  };
  struct File {
    int fd = -1;
    std::string path, job_id;
    int64_t offset = 0;    // committed: just after the last complete line
    int64_t read_pos = 0;  // where the next read starts
    std::string partial;   // the line being read, at most max_line bytes
    CriJoiner cri;
    int64_t seq = 0;       // tracking order: older files first
    bool current = false;  // its path still leads to it
    int64_t last_current_ns = 0;
  };
  struct Job {
    std::unique_ptr<LogMatcher> matcher;
  };

  absl::Status LoadState();
  absl::Status ParseStateLine(const std::string& line);
  absl::Status SaveState();
  void Discover(TailStats* stats);
  void Track(const std::string& path, const Key& key, int fd, TailStats* stats);
  std::string JobIdOf(const std::string& path) const;
  Job& JobFor(const std::string& job_id);
  void ReadFile(File& file, std::vector<v1::Event>* out, TailStats* stats);
  void ReadChunk(File& file, absl::string_view chunk, int64_t base,
                 std::vector<v1::Event>* out, TailStats* stats);
  void Append(File& file, absl::string_view piece) const;
  void MatchLine(File& file, absl::string_view line,
                 std::vector<v1::Event>* out, TailStats* stats);
  void DropFinished();
  void Reset();

  const LogProfile* const profile_;
  const TailOptions options_;
  Clock* const clock_;
  const Deliver deliver_;
  std::unique_ptr<RE2> job_re_;
  std::map<Key, File> files_;
  std::map<std::string, Job> jobs_;
  // From the state file, for files not opened yet.
  std::map<Key, int64_t> saved_offsets_;
  std::map<std::string, MatcherState> saved_jobs_;
  bool reload_ = false;  // a delivery failed: start again from the state
  int64_t next_seq_ = 0;
};

}  // namespace goodput::logs

#endif  // GOODPUT_LOGS_LOG_TAILER_H_
