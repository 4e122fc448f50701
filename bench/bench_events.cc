#include "bench/bench_events.h"

#include <algorithm>

#include "core/event_order.h"
#include "google/protobuf/util/json_util.h"

namespace goodput::bench {
namespace {

constexpr int64_t kStart = 1795341600;  // 2026-11-22T10:00:00Z

v1::Event At(const std::string& job_id, int64_t ms) {
  v1::Event e;
  e.mutable_time()->set_seconds(kStart + ms / 1000);
  e.mutable_time()->set_nanos(static_cast<int32_t>(ms % 1000) * 1000000);
  e.set_job_id(job_id);
  return e;
}

void AddJob(const std::string& id, int64_t steps, int64_t offset_ms,
            bool preempt, std::vector<v1::Event>* out,
            int64_t checkpoint_every = 100) {
  v1::Event e = At(id, offset_ms);
  auto* s = e.mutable_job_submitted();
  s->set_chips(256);
  s->set_accelerator("tpu-v5p");
  s->set_step_flops(1e17);
  s->set_workload(v1::JobSubmitted::TRAINING);  // required by validation
  out->push_back(e);
  e = At(id, offset_ms);
  e.mutable_started();
  out->push_back(e);
  for (int64_t i = 1; i <= steps; ++i) {
    const int64_t ms = offset_ms + i * 1000;
    e = At(id, ms);
    e.mutable_step()->set_step(i);
    out->push_back(e);
    if (i % checkpoint_every == 0) {
      e = At(id, ms);
      e.mutable_checkpoint()->set_step(i);
      out->push_back(e);
    }
    if (preempt && i == steps / 2) {
      e = At(id, ms + 500);
      e.mutable_interruption()->set_reason(v1::Interruption::PREEMPTED);
      out->push_back(e);
      offset_ms += 1000;
      e = At(id, ms + 1000);
      e.mutable_activity()->set_kind(v1::Activity::TRAINING);
      out->push_back(e);
    }
  }
}

}  // namespace

std::vector<v1::Event> LongJob(const std::string& job_id, int64_t steps) {
  std::vector<v1::Event> out;
  AddJob(job_id, steps, 0, false, &out);
  return out;
}

std::vector<v1::Event> LongJob(const std::string& job_id, int64_t steps,
                               int64_t checkpoint_every) {
  std::vector<v1::Event> out;
  AddJob(job_id, steps, 0, false, &out, checkpoint_every);
  return out;
}

std::vector<v1::Event> Fleet(int jobs, int64_t steps_per_job,
                             int64_t checkpoint_every) {
  std::vector<v1::Event> out;
  for (int j = 0; j < jobs; ++j) {
    AddJob("job-" + std::to_string(j), steps_per_job, j * 37, j % 10 == 0, &out,
           checkpoint_every);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const v1::Event& a, const v1::Event& b) {
                     return core::EventTimeNanos(a) < core::EventTimeNanos(b);
                   });
  // Deep copies in apply order, so memory is laid out as a decoder that
  // reads the log front to back would lay it out.
  return std::vector<v1::Event>(out.begin(), out.end());
}

std::string ToJsonLines(const std::vector<v1::Event>& events) {
  std::string out, line;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  for (const v1::Event& e : events) {
    line.clear();
    (void)google::protobuf::util::MessageToJsonString(e, &line, options);
    out += line;
    out += '\n';
  }
  return out;
}

}  // namespace goodput::bench
