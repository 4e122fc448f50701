#include "sim/live_sink.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "util/proto_time.h"

namespace goodput::sim {
namespace {

absl::StatusOr<int> ConnectUnix(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError("--sockets: path too long: " + path);
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(std::strerror(errno));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    const std::string error = std::strerror(errno);
    close(fd);
    return absl::UnavailableError(
        absl::StrCat("--sockets: cannot connect to ", path, ": ", error));
  }
  return fd;
}

absl::Status WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n =
        send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::UnavailableError(std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

constexpr size_t kFlushBytes = 64 * 1024;

}  // namespace

absl::StatusOr<std::unique_ptr<LiveSink>> LiveSink::Connect(
    const std::vector<std::string>& sockets, double speed, int64_t sim_start_ms,
    Clock* clock, SleepUntil sleep_until) {
  std::vector<int> fds;
  for (const std::string& path : sockets) {
    absl::StatusOr<int> fd = ConnectUnix(path);
    if (!fd.ok()) {
      for (int open : fds) close(open);
      return fd.status();
    }
    fds.push_back(*fd);
  }
  return std::unique_ptr<LiveSink>(new LiveSink(
      std::move(fds), speed, sim_start_ms, clock, std::move(sleep_until)));
}

LiveSink::LiveSink(std::vector<int> fds, double speed, int64_t sim_start_ms,
                   Clock* clock, SleepUntil sleep_until)
    : fds_(std::move(fds)),
      buffers_(fds_.size()),
      speed_(speed),
      sim_start_ms_(sim_start_ms),
      wall_start_ns_(clock->NowNanos()),
      clock_(clock),
      sleep_until_(std::move(sleep_until)) {}

LiveSink::~LiveSink() {
  for (int fd : fds_) close(fd);
}

v1::Event LiveSink::Compress(const v1::Event& event, double speed,
                             int64_t sim_start_ms, int64_t wall_start_ns) {
  v1::Event e = event;
  const int64_t sim_ms =
      e.time().seconds() * 1000 + e.time().nanos() / 1'000'000;
  const int64_t wall_ms =
      wall_start_ns / 1'000'000 + std::llround((sim_ms - sim_start_ms) / speed);
  e.mutable_time()->set_seconds(wall_ms / 1000);
  e.mutable_time()->set_nanos(static_cast<int32_t>(wall_ms % 1000) * 1'000'000);
  if (e.has_step()) {
    v1::Step* s = e.mutable_step();
    s->set_input_wait_seconds(s->input_wait_seconds() / speed);
    s->set_idle_seconds(s->idle_seconds() / speed);
    s->set_flops(s->flops() / speed);
    s->set_bytes(s->bytes() / speed);
  }
  if (e.has_job_submitted()) {
    v1::JobSubmitted* s = e.mutable_job_submitted();
    s->set_step_flops(s->step_flops() / speed);
    s->set_step_bytes(s->step_bytes() / speed);
  }
  return e;
}

size_t LiveSink::Route(const std::string& host) const {
  if (host.empty()) return 0;
  uint64_t h = 1469598103934665603ull;  // FNV-1a: stable across runs
  for (unsigned char c : host) h = (h ^ c) * 1099511628211ull;
  return h % fds_.size();
}

void LiveSink::Emit(const v1::Event& event) {
  if (!status_.ok()) return;
  const v1::Event e = Compress(event, speed_, sim_start_ms_, wall_start_ns_);
  const int64_t due_ns = TimestampToNanos(e.time());
  if (due_ns > clock_->NowNanos()) {
    FlushAll();
    sleep_until_(due_ns);
  }
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  line_.clear();
  (void)google::protobuf::util::MessageToJsonString(e, &line_, options);
  line_ += '\n';
  if (tee_ != nullptr) tee_->write(line_.data(), line_.size());
  std::string& buffer = buffers_[Route(e.host())];
  buffer += line_;
  if (buffer.size() > kFlushBytes) FlushAll();
}

void LiveSink::FlushAll() {
  for (size_t i = 0; i < fds_.size() && status_.ok(); ++i) {
    status_ = WriteAll(fds_[i], buffers_[i]);
    buffers_[i].clear();
  }
}

absl::Status LiveSink::Finish() {
  FlushAll();
  if (tee_ != nullptr && !tee_->flush()) {
    return absl::DataLossError("--out: writing the events failed");
  }
  return status_;
}

}  // namespace goodput::sim
