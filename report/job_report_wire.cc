#include "report/job_report_wire.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "absl/base/casts.h"
#include "proto/report.pb.h"

namespace goodput::report {
namespace {

using v1::JobReport;
using v1::StepTime;

constexpr uint32_t kVarint = 0, kFixed64 = 1, kDelimited = 2;
// A length-delimited body is written this far after its tag, then moved
// back to meet its length's varint (bodies here are under 2^35 bytes).
constexpr size_t kMaxLengthBytes = 5;

char* Varint(uint64_t v, char* p) {
  while (v >= 0x80) {
    *p++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

char* Tag(int field, uint32_t wire_type, char* p) {
  return Varint((static_cast<uint64_t>(field) << 3) | wire_type, p);
}

// int64 and enum values: negative ones take 10 bytes (sign-extended).
char* Int64(int field, int64_t v, char* p) {
  return Varint(static_cast<uint64_t>(v), Tag(field, kVarint, p));
}

// proto3 implicit presence: zero is not written.
char* Int64IfSet(int field, int64_t v, char* p) {
  return v == 0 ? p : Int64(field, v, p);
}

char* Fixed64(double v, char* p) {
  const uint64_t bits = absl::bit_cast<uint64_t>(v);
  for (int i = 0; i < 8; ++i) *p++ = static_cast<char>(bits >> (8 * i));
  return p;
}

char* Double(int field, double v, char* p) {
  return Fixed64(v, Tag(field, kFixed64, p));
}

// As protobuf: a double whose bits are 0 (+0.0) is not written; -0.0 is.
char* DoubleIfSet(int field, double v, char* p) {
  return absl::bit_cast<uint64_t>(v) == 0 ? p : Double(field, v, p);
}

char* String(int field, std::string_view s, char* p) {
  p = Varint(s.size(), Tag(field, kDelimited, p));
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

char* StringIfSet(int field, std::string_view s, char* p) {
  return s.empty() ? p : String(field, s, p);
}

// A length-delimited field whose bytes `body(start)` writes (returning
// their end).
template <typename Body>
char* Delimited(int field, char* p, Body body) {
  p = Tag(field, kDelimited, p);
  char* const start = p + kMaxLengthBytes;
  const size_t n = static_cast<size_t>(body(start) - start);
  p = Varint(n, p);
  std::memmove(p, start, n);
  return p + n;
}

// Identity fields 1-7 (core::JobReportToProto's IdentityToProto).
char* Identity(const core::JobReport& job, char* p) {
  p = StringIfSet(JobReport::kJobIdFieldNumber, job.job_id, p);
  p = Int64IfSet(JobReport::kChipsFieldNumber, job.chips, p);
  p = StringIfSet(JobReport::kAcceleratorFieldNumber, job.accelerator, p);
  p = Int64IfSet(JobReport::kWorkloadFieldNumber, job.workload, p);
  p = StringIfSet(JobReport::kFrameworkFieldNumber, job.framework, p);
  for (const auto& label : job.labels) {  // in key order
    p = Delimited(JobReport::kLabelsFieldNumber, p, [&](char* q) {
      // A map entry writes both key and value, even empty.
      return String(2, label.second, String(1, label.first, q));
    });
  }
  return Int64IfSet(JobReport::kStateFieldNumber,
                    static_cast<int64_t>(job.state), p);
}

// Fields 8-13: the time per category and CUSTOM activity.
char* Times(const core::JobReport& job, char* p) {
  p = Int64IfSet(JobReport::kTotalNsFieldNumber, job.total_ns, p);
  p = Delimited(JobReport::kCategoryNsFieldNumber, p, [&](char* q) {
    for (int64_t ns : job.nanos) q = Varint(static_cast<uint64_t>(ns), q);
    return q;
  });
  for (const auto& custom : job.custom_nanos) {
    p = Delimited(JobReport::kCustomNsFieldNumber, p, [&](char* q) {
      return Int64(2, custom.second, String(1, custom.first, q));
    });
  }
  p = Int64IfSet(JobReport::kAtRiskNsFieldNumber, job.at_risk_ns, p);
  p = DoubleIfSet(JobReport::kIdealSecondsFieldNumber, job.ideal_seconds, p);
  return Int64IfSet(JobReport::kCostedProductiveNsFieldNumber,
                    job.costed_productive_ns, p);
}

// Fields 14-19: steps and counters.
char* Counters(const core::JobReport& job, char* p) {
  if (job.last_step)
    p = Int64(JobReport::kLastStepFieldNumber, *job.last_step, p);
  if (job.last_checkpoint) {
    p = Int64(JobReport::kLastCheckpointFieldNumber, *job.last_checkpoint, p);
  }
  p = Int64IfSet(JobReport::kLostStepsFieldNumber, job.lost_steps, p);
  p = Int64IfSet(JobReport::kInterruptionsFieldNumber, job.interruptions, p);
  p = Int64IfSet(JobReport::kDuplicatesFieldNumber, job.duplicates, p);
  return Int64IfSet(JobReport::kNoticesFieldNumber, job.notices, p);
}

// Fields 20-22, an elastic job's only.
char* Elastic(const core::JobReport& job, char* p) {
  if (!job.min_chips) return p;
  p = Int64(JobReport::kMinChipsFieldNumber, *job.min_chips, p);
  p = Delimited(JobReport::kCategoryChipSecondsFieldNumber, p, [&](char* q) {
    for (double cs : job.chip_seconds) q = Fixed64(cs, q);
    return q;
  });
  return DoubleIfSet(JobReport::kCostedProductiveChipSecondsFieldNumber,
                     job.costed_productive_chip_seconds, p);
}

char* StepTimeFields(const core::StepTimeSummary& s, char* p) {
  p = Int64IfSet(StepTime::kBaselineStepsFieldNumber, s.baseline_steps, p);
  p = DoubleIfSet(StepTime::kBaselineMedianSecondsFieldNumber,
                  s.baseline_median_s, p);
  p = DoubleIfSet(StepTime::kBaselineMadSecondsFieldNumber, s.baseline_mad_s,
                  p);
  p = Int64IfSet(StepTime::kRecentStepsFieldNumber, s.recent_steps, p);
  return DoubleIfSet(StepTime::kRecentP50SecondsFieldNumber, s.recent_p50_s, p);
}

// Fields 23-26: prices, step times, checkpoints.
char* Issue18(const core::JobReport& job, char* p) {
  if (job.usd_per_chip_hour) {
    p = Double(JobReport::kUsdPerChipHourFieldNumber, *job.usd_per_chip_hour,
               p);
  }
  if (job.watts_per_chip) {
    p = Double(JobReport::kWattsPerChipFieldNumber, *job.watts_per_chip, p);
  }
  if (job.step_time) {
    p = Delimited(JobReport::kStepTimeFieldNumber, p,
                  [&](char* q) { return StepTimeFields(*job.step_time, q); });
  }
  return Int64IfSet(JobReport::kCheckpointsFieldNumber, job.checkpoints, p);
}

// An upper bound of what AppendJobReportField writes for `job`, gaps of
// Delimited included: every fixed field at its largest (2-byte tags,
// 10-byte varints) is under 1 KiB.
size_t MaxBytes(const core::JobReport& job) {
  size_t n =
      1024 + job.job_id.size() + job.accelerator.size() + job.framework.size();
  for (const auto& [key, value] : job.labels)
    n += 32 + key.size() + value.size();
  for (const auto& [name, ns] : job.custom_nanos) n += 32 + name.size();
  return n;
}

}  // namespace

void AppendJobReportField(int field_number, const core::JobReport& job,
                          std::string* out, size_t* used) {
  const size_t need = *used + MaxBytes(job);
  if (out->size() < need) out->resize(std::max(need, 2 * out->size()));
  char* const begin = out->data() + *used;
  char* const end = Delimited(field_number, begin, [&](char* p) {
    return Issue18(job,
                   Elastic(job, Counters(job, Times(job, Identity(job, p)))));
  });
  *used += static_cast<size_t>(end - begin);
}

}  // namespace goodput::report
