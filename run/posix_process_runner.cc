#include "run/posix_process_runner.h"

#include <errno.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>

#include <map>
#include <string>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace goodput::run {
namespace {

// The caller's environment with `env` set on top, as "K=V" strings.
std::vector<std::string> MergedEnvironment(const EnvVars& env) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq != std::string::npos) vars[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : env) vars[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : vars) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

PosixProcessRunner::PosixProcessRunner() {
  sigemptyset(&waited_);
  sigaddset(&waited_, SIGTERM);
  sigaddset(&waited_, SIGINT);
  sigaddset(&waited_, SIGCHLD);
  sigprocmask(SIG_BLOCK, &waited_, &old_mask_);
}

PosixProcessRunner::~PosixProcessRunner() {
  sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
}

absl::Status PosixProcessRunner::Start(const std::vector<std::string>& argv,
                                       const EnvVars& env) {
  std::vector<std::string> args = argv, envs = MergedEnvironment(env);
  std::vector<char*> c_args = CStrings(args), c_env = CStrings(envs);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGCHLD);
  posix_spawnattr_setsigmask(&attr, &old_mask_);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdout_fd_ >= 0)
    posix_spawn_file_actions_adddup2(&actions, stdout_fd_, 1);
  if (stderr_fd_ >= 0)
    posix_spawn_file_actions_adddup2(&actions, stderr_fd_, 2);
  stdout_fd_ = stderr_fd_ = -1;
  int err = posix_spawnp(&pid_, c_args[0], &actions, &attr, c_args.data(),
                         c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (err != 0) {
    pid_ = -1;
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run ", argv[0], ": ", strerror(err)));
  }
  return absl::OkStatus();
}

bool PosixProcessRunner::Reap(WaitResult* result) {
  int status = 0;
  pid_t got = waitpid(pid_, &status, WNOHANG);
  if (got != pid_) return false;
  pid_ = -1;
  if (WIFSIGNALED(status)) result->term_signal = WTERMSIG(status);
  if (WIFEXITED(status)) result->exit_code = WEXITSTATUS(status);
  return true;
}

WaitResult PosixProcessRunner::Wait() {
  WaitResult result;
  while (pid_ > 0 && !Reap(&result)) {
    siginfo_t info;
    int sig = sigwaitinfo(&waited_, &info);
    if (sig == SIGTERM || sig == SIGINT) {
      result.stop_signal = sig;
      return result;
    }
  }
  return result;
}

void PosixProcessRunner::RedirectOutput(int stdout_fd, int stderr_fd) {
  stdout_fd_ = stdout_fd;
  stderr_fd_ = stderr_fd;
}

void PosixProcessRunner::Signal(int signal) {
  if (pid_ > 0) kill(pid_, signal);
}

}  // namespace goodput::run
