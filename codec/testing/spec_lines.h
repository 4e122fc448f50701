// Test data: the example lines of SPEC section 2, every one a valid event.
// Header-only constants, safe from any thread.
#ifndef GOODPUT_CODEC_TESTING_SPEC_LINES_H_
#define GOODPUT_CODEC_TESTING_SPEC_LINES_H_

namespace goodput {
namespace codec {
namespace testing {

inline constexpr const char* kSpecLines[] = {
    R"({"time":"2026-11-22T10:00:00Z","job_id":"llm-7","job_submitted":{"chips":256,"accelerator":"tpu-v5p","workload":"TRAINING","framework":"jax","labels":{"team":"search"},"step_flops":1.2e15,"step_bytes":3.0e12}})",
    R"({"time":"2026-11-22T10:02:00Z","job_id":"llm-7","allocation":{"chips":256}})",
    R"({"time":"2026-11-22T10:02:01Z","job_id":"llm-7","started":{}})",
    R"({"time":"2026-11-22T10:02:01Z","job_id":"llm-7","activity":{"kind":"INIT"}})",
    R"({"time":"2026-11-22T10:02:30Z","job_id":"llm-7","activity":{"kind":"COMPILE"}})",
    R"({"time":"2026-11-22T10:03:00Z","job_id":"llm-7","activity":{"kind":"TRAINING"}})",
    R"({"time":"2026-11-22T10:03:02Z","job_id":"llm-7","step":{"step":1,"flops":1.2e15,"bytes":3.0e12,"input_wait_seconds":0.1}})",
    R"({"time":"2026-11-22T10:20:00Z","job_id":"llm-7","checkpoint":{"step":500}})",
    R"({"time":"2026-11-22T10:31:00Z","job_id":"llm-7","interruption":{"reason":"PREEMPTED"}})",
    R"({"time":"2026-11-22T10:40:00Z","job_id":"llm-7","activity":{"kind":"RESTORE","step":500}})",
    R"({"time":"2026-11-22T11:00:00Z","job_id":"llm-7","job_ended":{"outcome":"SUCCEEDED"}})",
    R"({"time":"2026-11-22T10:00:05Z","host":"host-17","heartbeat":{"chips":4,"accelerator":"tpu-v5p"}})",
};

}  // namespace testing
}  // namespace codec
}  // namespace goodput

#endif  // GOODPUT_CODEC_TESTING_SPEC_LINES_H_
