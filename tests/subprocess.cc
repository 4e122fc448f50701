#include "tests/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

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
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(timeout_s);
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return ExitCode(status);
    }
    // Polling a child's exit, bounded by the deadline.
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
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

int WaitForPort(const std::string& log_path, double timeout_s) {
  const std::regex listening("goodputd: listening on port ([0-9]+)");
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(log_path);
    std::stringstream text;
    text << in.rdbuf();
    std::smatch m;
    std::string s = text.str();
    if (std::regex_search(s, m, listening)) return std::stoi(m[1]);
    // Polling a log file for a process's readiness, bounded by a deadline.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

}  // namespace goodput::testing
