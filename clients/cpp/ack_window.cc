#include "clients/cpp/ack_window.h"

#include <utility>

#include "absl/strings/strip.h"
#include "absl/strings/numbers.h"

namespace goodput::client {
namespace {

// The number after `prefix` at the start of `line`, else -1.
int64_t NumberAfter(absl::string_view line, absl::string_view prefix) {
  if (!absl::ConsumePrefix(&line, prefix)) return -1;
  const size_t end = line.find_first_not_of("0123456789");
  int64_t n = -1;
  if (!absl::SimpleAtoi(line.substr(0, end), &n)) return -1;
  return n;
}

}  // namespace

std::vector<Unacked> AckWindow::Add(Unacked u) {
  u.line_no = 0;
  events_.push_back(std::move(u));
  std::vector<Unacked> out;
  while (events_.size() > capacity_) {
    out.push_back(std::move(events_.front()));
    events_.pop_front();
  }
  return out;
}

std::string AckWindow::TakeUnsent() {
  std::string data;
  for (Unacked& u : events_) {
    if (u.line_no != 0) continue;
    u.line_no = ++lines_;
    data += u.line;
  }
  return data;
}

void AckWindow::Reset() {
  for (Unacked& u : events_) u.line_no = 0;
  lines_ = 0;
  rejected_.clear();
  partial_.clear();
}

AckWindow::Progress AckWindow::Feed(absl::string_view bytes) {
  Progress progress;
  partial_.append(bytes.data(), bytes.size());
  size_t start = 0;
  for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos;
       start = nl + 1) {
    Reply(absl::string_view(partial_).substr(start, nl - start), &progress);
  }
  partial_.erase(0, start);
  return progress;
}

void AckWindow::Reply(absl::string_view line, Progress* progress) {
  // The hello is line 1 of the connection: event line L - 1.
  const int64_t rejected = NumberAfter(line, "{\"rejected\":{\"line\":");
  if (rejected > 1) rejected_.insert(rejected - 1);
  const int64_t acked = NumberAfter(line, "{\"acked\":");
  while (acked > 0 && !events_.empty() && events_.front().line_no > 0 &&
         events_.front().line_no <= acked) {
    ++(rejected_.erase(events_.front().line_no) ? progress->rejected
                                                : progress->acked);
    events_.pop_front();
  }
}

std::deque<Unacked> AckWindow::TakeAll() {
  std::deque<Unacked> out;
  out.swap(events_);
  Reset();
  return out;
}

}  // namespace goodput::client
