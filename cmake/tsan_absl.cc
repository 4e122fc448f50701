// TSan annotations for Debian's Abseil synchronization (GOODPUT_TSAN=ON).
//
// Debian's libabsl_synchronization is not built with -fsanitize=thread, so
// TSan does not see absl::Mutex, CondVar or Notification synchronize and
// reports every guarded access as a race. The TSan build links with
// -Wl,--wrap=<symbol> for each entry point our code calls (cmake/tsan.cmake)
// and these wrappers tell TSan what the real functions do: acquire after
// taking a lock, release before giving it up. Conditions passed to Await or
// LockWhen run inside the library with the lock held, so they are wrapped
// too: acquire before evaluating, release after. Only compiled into the
// TSan build; stateless but for the start-up setting below.
//
// Abseil's deadlock detector (on in Debian's build) keeps a graph of every
// lock order in memory that its own uninstrumented spin lock guards; TSan
// sees that graph grow (memmove) in one thread and its arena come from mmap
// in another, and reports a race inside Abseil when several threads take
// their first locks at once (the agent's spool starts 8 syncer threads).
// The TSan build turns the detector off; the dev and ASan builds keep it.
// Likewise absl::ErrnoToStatus builds a table of messages on first use,
// under a static guard TSan does not see in the uninstrumented library: two
// syncer threads failing at once for the first time look like a race, so
// the table is built before main.
#include <cerrno>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

extern "C" {
void __tsan_acquire(void* addr);
void __tsan_release(void* addr);
}

namespace {

using absl::Condition;
using absl::CondVar;
using absl::Duration;
using absl::Mutex;
using absl::Notification;
using absl::Time;

struct WrappedCondition {
  const Condition* cond;
  Mutex* mu;
};

bool EvalAnnotated(WrappedCondition* w) {
  __tsan_acquire(w->mu);
  const bool holds = w->cond->Eval();
  __tsan_release(w->mu);
  return holds;
}

// Before main: no lock is taken yet.
[[maybe_unused]] const bool kDeadlockDetectionOff = [] {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return !absl::ErrnoToStatus(EIO, "").ok();
}();

}  // namespace

// Declares __real_SYM and defines __wrap_SYM for a Mutex method taking a
// Condition and maybe one more argument.
#define WRAP_AWAIT(RET, SYM, ...)                                    \
  RET __real_##SYM(Mutex* mu, const Condition& cond, ##__VA_ARGS__); \
  RET __wrap_##SYM(Mutex* mu, const Condition& cond, ##__VA_ARGS__)

extern "C" {

// Mutex: Lock, TryLock, ReaderLock, ReaderTryLock, Unlock, ReaderUnlock.
void __real__ZN4absl7debian35Mutex4LockEv(Mutex* mu);
void __wrap__ZN4absl7debian35Mutex4LockEv(Mutex* mu) {
  __real__ZN4absl7debian35Mutex4LockEv(mu);
  __tsan_acquire(mu);
}
void __real__ZN4absl7debian35Mutex10ReaderLockEv(Mutex* mu);
void __wrap__ZN4absl7debian35Mutex10ReaderLockEv(Mutex* mu) {
  __real__ZN4absl7debian35Mutex10ReaderLockEv(mu);
  __tsan_acquire(mu);
}
bool __real__ZN4absl7debian35Mutex7TryLockEv(Mutex* mu);
bool __wrap__ZN4absl7debian35Mutex7TryLockEv(Mutex* mu) {
  const bool locked = __real__ZN4absl7debian35Mutex7TryLockEv(mu);
  if (locked) __tsan_acquire(mu);
  return locked;
}
bool __real__ZN4absl7debian35Mutex13ReaderTryLockEv(Mutex* mu);
bool __wrap__ZN4absl7debian35Mutex13ReaderTryLockEv(Mutex* mu) {
  const bool locked = __real__ZN4absl7debian35Mutex13ReaderTryLockEv(mu);
  if (locked) __tsan_acquire(mu);
  return locked;
}
void __real__ZN4absl7debian35Mutex6UnlockEv(Mutex* mu);
void __wrap__ZN4absl7debian35Mutex6UnlockEv(Mutex* mu) {
  __tsan_release(mu);
  __real__ZN4absl7debian35Mutex6UnlockEv(mu);
}
void __real__ZN4absl7debian35Mutex12ReaderUnlockEv(Mutex* mu);
void __wrap__ZN4absl7debian35Mutex12ReaderUnlockEv(Mutex* mu) {
  __tsan_release(mu);
  __real__ZN4absl7debian35Mutex12ReaderUnlockEv(mu);
}

// Mutex: Await*, LockWhen*, ReaderLockWhen*.
#define WRAP_AWAIT_BODY(SYM, ...)                                       \
  {                                                                     \
    WrappedCondition w{&cond, mu};                                      \
    auto result =                                                       \
        __real_##SYM(mu, Condition(&EvalAnnotated, &w), ##__VA_ARGS__); \
    __tsan_acquire(mu);                                                 \
    return result;                                                      \
  }
#define WRAP_VOID_BODY(SYM)                          \
  {                                                  \
    WrappedCondition w{&cond, mu};                   \
    __real_##SYM(mu, Condition(&EvalAnnotated, &w)); \
    __tsan_acquire(mu);                              \
  }

WRAP_AWAIT(void, _ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE)
WRAP_VOID_BODY(_ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE)
WRAP_AWAIT(void, _ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE)
WRAP_VOID_BODY(_ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE)
WRAP_AWAIT(void, _ZN4absl7debian35Mutex14ReaderLockWhenERKNS0_9ConditionE)
WRAP_VOID_BODY(_ZN4absl7debian35Mutex14ReaderLockWhenERKNS0_9ConditionE)
WRAP_AWAIT(
    bool,
    _ZN4absl7debian35Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE,
    Duration d)
WRAP_AWAIT_BODY(
    _ZN4absl7debian35Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE, d)
WRAP_AWAIT(
    bool, _ZN4absl7debian35Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE,
    Time t)
WRAP_AWAIT_BODY(
    _ZN4absl7debian35Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE, t)
WRAP_AWAIT(
    bool,
    _ZN4absl7debian35Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE,
    Duration d)
WRAP_AWAIT_BODY(
    _ZN4absl7debian35Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE,
    d)
WRAP_AWAIT(
    bool,
    _ZN4absl7debian35Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE,
    Time t)
WRAP_AWAIT_BODY(
    _ZN4absl7debian35Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE, t)

// CondVar: the mutex is given up while waiting and taken again.
void __real__ZN4absl7debian37CondVar4WaitEPNS0_5MutexE(CondVar* cv, Mutex* mu);
void __wrap__ZN4absl7debian37CondVar4WaitEPNS0_5MutexE(CondVar* cv, Mutex* mu) {
  __tsan_release(mu);
  __real__ZN4absl7debian37CondVar4WaitEPNS0_5MutexE(cv, mu);
  __tsan_acquire(mu);
}
bool __real__ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE(
    CondVar* cv, Mutex* mu, Duration d);
bool __wrap__ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE(
    CondVar* cv, Mutex* mu, Duration d) {
  __tsan_release(mu);
  const bool timed_out =
      __real__ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE(
          cv, mu, d);
  __tsan_acquire(mu);
  return timed_out;
}

// Notification: Notify releases; the waits acquire.
void __real__ZN4absl7debian312Notification6NotifyEv(Notification* n);
void __wrap__ZN4absl7debian312Notification6NotifyEv(Notification* n) {
  __tsan_release(n);
  __real__ZN4absl7debian312Notification6NotifyEv(n);
}
void __real__ZNK4absl7debian312Notification19WaitForNotificationEv(
    const Notification* n);
void __wrap__ZNK4absl7debian312Notification19WaitForNotificationEv(
    const Notification* n) {
  __real__ZNK4absl7debian312Notification19WaitForNotificationEv(n);
  __tsan_acquire(const_cast<Notification*>(n));
}
bool __real__ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_8DurationE(
    const Notification* n, Duration d);
bool __wrap__ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_8DurationE(
    const Notification* n, Duration d) {
  const bool notified =
      __real__ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_8DurationE(
          n, d);
  __tsan_acquire(const_cast<Notification*>(n));
  return notified;
}

}  // extern "C"
