#include "importer/import_mlgm.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace goodput::importer {

using Json = nlohmann::json;

namespace {

constexpr int64_t kNanos = 1'000'000'000;

// At one instant a job start comes first and a job end last; other marks
// keep their input order (the order they were logged in).
int TieRank(const MlgmMark& mark) {
  if (mark.kind == MlgmMark::Kind::kJobStart) return 0;
  return mark.kind == MlgmMark::Kind::kJobEnd ? 2 : 1;
}

}  // namespace

MlgmConverter::MlgmConverter(MlgmOptions options)
    : options_(std::move(options)) {}

void MlgmConverter::AddLine(absl::string_view line, std::string where) {
  if (absl::StripAsciiWhitespace(line).empty()) return;
  Json entry = Json::parse(line.begin(), line.end(), nullptr,
                           /*allow_exceptions=*/false);
  if (entry.is_discarded()) {
    AddBadEntry(std::move(where), "entry: not a JSON object (invalid JSON)");
    return;
  }
  AddEntry(entry, std::move(where));
}

void MlgmConverter::AddEntry(const Json& entry, std::string where) {
  int64_t index = wheres_.size();
  wheres_.push_back(std::move(where));
  absl::StatusOr<std::vector<MlgmMark>> marks = ParseMlgmEntry(entry);
  if (!marks.ok()) {
    AddError(index, marks.status().message());
    return;
  }
  if (!options_.job_id && marks->front().job_name.empty()) {
    AddError(index, "job_name: missing (pass --job_id=ID to name the job)");
    return;
  }
  for (MlgmMark& mark : *marks) AddMark(std::move(mark), index);
}

void MlgmConverter::AddBadEntry(std::string where, absl::string_view reason) {
  wheres_.push_back(std::move(where));
  AddError(wheres_.size() - 1, reason);
}

void MlgmConverter::AddMark(MlgmMark mark, int64_t entry) {
  if (!mark.job_name.empty()) job_names_.insert(mark.job_name);
  std::string job = options_.job_id ? *options_.job_id : mark.job_name;
  auto [it, added] = marks_.try_emplace(job);
  if (added) job_order_.push_back(job);
  it->second.push_back({std::move(mark), entry});
}

void MlgmConverter::AddError(int64_t entry, absl::string_view reason) {
  errors_.emplace_back(entry, std::string(reason));
}

absl::StatusOr<MlgmResult> MlgmConverter::Finish() {
  if (options_.job_id && job_names_.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--job_id: the entries name ", job_names_.size(), " jobs (",
        absl::StrJoin(job_names_, ", "),
        "); import one job at a time, or drop --job_id to keep their names"));
  }
  MlgmResult result;
  for (const std::string& job : job_order_) {
    std::vector<v1::Event> events = ConvertJob(job, marks_[job]);
    std::move(events.begin(), events.end(), std::back_inserter(result.events));
  }
  result.errors = SortedErrors();
  result.entries = wheres_.size();
  result.bad = result.errors.size();
  result.duplicates = duplicates_;
  result.slice_allocations = slice_allocations_;
  result.dropped = dropped_;
  return result;
}

std::vector<v1::Event> MlgmConverter::ConvertJob(const std::string& job,
                                                 std::vector<Pending>& marks) {
  std::stable_sort(marks.begin(), marks.end(),
                   [](const Pending& a, const Pending& b) {
                     return std::make_pair(a.mark.time_ns, TieRank(a.mark)) <
                            std::make_pair(b.mark.time_ns, TieRank(b.mark));
                   });
  size_t last_end = marks.size();
  for (size_t i = 0; i < marks.size(); ++i) {
    if (marks[i].mark.kind == MlgmMark::Kind::kJobEnd && !Repeats(marks, i)) {
      last_end = i;
    }
  }
  MlgmJobConverter converter(job, &options_, MinChips(marks));
  for (size_t i = 0; i < marks.size(); ++i) {
    if (Repeats(marks, i)) {
      ++duplicates_;
      continue;
    }
    absl::Status status = converter.Apply(marks[i].mark, i == last_end);
    if (!status.ok()) AddError(marks[i].entry, status.message());
  }
  slice_allocations_ += converter.slice_allocations();
  for (const auto& [reason, n] : converter.dropped()) dropped_[reason] += n;
  return WithExclusions(job, converter.TakeEvents());
}

// --min_chips, else one slice of the job's first slice-count record (the
// least an elastic job of the library steps with) when it divides --chips.
int64_t MlgmConverter::MinChips(const std::vector<Pending>& marks) const {
  if (options_.chips <= 0 || options_.min_chips > 0) return options_.min_chips;
  for (const Pending& p : marks) {
    if (p.mark.kind != MlgmMark::Kind::kSlices) continue;
    const int64_t total = p.mark.total_slices;
    return options_.chips % total == 0 ? options_.chips / total : 0;
  }
  return 0;
}

// --exclude: one JOB exclusion per interval, in time order with the rest
// (after the events at its instant).
std::vector<v1::Event> MlgmConverter::WithExclusions(
    const std::string& job, std::vector<v1::Event> events) const {
  for (const auto& [start, end] : options_.exclusions) {
    v1::Event& e = events.emplace_back();
    e.mutable_time()->set_seconds(start / kNanos);
    e.mutable_time()->set_nanos(static_cast<int32_t>(start % kNanos));
    e.set_job_id(job);
    v1::Exclusion* x = e.mutable_exclusion();
    x->mutable_until()->set_seconds(end / kNanos);
    x->mutable_until()->set_nanos(static_cast<int32_t>(end % kNanos));
    x->set_reason("import-mlgm --exclude");
    x->set_scope(v1::Exclusion::JOB);
  }
  std::stable_sort(
      events.begin(), events.end(), [](const v1::Event& a, const v1::Event& b) {
        return std::make_pair(a.time().seconds(), a.time().nanos()) <
               std::make_pair(b.time().seconds(), b.time().nanos());
      });
  return events;
}

bool MlgmConverter::Repeats(const std::vector<Pending>& marks, size_t i) {
  const MlgmMark& m = marks[i].mark;
  for (size_t j = i; j > 0 && marks[j - 1].mark.time_ns == m.time_ns; --j) {
    const MlgmMark& o = marks[j - 1].mark;
    if (o.kind == m.kind && o.span == m.span && o.name == m.name &&
        o.step == m.step && o.total_slices == m.total_slices &&
        o.available_slices == m.available_slices) {
      return true;
    }
  }
  return false;
}

// One error per entry (its first), in input order.
std::vector<std::string> MlgmConverter::SortedErrors() {
  std::stable_sort(
      errors_.begin(), errors_.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < errors_.size(); ++i) {
    if (i > 0 && errors_[i].first == errors_[i - 1].first) continue;
    out.push_back(
        absl::StrCat(wheres_[errors_[i].first], ": ", errors_[i].second));
  }
  return out;
}

}  // namespace goodput::importer
