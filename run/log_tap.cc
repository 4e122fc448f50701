#include "run/log_tap.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "logs/line_splitter.h"

namespace goodput::run {
namespace {

constexpr size_t kReadChunk = 64 * 1024;
constexpr int kMaxLoggedBad = 10;

// Writes all of `data` to `fd`; false once the reader is gone (EPIPE).
bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

absl::Status Pipe(int* read_end, int* write_end) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(
        absl::StrCat("goodput-run: cannot make a pipe: ", strerror(errno)));
  }
  *read_end = fds[0];
  *write_end = fds[1];
  return absl::OkStatus();
}

}  // namespace

LogTap::LogTap(const logs::LogProfile* profile, std::string job_id,
               Clock* clock, EventSink* sink, int out_fd, int err_fd,
               std::ostream* log)
    : profile_(profile),
      job_id_(std::move(job_id)),
      clock_(clock),
      sink_(sink),
      out_fd_(out_fd),
      err_fd_(err_fd),
      log_(log) {}

LogTap::~LogTap() {
  CloseChildEnds();
  AfterExit();
  CloseFd(&read_out_);
  CloseFd(&read_err_);
}

absl::StatusOr<ChildOutput> LogTap::BeforeStart(const std::string& attempt) {
  AfterExit();  // the previous attempt's readers are done
  absl::Status s = Pipe(&read_out_, &child_out_);
  if (s.ok()) s = Pipe(&read_err_, &child_err_);
  if (!s.ok()) return s;
  {
    absl::MutexLock lock(&mu_);
    matcher_ = std::make_unique<logs::LogMatcher>(
        *profile_,
        logs::MatcherOptions{
            .job_id = job_id_, .attempt = attempt, .lifecycle = false});
  }
  ChildOutput out{child_out_, child_err_, {}};
  if (getenv("PYTHONUNBUFFERED") == nullptr) {
    out.env.emplace_back("PYTHONUNBUFFERED", "1");
  }
  return out;
}

void LogTap::AfterStart() {
  CloseChildEnds();  // EOF reaches the readers when the child is gone
  if (read_out_ < 0 || read_err_ < 0) return;
  readers_.emplace_back(&LogTap::Pump, this, read_out_, out_fd_);
  readers_.emplace_back(&LogTap::Pump, this, read_err_, err_fd_);
  read_out_ = read_err_ = -1;  // the readers close them
}

void LogTap::AfterExit() {
  for (std::thread& t : readers_) t.join();
  readers_.clear();
}

int64_t LogTap::bad_lines() const {
  absl::MutexLock lock(&mu_);
  return bad_;
}

void LogTap::CloseChildEnds() {
  CloseFd(&child_out_);
  CloseFd(&child_err_);
}

void LogTap::Pump(int in_fd, int out_fd) {
  // A closed terminal gives EPIPE here instead of killing goodput-run.
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
  logs::LineSplitter splitter;
  const logs::LineSplitter::OnLine on_line = [this](absl::string_view line) {
    OnLine(line);
  };
  std::string buffer(kReadChunk, '\0');
  bool passing = true;
  for (;;) {
    ssize_t n = read(in_fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (passing) passing = WriteAll(out_fd, buffer.data(), n);
    splitter.Add(absl::string_view(buffer.data(), n), on_line);
  }
  splitter.Flush(on_line);
  close(in_fd);
}

void LogTap::OnLine(absl::string_view line) {
  std::vector<v1::Event> events;
  absl::MutexLock lock(&mu_);
  absl::Status s = matcher_->Match(line, clock_->NowNanos(), &events);
  if (!s.ok() && ++bad_ <= kMaxLoggedBad) {
    *log_ << "goodput-run: log line not used: " << s.message() << "\n";
  }
  for (const v1::Event& e : events) sink_->Send(e);
}

}  // namespace goodput::run
