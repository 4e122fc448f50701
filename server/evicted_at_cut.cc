#include "server/evicted_at_cut.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace goodput::server {

void EvictedAtCut::AddHeld(const std::string& job_id) {
  if (any_) held_.push_back(job_id);
}

void EvictedAtCut::AddHeld(const std::vector<core::JobReport>& reports) {
  if (!any_) return;
  held_.reserve(held_.size() + reports.size());
  for (const core::JobReport& r : reports) held_.push_back(r.job_id);
}

absl::StatusOr<std::vector<storage::JobSnapshot>> EvictedAtCut::Read(
    storage::EventStore* store) {
  std::vector<storage::JobSnapshot> out;
  if (!any_) return out;
  if (absl::Status s = store->ReadSnapshots(&out); !s.ok()) return s;
  std::sort(held_.begin(), held_.end());
  auto held = held_.begin();
  auto keep = out.begin();
  for (storage::JobSnapshot& s : out) {
    const std::string& id = s.report.job_id;
    held = std::lower_bound(held, held_.end(), id);
    if (held != held_.end() && *held == id) continue;  // in memory then
    if (!s.events_deleted && s.through_batch > through_batch_) {
      return absl::AbortedError(
          absl::StrCat("job ", id, "'s final snapshot was stored after batch ",
                       through_batch_, ", the report's cut"));
    }
    if (&*keep != &s) *keep = std::move(s);
    ++keep;
  }
  out.erase(keep, out.end());
  return out;
}

}  // namespace goodput::server
