#include "core/sliding_window.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace goodput::core {

void WindowAmounts::Add(const WindowAmounts& o) {
  total += o.total;
  unallocated += o.unallocated;
  productive += o.productive;
  ideal += o.ideal;
  costed += o.costed;
  capacity += o.capacity;
  elastic_held += o.elastic_held;
  elastic_requested += o.elastic_requested;
}

std::optional<double> WindowAmounts::SliceEfficiency() const {
  if (elastic_requested <= 0) return std::nullopt;
  return std::min(1.0, elastic_held / elastic_requested);
}

TotalsRatios WindowAmounts::Ratios(bool with_capacity) const {
  Totals t;
  t.total_chip_seconds = total;
  t.chip_seconds[Index(Category::kQueued)] = unallocated;
  t.chip_seconds[Index(Category::kProductive)] = productive;
  t.ideal_chip_seconds = ideal;
  t.costed_productive_chip_seconds = costed;
  if (with_capacity) t.capacity_chip_seconds = capacity;
  return ComputeRatios(t);
}

SlidingWindow::SlidingWindow(int64_t window_ns, int buckets)
    : bucket_ns_(std::max<int64_t>(1, window_ns / std::max(1, buckets))),
      n_(std::max(1, buckets)) {}

int64_t SlidingWindow::BucketOf(int64_t time_ns) const {
  int64_t q = time_ns / bucket_ns_;
  return (time_ns % bucket_ns_ < 0) ? q - 1 : q;  // floor
}

void SlidingWindow::Add(int64_t time_ns, const WindowAmounts& amounts) {
  const int64_t b = BucketOf(time_ns);
  if (!buckets_.empty() && b <= buckets_.back().first - n_) {
    ++dropped_;  // older than the longest span still kept
    return;
  }
  auto it = std::lower_bound(
      buckets_.begin(), buckets_.end(), b,
      [](const auto& bucket, int64_t key) { return bucket.first < key; });
  if (it == buckets_.end() || it->first != b) {
    it = buckets_.insert(it, {b, WindowAmounts{}});
  }
  it->second.Add(amounts);
  while (buckets_.front().first <= buckets_.back().first - n_) {
    buckets_.pop_front();
  }
}

WindowAmounts SlidingWindow::Sum(int64_t now_ns) const {
  const int64_t last = BucketOf(now_ns);
  WindowAmounts sum;
  for (const auto& [b, amounts] : buckets_) {
    if (b > last - n_ && b <= last) sum.Add(amounts);
  }
  return sum;
}

void SlidingWindow::SaveState(internal::v1::SlidingWindowState* state) const {
  state->Clear();
  state->set_bucket_ns(bucket_ns_);
  state->set_window_buckets(n_);
  state->set_dropped(dropped_);
  for (const auto& [index, a] : buckets_) {
    internal::v1::SlidingWindowState::Bucket* b = state->add_bucket();
    b->set_index(index);
    b->set_total(a.total);
    b->set_unallocated(a.unallocated);
    b->set_productive(a.productive);
    b->set_ideal(a.ideal);
    b->set_costed(a.costed);
    b->set_capacity(a.capacity);
    b->set_elastic_held(a.elastic_held);
    b->set_elastic_requested(a.elastic_requested);
  }
}

absl::Status SlidingWindow::LoadState(
    const internal::v1::SlidingWindowState& state) {
  if (state.bucket_ns() != bucket_ns_ || state.window_buckets() != n_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bucket_ns, window_buckets: saved ", state.bucket_ns(), " x ",
        state.window_buckets(), ", this window has ", bucket_ns_, " x ", n_));
  }
  std::deque<std::pair<int64_t, WindowAmounts>> buckets;
  for (int i = 0; i < state.bucket_size(); ++i) {
    const auto& b = state.bucket(i);
    if (!buckets.empty() && (b.index() <= buckets.back().first ||
                             buckets.front().first <= b.index() - n_)) {
      return absl::DataLossError(absl::StrCat(
          "bucket[", i, "].index: ", b.index(), " out of order or range"));
    }
    buckets.emplace_back(
        b.index(), WindowAmounts{b.total(), b.unallocated(), b.productive(),
                                 b.ideal(), b.costed(), b.capacity(),
                                 b.elastic_held(), b.elastic_requested()});
  }
  buckets_ = std::move(buckets);
  dropped_ = state.dropped();
  return absl::OkStatus();
}

int64_t SlidingWindow::SpanStart(int64_t now_ns) const {
  return (BucketOf(now_ns) - n_ + 1) * bucket_ns_;
}

}  // namespace goodput::core
