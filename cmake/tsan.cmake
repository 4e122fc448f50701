# GOODPUT_TSAN=ON: ThreadSanitizer for the project's own concurrent code
# (scripts/test.sh stage "tsan"; docs/security.md). Included from the top
# CMakeLists.txt before any target.
#
# Debian's Abseil is not TSan-instrumented, so absl::Mutex, CondVar and
# Notification would look like no synchronization at all. Every call our
# code makes to them is redirected (ld --wrap) to cmake/tsan_absl.cc, which
# tells TSan about the acquire/release and then calls the real function.
# Debian's gRPC and RocksDB are not instrumented either: tests that run
# real gRPC or RocksDB are not part of the TSan stage, except
# storage_hinted_skiplist_test: our memtable's readers beside its writer.
# The memtable publishes its nodes itself (release/acquire), and the test
# ran clean under TSan (a relaxed publication is reported).
add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
add_link_options(-fsanitize=thread)

# Mangled names (Abseil 20220623, inline namespace debian3) of the entry
# points cmake/tsan_absl.cc wraps; keep the two lists in sync.
set(GOODPUT_TSAN_WRAPPED
  _ZN4absl7debian35Mutex4LockEv
  _ZN4absl7debian35Mutex10ReaderLockEv
  _ZN4absl7debian35Mutex7TryLockEv
  _ZN4absl7debian35Mutex13ReaderTryLockEv
  _ZN4absl7debian35Mutex6UnlockEv
  _ZN4absl7debian35Mutex12ReaderUnlockEv
  _ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE
  _ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE
  _ZN4absl7debian35Mutex14ReaderLockWhenERKNS0_9ConditionE
  _ZN4absl7debian35Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE
  _ZN4absl7debian35Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE
  _ZN4absl7debian35Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE
  _ZN4absl7debian35Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE
  _ZN4absl7debian37CondVar4WaitEPNS0_5MutexE
  _ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE
  _ZN4absl7debian312Notification6NotifyEv
  _ZNK4absl7debian312Notification19WaitForNotificationEv
  _ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_8DurationE)
# --undefined pulls the wrappers in even when only a shared library (gRPC,
# whose own references stay unwrapped at run time) mentions the symbol.
foreach(sym IN LISTS GOODPUT_TSAN_WRAPPED)
  add_link_options("LINKER:--wrap=${sym}" "LINKER:--undefined=__wrap_${sym}")
endforeach()

add_library(goodput_tsan_absl STATIC ${CMAKE_CURRENT_LIST_DIR}/tsan_absl.cc)
target_link_libraries(goodput_tsan_absl PUBLIC absl::synchronization absl::status)
link_libraries(goodput_tsan_absl)

# The tests the TSan stage builds and runs: the agent's spool, batcher,
# heartbeat, intake and HTTP server, the server's ingest path over the
# in-memory store, util, and the store's memtable (above). (uplink and agent
# tests run real gRPC.)
set(GOODPUT_TSAN_TESTS
  agent_spool_test agent_batcher_test agent_heartbeat_test agent_intake_test
  agent_backoff_test util_http_server_test
  server_ingestor_test server_ingest_limits_test
  server_ingest_concurrency_test server_ingestor_group_test
  server_ingest_queue_test server_query_admission_test
  server_cluster_runner_test
  util_uuid_test util_basic_auth_test storage_hinted_skiplist_test)
