#include "tests/subprocess.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include "util/testing/http_client.h"

namespace goodput::testing {
namespace {

pid_t Spawn(const std::vector<std::string>& argv, int out_fd, int err_fd) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  dup2(out_fd, 1);
  dup2(err_fd, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execv(args[0], args.data());
  _exit(127);
}

int ExitCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

Subprocess::Subprocess(std::vector<std::string> argv, std::string log_path) {
  int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  pid_ = Spawn(argv, fd, fd);
  close(fd);
}

Subprocess::~Subprocess() {
  if (pid_ > 0) {
    Kill(SIGKILL);
    Wait();
  }
}

void Subprocess::Kill(int signal) {
  if (pid_ > 0) kill(pid_, signal);
}

int Subprocess::Wait() {
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return ExitCode(status);
}

int Subprocess::WaitFor(double timeout_s) {
  int status = 0;
  if (Eventually([&] { return waitpid(pid_, &status, WNOHANG) == pid_; },
                 timeout_s)) {
    pid_ = -1;
    return ExitCode(status);
  }
  Kill(SIGKILL);
  Wait();
  return -1;
}

int RunCapture(const std::vector<std::string>& argv,
               const std::string& log_path, std::string* out) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return -1;
  int err = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  pid_t pid = Spawn(argv, pipe_fds[1], err);
  close(pipe_fds[1]);
  close(err);
  char buf[65536];
  ssize_t n;
  while ((n = read(pipe_fds[0], buf, sizeof(buf))) > 0) out->append(buf, n);
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return ExitCode(status);
}

int WaitForLogInt(const std::string& log_path, const std::string& pattern,
                  double timeout_s) {
  const std::regex re(pattern);
  int value = -1;
  Eventually(
      [&] {
        std::ifstream in(log_path);
        std::stringstream text;
        text << in.rdbuf();
        std::string s = text.str();
        std::smatch m;
        if (!std::regex_search(s, m, re)) return false;
        value = std::stoi(m[1]);
        return true;
      },
      timeout_s);
  return value;
}

int WaitForPort(const std::string& log_path, double timeout_s) {
  return WaitForLogInt(log_path, "goodputd: listening on port ([0-9]+)",
                       timeout_s);
}

int RestartablePort() {
  std::mt19937 gen{std::random_device{}()};
  std::uniform_int_distribution<int> below_ephemeral(20000, 31999);
  for (int attempt = 0; attempt < 50; ++attempt) {
    int port = below_ephemeral(gen);
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool free =
        ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    if (free) return port;
  }
  return -1;
}

bool Eventually(const std::function<bool()>& done, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(timeout_s);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

std::string HttpGet(int port, const std::string& path) {
  absl::StatusOr<HttpResult> got =
      goodput::testing::HttpGet(port, absl::string_view(path));
  return got.ok() ? got->body : "";
}

bool WriteUnixSocket(const std::string& path, const std::string& data) {
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  for (size_t off = 0; ok && off < data.size();) {
    ssize_t n = write(fd, data.data() + off, data.size() - off);
    ok = n > 0;
    off += ok ? static_cast<size_t>(n) : 0;
  }
  close(fd);
  return ok;
}

bool IsUnixSocket(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

}  // namespace goodput::testing
