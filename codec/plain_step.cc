#include "codec/plain_step.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/numeric/int128.h"
#include "codec/rfc3339.h"
#include "google/protobuf/io/coded_stream.h"

namespace goodput {
namespace codec {
namespace {

// FastDecoder hands longer lines to the reference decoder; so does this.
constexpr size_t kMaxLineBytes = size_t{1} << 20;
constexpr size_t kMaxDigits = 18;  // as FastDecoder reads an int64 string

enum Key { kTime, kJobId, kHost, kAttempt, kStep, kUnknown };

// Consumes `c` from the front of `*s`.
bool Eat(absl::string_view* s, char c) {
  if (s->empty() || s->front() != c) return false;
  s->remove_prefix(1);
  return true;
}

// The bytes a plain string holds: printable ASCII other than '"' and '\\'.
// No escapes, and every JSON decoder reads them as they are written.
struct PlainBytes {
  bool in[256] = {};
  constexpr PlainBytes() {
    for (int c = 0x20; c < 0x7f; ++c) in[c] = c != '"' && c != '\\';
  }
};
constexpr PlainBytes kPlainBytes;

// A quoted string of plain bytes.
bool ReadString(absl::string_view* s, absl::string_view* out) {
  if (!Eat(s, '"')) return false;
  const unsigned char* p = reinterpret_cast<const unsigned char*>(s->data());
  size_t i = 0;
  while (i < s->size() && kPlainBytes.in[p[i]]) ++i;
  if (i == s->size() || p[i] != '"') return false;
  *out = s->substr(0, i);
  s->remove_prefix(i + 1);
  return true;
}

// Consumes `literal` from the front of `*s`; its size is known when
// inlined, so the compare is a few loads.
template <size_t N>
bool EatLiteral(absl::string_view* s, const char (&literal)[N]) {
  if (s->size() < N - 1 || std::memcmp(s->data(), literal, N - 1) != 0) {
    return false;
  }
  s->remove_prefix(N - 1);
  return true;
}

// A time's quoted text, unchecked: ParseRfc3339Strict accepts it only if
// it is all digits and "-T:.Z+", which need no escapes.
bool ReadTimeText(absl::string_view* s, absl::string_view* out) {
  if (!Eat(s, '"')) return false;
  const void* quote = std::memchr(s->data(), '"', s->size());
  if (quote == nullptr) return false;
  const size_t size = static_cast<const char*>(quote) - s->data();
  *out = s->substr(0, size);
  s->remove_prefix(size + 1);
  return true;
}

// 1 to kMaxDigits digits, quoted (as protobuf writes an int64) or a JSON
// integer (then without a leading zero, as JSON requires).
bool ReadStepNumber(absl::string_view* s, int64_t* out) {
  const bool quoted = Eat(s, '"');
  size_t n = 0;
  int64_t value = 0;
  while (n < s->size() && (*s)[n] >= '0' && (*s)[n] <= '9') {
    if (n == kMaxDigits) return false;  // before value * 10 can overflow
    value = value * 10 + ((*s)[n] - '0');
    ++n;
  }
  if (n == 0 || (!quoted && n > 1 && (*s)[0] == '0')) return false;
  s->remove_prefix(n);
  *out = value;
  return !quoted || Eat(s, '"');
}

// {"step":N}
bool ReadStepBody(absl::string_view* s, int64_t* step) {
  return EatLiteral(s, R"({"step":)") && ReadStepNumber(s, step) && Eat(s, '}');
}

// A member's quoted name and its ':'; kUnknown (nothing consumed) for any
// other name, or one written otherwise.
Key EatName(absl::string_view* s) {
  if (EatLiteral(s, R"("time":)")) return kTime;
  if (EatLiteral(s, R"("job_id":)")) return kJobId;
  if (EatLiteral(s, R"("step":)")) return kStep;
  if (EatLiteral(s, R"("host":)")) return kHost;
  if (EatLiteral(s, R"("attempt":)")) return kAttempt;
  if (EatLiteral(s, R"("jobId":)")) return kJobId;
  return kUnknown;
}

bool ReadValue(Key key, absl::string_view* s, absl::string_view* time,
               PlainStep* out) {
  switch (key) {
    case kTime:
      return ReadTimeText(s, time);
    case kJobId:
      return ReadString(s, &out->job_id);
    case kHost:
      return ReadString(s, &out->host);
    case kAttempt:
      return ReadString(s, &out->attempt);
    case kStep:
      return ReadStepBody(s, &out->step);
    case kUnknown:
      break;
  }
  return false;
}

// The object's members into `*out` and `*time`; false on any other shape
// or a repeated key.
bool ReadMembers(absl::string_view s, absl::string_view* time, PlainStep* out) {
  uint32_t seen = 0;
  if (!Eat(&s, '{')) return false;
  do {
    const Key key = EatName(&s);
    if (key == kUnknown || ((seen >> key) & 1) != 0) return false;
    seen |= uint32_t{1} << key;
    if (!ReadValue(key, &s, time, out)) return false;
  } while (Eat(&s, ','));
  constexpr uint32_t kRequired = (1 << kTime) | (1 << kJobId) | (1 << kStep);
  return Eat(&s, '}') && s.empty() && (seen & kRequired) == kRequired;
}

// ValidateEvent's window around limits.now_ns (CheckTime), if set.
bool InTimeWindow(const PlainStep& step, const ValidationLimits& limits) {
  if (!limits.now_ns.has_value()) return true;
  const absl::int128 at = absl::int128(step.seconds) * 1000000000 + step.nanos;
  const absl::int128 now = *limits.now_ns;
  if (limits.max_age_ns > 0 && at < now - limits.max_age_ns) return false;
  return at <= now + limits.max_future_ns;
}

// ValidateEvent's checks that a plain step can fail. Its time needs no
// range check: ParseRfc3339Strict's years 0002..9998 are inside protobuf's.
bool Valid(const PlainStep& step, const ValidationLimits& limits) {
  const size_t max = limits.max_string_bytes;
  return !step.job_id.empty() && step.job_id.size() <= max &&
         step.host.size() <= max && step.attempt.size() <= max &&
         step.step <= limits.max_step && InTimeWindow(step, limits);
}

// v1::Event's fields (proto/event.proto) as tags: time 1, job_id 2, host
// 3, attempt 4 (length-delimited), step 14; in Timestamp and Step the
// varints seconds 1, nanos 2 and step 1.
constexpr uint8_t kTimeTag = (1 << 3) | 2;
constexpr uint8_t kJobIdTag = (2 << 3) | 2;
constexpr uint8_t kHostTag = (3 << 3) | 2;
constexpr uint8_t kAttemptTag = (4 << 3) | 2;
constexpr uint8_t kStepTag = (14 << 3) | 2;
constexpr uint8_t kFirstVarintTag = (1 << 3) | 0;
constexpr uint8_t kSecondVarintTag = (2 << 3) | 0;
using google::protobuf::io::CodedOutputStream;

// A proto3 varint field (absent when 0; negative int32/int64 as 10 bytes).
size_t VarintFieldSize(int64_t v) {
  return v == 0 ? 0 : 1 + CodedOutputStream::VarintSize64(uint64_t(v));
}

size_t StringFieldSize(absl::string_view s) {
  return s.empty() ? 0
                   : 1 + CodedOutputStream::VarintSize32(s.size()) + s.size();
}

size_t TimeSize(const PlainStep& s) {
  return VarintFieldSize(s.seconds) + VarintFieldSize(s.nanos);
}

// A length-delimited field that is always written (a set submessage).
size_t MessageFieldSize(size_t size) {
  return 1 + CodedOutputStream::VarintSize32(static_cast<uint32_t>(size)) +
         size;
}

uint8_t* WriteVarintField(uint8_t tag, int64_t v, uint8_t* p) {
  if (v == 0) return p;
  *p++ = tag;
  return CodedOutputStream::WriteVarint64ToArray(uint64_t(v), p);
}

uint8_t* WriteStringField(uint8_t tag, absl::string_view s, uint8_t* p) {
  if (s.empty()) return p;
  *p++ = tag;
  p = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(s.size()),
                                              p);
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

uint8_t* WriteHead(uint8_t tag, size_t size, uint8_t* p) {
  *p++ = tag;
  return CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(size),
                                                 p);
}

}  // namespace

bool DecodePlainStep(absl::string_view line, const ValidationLimits& limits,
                     PlainStep* out) {
  return PlainStepDecoder().Decode(line, limits, out);
}

bool PlainStepDecoder::Decode(absl::string_view line,
                              const ValidationLimits& limits, PlainStep* out) {
  absl::string_view time;
  *out = PlainStep();
  return line.size() <= kMaxLineBytes && ReadMembers(line, &time, out) &&
         ParseTime(time, out) && Valid(*out, limits);
}

bool PlainStepDecoder::ParseTime(absl::string_view text, PlainStep* out) {
  if (has_last_ && text.size() == last_size_ &&
      std::memcmp(text.data(), last_text_, last_size_) == 0) {
    out->seconds = last_seconds_;
    out->nanos = last_nanos_;
    return true;
  }
  if (!ParseRfc3339Strict(text, &out->seconds, &out->nanos)) return false;
  if (text.size() <= kMaxKeptTime) {
    has_last_ = true;
    std::memcpy(last_text_, text.data(), text.size());
    last_size_ = text.size();
    last_seconds_ = out->seconds;
    last_nanos_ = out->nanos;
  }
  return true;
}

void PlainStepToEvent(const PlainStep& step, v1::Event* out) {
  out->Clear();
  out->mutable_time()->set_seconds(step.seconds);
  out->mutable_time()->set_nanos(step.nanos);
  out->set_job_id(std::string(step.job_id));
  out->set_host(std::string(step.host));
  out->set_attempt(std::string(step.attempt));
  out->mutable_step()->set_step(step.step);
}

size_t PlainStepWireSize(const PlainStep& step) {
  return MessageFieldSize(TimeSize(step)) + StringFieldSize(step.job_id) +
         StringFieldSize(step.host) + StringFieldSize(step.attempt) +
         MessageFieldSize(VarintFieldSize(step.step));
}

uint8_t* WritePlainStepWire(const PlainStep& step, uint8_t* p) {
  // Fields in number order, as protobuf serializes them.
  p = WriteHead(kTimeTag, TimeSize(step), p);
  p = WriteVarintField(kFirstVarintTag, step.seconds, p);
  p = WriteVarintField(kSecondVarintTag, step.nanos, p);
  p = WriteStringField(kJobIdTag, step.job_id, p);
  p = WriteStringField(kHostTag, step.host, p);
  p = WriteStringField(kAttemptTag, step.attempt, p);
  p = WriteHead(kStepTag, VarintFieldSize(step.step), p);
  return WriteVarintField(kFirstVarintTag, step.step, p);
}

void AppendPlainStepWire(const PlainStep& step, std::string* out) {
  const size_t start = out->size();
  out->resize(start + PlainStepWireSize(step));
  WritePlainStepWire(step, reinterpret_cast<uint8_t*>(&(*out)[start]));
}

}  // namespace codec
}  // namespace goodput
