#include "logs/log_tailer.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace goodput::logs {
namespace {

constexpr size_t kReadChunk = 64 * 1024;

std::vector<std::string> Glob(const std::string& pattern) {
  glob_t g;
  std::vector<std::string> paths;
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) paths.emplace_back(g.gl_pathv[i]);
  }
  globfree(&g);
  return paths;
}

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::InternalError(
      absl::StrCat(what, " ", path, ": ", strerror(errno)));
}

// Writes `text` to `path` through a temporary file, fsync and rename.
absl::Status WriteAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot write", tmp);
  bool ok = write(fd, text.data(), text.size()) ==
                static_cast<ssize_t>(text.size()) &&
            fsync(fd) == 0;
  ok = close(fd) == 0 && ok;
  if (!ok) return Errno("cannot write", tmp);
  if (rename(tmp.c_str(), path.c_str()) != 0)
    return Errno("cannot rename", tmp);
  std::string dir = path.substr(0, path.find_last_of('/') + 1);
  int dfd = open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return absl::OkStatus();
}

}  // namespace

LogTailer::LogTailer(const LogProfile* profile, TailOptions options,
                     Clock* clock, Deliver deliver)
    : profile_(profile),
      options_(std::move(options)),
      clock_(clock),
      deliver_(std::move(deliver)) {}

LogTailer::~LogTailer() { Reset(); }

void LogTailer::Reset() {
  for (auto& [key, file] : files_) close(file.fd);
  files_.clear();
  jobs_.clear();
}

absl::Status LogTailer::Init() {
  if (!options_.job_id_pattern.empty()) {
    job_re_ = std::make_unique<RE2>(options_.job_id_pattern, RE2::Quiet);
    if (!job_re_->ok() ||
        job_re_->NamedCapturingGroups().count("job_id") == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--tail_job_id: '", options_.job_id_pattern,
          "' must be an RE2 pattern with a (?P<job_id>...) capture",
          job_re_->ok() ? "" : absl::StrCat(": ", job_re_->error())));
    }
  }
  return LoadState();
}

absl::Status LogTailer::LoadState() {
  saved_offsets_.clear();
  saved_jobs_.clear();
  std::ifstream in(options_.state_path);
  if (!in) return absl::OkStatus();  // first run
  std::string line;
  while (std::getline(in, line)) {
    absl::Status s = ParseStateLine(line);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// "file DEV INO OFFSET PATH" or "job ATTEMPTS LAST_STEP ENDED LAST_TIME ID".
absl::Status LogTailer::ParseStateLine(const std::string& line) {
  std::vector<std::string> f = absl::StrSplit(line, absl::MaxSplits(' ', 5));
  int64_t a = 0, b = 0, c = 0, d = 0;
  bool ok = f.size() >= 5 && absl::SimpleAtoi(f[1], &a) &&
            absl::SimpleAtoi(f[2], &b) && absl::SimpleAtoi(f[3], &c);
  if (ok && f[0] == "file") {
    saved_offsets_[Key{static_cast<dev_t>(a), static_cast<ino_t>(b)}] = c;
    return absl::OkStatus();
  }
  if (ok && f[0] == "job" && f.size() == 6 && absl::SimpleAtoi(f[4], &d)) {
    saved_jobs_[f[5]] = MatcherState{static_cast<int>(a), b, c != 0, d};
    return absl::OkStatus();
  }
  return absl::DataLossError(absl::StrCat("tail state ", options_.state_path,
                                          ": bad line '", line, "'"));
}

absl::Status LogTailer::SaveState() {
  std::ostringstream text;
  for (const auto& [key, offset] : saved_offsets_) {
    text << "file " << key.dev << " " << key.ino << " " << offset << " -\n";
  }
  for (const auto& [key, f] : files_) {
    text << "file " << key.dev << " " << key.ino << " " << f.offset << " "
         << f.path << "\n";
  }
  for (const auto& [id, job] : jobs_) {
    MatcherState s = job.matcher->state();
    text << "job " << s.attempts << " " << s.last_step << " "
         << (s.ended ? 1 : 0) << " " << s.last_time_ns << " " << id << "\n";
  }
  return WriteAtomically(options_.state_path, text.str());
}

std::string LogTailer::JobIdOf(const std::string& path) const {
  if (job_re_ != nullptr) {
    const int group = job_re_->NamedCapturingGroups().at("job_id");
    std::vector<re2::StringPiece> g(group + 1);
    if (!job_re_->Match(path, 0, path.size(), RE2::UNANCHORED, g.data(),
                        group + 1)) {
      return "";
    }
    return std::string(g[group].data(), g[group].size());
  }
  std::string name = path.substr(path.find_last_of('/') + 1);
  return name.substr(0, name.find_last_of('.'));
}

LogTailer::Job& LogTailer::JobFor(const std::string& job_id) {
  Job& job = jobs_[job_id];
  if (job.matcher == nullptr) {
    job.matcher = std::make_unique<LogMatcher>(
        *profile_,
        MatcherOptions{.job_id = job_id, .attempt_before_start = "0"});
    auto saved = saved_jobs_.find(job_id);
    if (saved != saved_jobs_.end()) job.matcher->set_state(saved->second);
  }
  return job;
}

void LogTailer::Discover(TailStats* stats) {
  for (auto& [key, file] : files_) file.current = false;
  struct Found {
    std::string path;
    Key key;
    int fd;
    int64_t mtime_ns;
  };
  std::vector<Found> found;
  for (const std::string& path : Glob(options_.glob)) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    auto it = files_.find(Key{st.st_dev, st.st_ino});
    if (it != files_.end()) {  // known: one stat per poll, no open
      it->second.current = true;
      it->second.last_current_ns = clock_->NowNanos();
      continue;
    }
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    if (fstat(fd, &st) != 0) {  // the file opened, if it changed since
      close(fd);
      continue;
    }
    found.push_back(
        {path, Key{st.st_dev, st.st_ino}, fd,
         st.st_mtim.tv_sec * int64_t{1000000000} + st.st_mtim.tv_nsec});
  }
  // New files in the order they were last written: after a restart, a
  // rotated file before the file that replaced it.
  std::stable_sort(
      found.begin(), found.end(),
      [](const Found& a, const Found& b) { return a.mtime_ns < b.mtime_ns; });
  for (const Found& f : found) Track(f.path, f.key, f.fd, stats);
}

void LogTailer::Track(const std::string& path, const Key& key, int fd,
                      TailStats* stats) {
  if (files_.count(key) != 0) {  // replaced by a known file meanwhile
    close(fd);
    return;
  }
  std::string job_id = JobIdOf(path);
  if (job_id.empty()) {
    ++stats->unnamed;
    close(fd);
    return;
  }
  File& f = files_[key];
  f.fd = fd;
  f.path = path;
  f.job_id = job_id;
  auto saved = saved_offsets_.find(key);
  if (saved != saved_offsets_.end()) {
    f.offset = f.read_pos = saved->second;
    saved_offsets_.erase(saved);
  }
  f.seq = next_seq_++;
  f.current = true;
  f.last_current_ns = clock_->NowNanos();
}

void LogTailer::Append(File& file, absl::string_view piece) const {
  const size_t room =
      options_.max_line - std::min(options_.max_line, file.partial.size());
  file.partial.append(piece.data(), std::min(room, piece.size()));
}

void LogTailer::ReadFile(File& f, std::vector<v1::Event>* out,
                         TailStats* stats) {
  struct stat st;
  if (fstat(f.fd, &st) == 0 && st.st_size < f.read_pos) {
    f.offset = f.read_pos = 0;  // truncated (copytruncate): start over
    f.partial.clear();
    ++stats->truncations;
  }
  std::string buffer(kReadChunk, '\0');
  for (;;) {
    ssize_t n = pread(f.fd, buffer.data(), buffer.size(), f.read_pos);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    const int64_t base = f.read_pos;
    f.read_pos += n;
    ReadChunk(f, absl::string_view(buffer.data(), n), base, out, stats);
  }
}

void LogTailer::ReadChunk(File& f, absl::string_view chunk, int64_t base,
                          std::vector<v1::Event>* out, TailStats* stats) {
  size_t start = 0, newline;
  while ((newline = chunk.find('\n', start)) != absl::string_view::npos) {
    absl::string_view piece = chunk.substr(start, newline - start);
    if (f.partial.empty() && piece.size() <= options_.max_line) {
      MatchLine(f, piece, out, stats);
    } else {
      Append(f, piece);
      MatchLine(f, f.partial, out, stats);
      f.partial.clear();
    }
    f.offset = base + static_cast<int64_t>(newline) + 1;
    start = newline + 1;
  }
  Append(f, chunk.substr(start));
}

void LogTailer::MatchLine(File& f, absl::string_view line,
                          std::vector<v1::Event>* out, TailStats* stats) {
  ++stats->lines;
  int64_t read_ns = clock_->NowNanos();
  std::string joined;
  if (options_.cri) {
    absl::StatusOr<bool> done = f.cri.Add(line, &joined, &read_ns);
    if (!done.ok()) ++stats->bad;
    if (!done.ok() || !*done) return;
    line = joined;
  }
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!JobFor(f.job_id).matcher->Match(line, read_ns, out).ok()) ++stats->bad;
}

void LogTailer::DropFinished() {
  const int64_t now = clock_->NowNanos();
  for (auto it = files_.begin(); it != files_.end();) {
    const File& f = it->second;
    if (!f.current && now - f.last_current_ns >= options_.rotate_wait_ns) {
      close(f.fd);
      it = files_.erase(it);
    } else {
      ++it;
    }
  }
}

absl::StatusOr<TailStats> LogTailer::Poll() {
  if (reload_) {
    Reset();
    if (absl::Status s = LoadState(); !s.ok()) return s;
    reload_ = false;
  }
  TailStats stats;
  Discover(&stats);
  // In the order files were found: a job's rotated file before its
  // successor.
  std::vector<File*> order;
  for (auto& [key, f] : files_) order.push_back(&f);
  std::sort(order.begin(), order.end(),
            [](const File* a, const File* b) { return a->seq < b->seq; });
  std::vector<v1::Event> events;
  for (File* f : order) ReadFile(*f, &events, &stats);
  if (!events.empty()) {
    if (absl::Status s = deliver_(events); !s.ok()) {
      reload_ = true;  // read it all again from the committed state
      return s;
    }
  }
  stats.events = static_cast<int64_t>(events.size());
  DropFinished();
  if (absl::Status s = SaveState(); !s.ok()) {
    reload_ = true;
    return s;
  }
  saved_offsets_.clear();  // files not found by now are gone
  return stats;
}

size_t LogTailer::pending_bytes() const {
  size_t total = 0;
  for (const auto& [key, f] : files_) total += f.partial.size();
  return total;
}

}  // namespace goodput::logs
