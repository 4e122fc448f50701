#include "agent/intake.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/await_stats.h"
#include "nlohmann/json.hpp"

namespace goodput::agent {
namespace {

constexpr size_t kReadChunk = 64 * 1024;
// A connection's line buffer keeps at most this much capacity between lines.
constexpr size_t kKeptBufferCapacity = 64 * 1024;
// At Stop, reads per connection of what clients already wrote (1 MiB).
constexpr int kMaxDrainReads = 16;
// Replies a client does not read are dropped beyond this (acks are
// cumulative: the newest one says everything).
constexpr size_t kMaxPendingReply = 64 * 1024;

absl::Status Errno(absl::string_view what, absl::string_view path) {
  return absl::ErrnoToStatus(errno, absl::StrCat("socket ", path, ": ", what));
}

absl::StatusOr<sockaddr_un> UnixAddress(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("socket path must be 1 to ", sizeof(addr.sun_path) - 1,
                     " bytes, got \"", path, "\""));
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

// Removes a socket file nobody listens on; refuses a live socket and any
// file that is not a socket.
absl::Status RemoveStaleSocket(const std::string& path,
                               const sockaddr_un& addr) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    return errno == ENOENT ? absl::OkStatus() : Errno("stat", path);
  }
  if (!S_ISSOCK(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("socket ", path, ": exists and is not a socket"));
  }
  int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (probe < 0) return Errno("socket()", path);
  int rc =
      ::connect(probe, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  ::close(probe);
  if (rc == 0) {
    return absl::AlreadyExistsError(
        absl::StrCat("socket ", path, ": another process is listening on it"));
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Errno("remove stale socket", path);
  }
  return absl::OkStatus();
}

// A listening, non-blocking socket at `path`, mode 0666.
absl::StatusOr<int> Listen(const std::string& path, struct stat* st) {
  auto addr = UnixAddress(path);
  if (!addr.ok()) return addr.status();
  absl::Status s = RemoveStaleSocket(path, *addr);
  if (!s.ok()) return s;
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("socket()", path);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr))) {
    s = Errno("bind", path);
  } else if (::chmod(path.c_str(), 0666) != 0) {
    s = Errno("chmod 0666", path);
  } else if (::listen(fd, SOMAXCONN) != 0) {
    s = Errno("listen", path);
  } else if (::stat(path.c_str(), st) != 0) {
    s = Errno("stat", path);
  }
  if (!s.ok()) {
    ::close(fd);
    return s;
  }
  return fd;
}

// `text` safe for a log line: control and non-ASCII bytes as \xNN, at most
// 300 bytes of it.
std::string Printable(absl::string_view text) {
  constexpr size_t kMax = 300;
  std::string out;
  for (char ch : text.substr(0, kMax)) {
    const auto u = static_cast<unsigned char>(ch);
    if (u < 0x20 || u >= 0x7f) {
      absl::StrAppendFormat(&out, "\\x%02x", u);
    } else {
      out.push_back(ch);
    }
  }
  if (text.size() > kMax) out += "...";
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Intake>> Intake::Start(Options options,
                                                      EventSink* batcher,
                                                      Clock* clock) {
  struct stat st;
  auto fd = Listen(options.socket_path, &st);
  if (!fd.ok()) return fd.status();
  int wake[2];
  if (::pipe2(wake, O_NONBLOCK | O_CLOEXEC) != 0) {
    absl::Status s = Errno("pipe", options.socket_path);
    ::close(*fd);
    ::unlink(options.socket_path.c_str());
    return s;
  }
  std::unique_ptr<Intake> intake(new Intake(std::move(options), *fd, wake[0],
                                            wake[1], st.st_dev, st.st_ino,
                                            batcher, clock));
  intake->thread_ = std::thread([p = intake.get()] { p->Loop(); });
  return intake;
}

Intake::Intake(Options options, int listen_fd, int wake_read, int wake_write,
               dev_t dev, ino_t ino, EventSink* batcher, Clock* clock)
    : options_(std::move(options)),
      listen_fd_(listen_fd),
      wake_read_(wake_read),
      wake_write_(wake_write),
      socket_dev_(dev),
      socket_ino_(ino),
      batcher_(batcher),
      clock_(clock),
      reject_log_(clock, absl::Seconds(1), 10),
      read_buffer_(kReadChunk) {}

Intake::~Intake() { Stop(); }

void Intake::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  stopping_ = true;
  char byte = 0;
  while (::write(wake_write_, &byte, 1) < 0 && errno == EINTR) {
  }
  thread_.join();
  ::close(listen_fd_);
  ::close(wake_read_);
  ::close(wake_write_);
  struct stat st;
  if (::lstat(options_.socket_path.c_str(), &st) == 0 &&
      st.st_dev == socket_dev_ && st.st_ino == socket_ino_) {
    ::unlink(options_.socket_path.c_str());
  }
}

void Intake::Loop() {
  std::vector<pollfd> fds;
  while (!stopping_) {
    fds.clear();
    fds.push_back({wake_read_, POLLIN, 0});
    fds.push_back(
        {listen_fd_, static_cast<short>(MayAccept() ? POLLIN : 0), 0});
    for (const auto& c : connections_) {
      const short events = POLLIN | (c->out.empty() ? 0 : POLLOUT);
      fds.push_back({c->fd, events, 0});
    }
    if (::poll(fds.data(), fds.size(), PollTimeoutMs()) < 0) {
      if (errno == EINTR) continue;
      options_.log.Error(absl::StrCat("socket: poll: ", std::strerror(errno)));
      break;
    }
    if (fds[0].revents != 0) continue;  // Stop(): the loop condition ends it
    // Connections first: fds[2 + i] is connections_[i] until AcceptAll.
    std::vector<std::unique_ptr<Connection>> open;
    open.reserve(connections_.size());
    for (size_t i = 0; i < connections_.size(); ++i) {
      Connection* c = connections_[i].get();
      if (fds[i + 2].revents & POLLOUT) WriteOut(c);
      if ((fds[i + 2].revents & ~POLLOUT) != 0 && !ReadFrom(c)) {
        Close(c);
      } else {
        open.push_back(std::move(connections_[i]));
      }
    }
    connections_.swap(open);
    AckRound();
    CloseIdle();
    if (fds[1].revents != 0) AcceptAll();
  }
  CloseAll();
}

int Intake::PollTimeoutMs() const {
  int64_t wait_ns = -1;
  const int64_t now = clock_->NowNanos();
  auto until = [&](const Connection& c, absl::Duration after) {
    const int64_t ns = std::max<int64_t>(
        0, c.last_active_ns + absl::ToInt64Nanoseconds(after) - now);
    wait_ns = wait_ns < 0 ? ns : std::min(wait_ns, ns);
  };
  for (const auto& c : connections_) {
    if (options_.idle_timeout > absl::ZeroDuration()) {
      until(*c, options_.idle_timeout);
    }
    if (waiting_) until(*c, options_.evictable_idle);
  }
  if (wait_ns < 0) return -1;
  // The clock may be a test's: look again at least every second.
  return static_cast<int>(std::min<int64_t>(wait_ns / 1000000 + 1, 1000));
}

bool Intake::MayAccept() const {
  // At the cap, the listening socket is still watched until a client is
  // found waiting (counted and logged once), then only once one could
  // make room: never in a busy loop.
  if (connections_.size() < options_.max_connections || !waiting_) return true;
  const int64_t idle_ns = absl::ToInt64Nanoseconds(options_.evictable_idle);
  const int64_t now = clock_->NowNanos();
  for (const auto& c : connections_) {
    if (now - c->last_active_ns >= idle_ns) return true;
  }
  return false;
}

void Intake::AcceptAll() {
  while (true) {
    pollfd pending = {listen_fd_, POLLIN, 0};
    if (::poll(&pending, 1, 0) <= 0) return;  // nobody waits to connect
    if (connections_.size() >= options_.max_connections && !EvictIdlest()) {
      if (!waiting_) {
        waiting_ = true;
        {
          absl::MutexLock lock(&mu_);
          ++stats_.full_waits;
        }
        LogLimited(absl::StrCat("socket: ", connections_.size(),
                                " clients connected "
                                "(--max_connections=",
                                options_.max_connections,
                                ") and none idle "
                                "for ",
                                absl::FormatDuration(options_.evictable_idle),
                                ": new clients wait until one leaves"));
      }
      return;
    }
    int fd =
        ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        LogLimited(absl::StrCat("socket: accept: ", std::strerror(errno)));
      }
      return;
    }
    waiting_ = false;
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    c->id = next_id_++;
    c->last_active_ns = clock_->NowNanos();
    connections_.push_back(std::move(c));
    absl::MutexLock lock(&mu_);
    ++stats_.connections;
    ++stats_.open_connections;
  }
}

bool Intake::EvictIdlest() {
  if (connections_.empty()) return false;
  auto idlest = std::min_element(connections_.begin(), connections_.end(),
                                 [](const auto& a, const auto& b) {
                                   return a->last_active_ns < b->last_active_ns;
                                 });
  const absl::Duration idle =
      absl::Nanoseconds(clock_->NowNanos() - (*idlest)->last_active_ns);
  if (idle < options_.evictable_idle) return false;
  LogLimited(
      absl::StrCat("socket: --max_connections=", options_.max_connections,
                   " reached: closed client ", (*idlest)->id, " (idle for ",
                   absl::FormatDuration(idle), ") for a new client"));
  ShutDownAndClose(idlest->get());
  connections_.erase(idlest);
  absl::MutexLock lock(&mu_);
  ++stats_.evicted;
  return true;
}

void Intake::CloseIdle() {
  if (options_.idle_timeout <= absl::ZeroDuration()) return;
  const int64_t now = clock_->NowNanos();
  const int64_t limit = absl::ToInt64Nanoseconds(options_.idle_timeout);
  int64_t closed = 0;
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (now - (*it)->last_active_ns < limit) {
      ++it;
      continue;
    }
    LogLimited(absl::StrCat("socket: closed client ", (*it)->id,
                            ": no bytes for --client_idle_timeout=",
                            absl::FormatDuration(options_.idle_timeout)));
    ShutDownAndClose(it->get());
    it = connections_.erase(it);
    ++closed;
  }
  if (closed == 0) return;
  absl::MutexLock lock(&mu_);
  stats_.idle_closed += closed;
}

void Intake::ShutDownAndClose(Connection* c) {
  // After SHUT_RD the client's writes fail with EPIPE; what it wrote before
  // is still queued here and is read now.
  ::shutdown(c->fd, SHUT_RD);
  for (int i = 0; i < kMaxDrainReads; ++i) {
    ssize_t n = ::read(c->fd, read_buffer_.data(), read_buffer_.size());
    if (n <= 0) break;
    ProcessChunk(
        c, absl::string_view(read_buffer_.data(), static_cast<size_t>(n)));
  }
  Close(c);
}

void Intake::FlushSuppressedLogs(bool all) {
  const int64_t suppressed = reject_log_.TakeSuppressed(all);
  if (suppressed == 0) return;
  options_.log.Warning(absl::StrCat(
      "socket: ", suppressed,
      " more log lines suppressed (the agent's metrics count every one)"));
}

void Intake::LogLimited(const std::string& line) {
  int64_t suppressed = 0;
  if (!reject_log_.Allow(&suppressed)) return;
  options_.log.Warning(
      suppressed > 0
          ? absl::StrCat(line, " (", suppressed, " more log lines suppressed)")
          : line);
}

bool Intake::ReadFrom(Connection* c) {
  ssize_t n = ::read(c->fd, read_buffer_.data(), read_buffer_.size());
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    return true;
  }
  if (n <= 0) return false;  // EOF, or a reset: both end the connection
  c->last_active_ns = clock_->NowNanos();
  ProcessChunk(c,
               absl::string_view(read_buffer_.data(), static_cast<size_t>(n)));
  return true;
}

void Intake::ProcessChunk(Connection* c, absl::string_view data) {
  ProcessLines(c, data);
  PublishCounts();
}

void Intake::PublishCounts() {
  if (accepted_unpublished_ == 0 && blank_unpublished_ == 0) return;
  absl::MutexLock lock(&mu_);
  stats_.accepted_lines += accepted_unpublished_;
  stats_.blank_lines += blank_unpublished_;
  accepted_unpublished_ = 0;
  blank_unpublished_ = 0;
}

void Intake::ProcessLines(Connection* c, absl::string_view data) {
  while (!data.empty()) {
    const size_t nl = data.find('\n');
    const bool complete = nl != absl::string_view::npos;
    absl::string_view piece = data.substr(0, nl);
    data = complete ? data.substr(nl + 1) : absl::string_view();
    if (c->discarding) {
      if (complete) {
        c->discarding = false;
        ++c->line;
      }
      continue;
    }
    if (c->buffer.size() + piece.size() > options_.max_line_bytes) {
      Count(Outcome::kTooLong, c,
            absl::StrCat("line longer than ", options_.max_line_bytes,
                         " bytes, dropped"));
      std::string().swap(c->buffer);
      if (complete)
        ++c->line;
      else
        c->discarding = true;
      continue;
    }
    if (!complete) {
      c->buffer.append(piece.data(), piece.size());
      continue;
    }
    if (c->buffer.empty()) {
      HandleLine(c, piece);
    } else {
      c->buffer.append(piece.data(), piece.size());
      HandleLine(c, c->buffer);
      c->buffer.clear();
      if (c->buffer.capacity() > kKeptBufferCapacity) {
        std::string().swap(c->buffer);
      }
    }
    ++c->line;
  }
}

void Intake::HandleLine(Connection* c, absl::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (c->line == 1 && line == kAckHello) {
    c->ack_mode = true;
    Reply(c, absl::StrCat(kAckHello, "\n"));
    absl::MutexLock lock(&mu_);
    ++stats_.ack_connections;
    return;
  }
  if (c->ack_mode) {
    HandleAckLine(c, line);
    ++c->done;
    return;
  }
  decoder_.limits().now_ns = clock_->NowNanos();
  codec::PlainStep step;
  if (plain_decoder_.Decode(line, decoder_.limits(), &step)) {
    batcher_->AddPlainStep(step);  // serialized into the batch, no Event
    return Count(Outcome::kAccepted, c, "");
  }
  v1::Event event;
  absl::Status s = decoder_.DecodeLine(line, &event);
  if (absl::IsNotFound(s)) {
    Count(Outcome::kBlank, c, "");
  } else if (!s.ok()) {
    Count(Outcome::kInvalid, c, s.message());
  } else {
    batcher_->Add(std::move(event));
    Count(Outcome::kAccepted, c, "");
  }
}

void Intake::HandleAckLine(Connection* c, absl::string_view line) {
  if (absl::StripAsciiWhitespace(line).empty())
    return Count(Outcome::kBlank, c, "");
  auto record =
      nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  std::string problem;
  v1::Event event;
  if (!record.is_object() || !record.contains("event")) {
    problem = "ack mode: want {\"id\":\"...\",\"event\":{...}}";
  } else if (!record.contains("id") || !record["id"].is_string() ||
             record["id"].get_ref<const std::string&>().empty() ||
             record["id"].get_ref<const std::string&>().size() > kMaxIdBytes) {
    problem =
        absl::StrCat("id: want a string of 1 to ", kMaxIdBytes, " bytes, got ",
                     record.contains("id") ? record["id"].dump() : "none");
  } else {
    decoder_.limits().now_ns = clock_->NowNanos();
    absl::Status s = decoder_.DecodeLine(record["event"].dump(), &event);
    if (!s.ok()) problem = std::string(s.message());
  }
  if (!problem.empty()) {
    Reply(c, absl::StrCat(
                 nlohmann::json{
                     {"rejected", {{"line", c->line}, {"reason", problem}}}}
                     .dump(),
                 "\n"));
    return Count(Outcome::kInvalid, c, problem);
  }
  const uint64_t id =
      EventIds::Hash(record["id"].get_ref<const std::string&>());
  if (options_.ids != nullptr && !options_.ids->Claim(id)) {
    absl::MutexLock lock(&mu_);
    ++stats_.duplicate_lines;
    return;
  }
  batcher_->AddWithId(std::move(event), id);
  Count(Outcome::kAccepted, c, "");
}

void Intake::AckRound() {
  bool due = false;
  for (const auto& c : connections_) due = due || c->done > c->acked;
  if (!due) return;
  absl::Status s = batcher_->Sync();
  if (!s.ok()) {
    LogLimited(absl::StrCat(
        "socket: events were dropped (", s.ToString(),
        "): closing the ack-mode clients with unacknowledged lines; they "
        "send them again"));
  }
  std::vector<std::unique_ptr<Connection>> open;
  int64_t acks = 0;
  for (auto& c : connections_) {
    if (c->done > c->acked && s.ok()) {
      c->acked = c->done;
      ++acks;
      Reply(c.get(), absl::StrCat("{\"acked\":", c->done, "}\n"));
    }
    if (c->broken || (c->done > c->acked && !s.ok())) {
      Close(c.get());
    } else {
      open.push_back(std::move(c));
    }
  }
  connections_.swap(open);
  absl::MutexLock lock(&mu_);
  stats_.acks_sent += acks;
  if (!s.ok()) ++stats_.failed_syncs;
}

void Intake::Reply(Connection* c, absl::string_view text) {
  if (c->out.size() > kMaxPendingReply) {
    // Keep the line a partial write started; the newer acks supersede the rest.
    c->out.resize(c->out.find('\n') + 1);
  }
  c->out.append(text.data(), text.size());
  WriteOut(c);
}

void Intake::WriteOut(Connection* c) {
  while (!c->out.empty() && !c->broken) {
    ssize_t n = ::send(c->fd, c->out.data(), c->out.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      c->broken = true;  // the client is gone; its unread lines are resent
      return;
    }
    c->out.erase(0, static_cast<size_t>(n));
  }
}

void Intake::Close(Connection* c) {
  if (!c->discarding && !absl::StripAsciiWhitespace(c->buffer).empty()) {
    Count(Outcome::kPartial, c,
          "incomplete line (no newline) at disconnect, dropped");
  }
  ::close(c->fd);
  c->fd = -1;
  absl::MutexLock lock(&mu_);
  --stats_.open_connections;
}

void Intake::CloseAll() {
  for (const auto& c : connections_) {
    // Take what the client wrote before the shutdown (bounded).
    for (int i = 0; i < kMaxDrainReads; ++i) {
      ssize_t n = ::read(c->fd, read_buffer_.data(), read_buffer_.size());
      if (n <= 0) break;
      ProcessChunk(c.get(), absl::string_view(read_buffer_.data(),
                                              static_cast<size_t>(n)));
    }
    Close(c.get());
  }
  connections_.clear();
}

void Intake::Count(Outcome outcome, const Connection* c,
                   absl::string_view reason) {
  // The good lines of a chunk are published once, at its end (no lock a
  // line): ProcessChunk.
  if (outcome == Outcome::kAccepted) {
    ++accepted_unpublished_;
    return;
  }
  if (outcome == Outcome::kBlank) {
    ++blank_unpublished_;
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    ++(outcome == Outcome::kInvalid   ? stats_.invalid_lines
       : outcome == Outcome::kTooLong ? stats_.too_long_lines
                                      : stats_.partial_lines);
  }
  int64_t suppressed = 0;
  if (!reject_log_.Allow(&suppressed)) return;
  std::string more =
      suppressed > 0
          ? absl::StrCat(" (", suppressed, " more log lines suppressed)")
          : "";
  options_.log.Warning(absl::StrCat("socket: line ", c->line, ": ",
                                    Printable(reason), " [client ", c->id, "]",
                                    more));
}

Intake::Stats Intake::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

bool Intake::AwaitStats(const std::function<bool(const Stats&)>& done,
                        absl::Duration timeout) const {
  return agent::AwaitStats(mu_, stats_, done, timeout);
}

}  // namespace goodput::agent
