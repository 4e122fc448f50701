// Throughput of FastDecoder vs DecodeEventReference on the typical lines of
// SPEC section 2 (mostly steps). Prints lines/s for each; not a test.
//   codec_decoder_bench [lines=2000000]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codec/fast_decoder.h"
#include "codec/line_decoder.h"
#include "codec/reference_decoder.h"

namespace {

std::vector<std::string> StepLines(int n) {
  std::vector<std::string> lines;
  lines.reserve(n);
  for (int i = 0; i < n; ++i) {
    lines.push_back(absl::StrCat(
        R"({"time":"2026-11-22T10:)", 10 + i % 50, ":", 10 + i % 40, ".",
        100 + i % 900, R"(Z","job_id":"llm-7","attempt":"a1","step":{"step":)",
        i + 1, R"(,"flops":1.2e15,"bytes":3.0e12,"input_wait_seconds":0.1}})"));
  }
  return lines;
}

template <typename Fn>
double LinesPerSecond(const std::vector<std::string>& lines, Fn decode) {
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& line : lines) decode(line);
  const std::chrono::duration<double> took =
      std::chrono::steady_clock::now() - start;
  return lines.size() / took.count();
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 2000000;
  const std::vector<std::string> lines = StepLines(n);
  std::printf("line: %s (%zu bytes)\n", lines[0].c_str(), lines[0].size());
  goodput::v1::Event event;
  int bad = 0;
  goodput::codec::FastDecoder fast;
  LinesPerSecond(lines, [&](const std::string& l) {  // Warm-up.
    bad += !fast.Decode(l, &event).ok();
  });
  const double fast_rate = LinesPerSecond(lines, [&](const std::string& l) {
    bad += !fast.Decode(l, &event).ok();
  });
  goodput::codec::LineDecoder line_decoder;
  const double line_rate = LinesPerSecond(lines, [&](const std::string& l) {
    bad += !line_decoder.DecodeLine(l, &event).ok();
  });
  const std::vector<std::string> few(lines.begin(), lines.begin() + n / 10);
  const double ref_rate = LinesPerSecond(few, [&](const std::string& l) {
    bad += !goodput::codec::DecodeEventReferenceInto(l, &event).ok();
  });
  std::printf("fast decoder:      %.0f lines/s (fallbacks: %lld)\n", fast_rate,
              static_cast<long long>(fast.fallback_lines()));
  std::printf("line decoder:      %.0f lines/s (fast decode + validate)\n",
              line_rate);
  std::printf("reference decoder: %.0f lines/s\n", ref_rate);
  std::printf("speed-up: %.1fx, rejected lines: %d\n", fast_rate / ref_rate,
              bad);
  return bad == 0 ? 0 : 1;
}
