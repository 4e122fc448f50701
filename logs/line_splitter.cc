#include "logs/line_splitter.h"

#include <algorithm>

namespace goodput::logs {

void LineSplitter::Append(absl::string_view piece) {
  const size_t room = max_line_ - std::min(max_line_, partial_.size());
  const size_t take = std::min(room, piece.size());
  partial_.append(piece.data(), take);
  truncated_ += static_cast<int64_t>(piece.size() - take);
}

void LineSplitter::Add(absl::string_view chunk, const OnLine& on_line) {
  size_t newline;
  while ((newline = chunk.find('\n')) != absl::string_view::npos) {
    if (partial_.empty() && newline <= max_line_) {
      on_line(chunk.substr(0, newline));  // no copy for a whole line
    } else {
      Append(chunk.substr(0, newline));
      on_line(partial_);
      partial_.clear();
    }
    chunk.remove_prefix(newline + 1);
  }
  Append(chunk);
}

void LineSplitter::Flush(const OnLine& on_line) {
  if (partial_.empty()) return;
  on_line(partial_);
  partial_.clear();
}

}  // namespace goodput::logs
