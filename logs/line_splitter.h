// LineSplitter: cuts a byte stream that arrives in chunks into lines for
// the matcher, keeping at most max_line bytes of a line (the rest of an
// over-long line, e.g. a progress bar without newlines, is dropped), so
// memory stays bounded whatever the input. Owns the partial line; not
// thread-safe.
#ifndef GOODPUT_LOGS_LINE_SPLITTER_H_
#define GOODPUT_LOGS_LINE_SPLITTER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/strings/string_view.h"

namespace goodput::logs {

class LineSplitter {
 public:
  using OnLine = std::function<void(absl::string_view line)>;

  explicit LineSplitter(size_t max_line = 64 * 1024) : max_line_(max_line) {}

  // Calls on_line for each line `chunk` completes (without its '\n').
  void Add(absl::string_view chunk, const OnLine& on_line);
  // Calls on_line for a last line without '\n', if any.
  void Flush(const OnLine& on_line);

  // Bytes dropped from over-long lines so far.
  int64_t truncated_bytes() const { return truncated_; }

 private:
  void Append(absl::string_view piece);

  size_t max_line_;
  std::string partial_;
  int64_t truncated_ = 0;
};

}  // namespace goodput::logs

#endif  // GOODPUT_LOGS_LINE_SPLITTER_H_
