#include "server/store_replay.h"

#include <limits>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/event_order.h"
#include "core/fleet_report.h"
#include "core/job_tracker.h"
#include "server/job_state_fit.h"
#include "storage/read_job_reader.h"

namespace goodput::server {

StoreReplay::StoreReplay(storage::EventStore* store, core::Config config,
                         uint64_t through_batch,
                         std::function<bool()> cancelled)
    : store_(store),
      config_(std::move(config)),
      through_batch_(through_batch),
      cancelled_(std::move(cancelled)),
      history_(store, &config_) {}

bool StoreReplay::windowed() const {
  return config_.since_ns != core::Config().since_ns;
}

absl::Status StoreReplay::LoadSnapshots() {
  if (snapshots_loaded_) return absl::OkStatus();
  std::vector<storage::JobSnapshot> all;
  if (absl::Status s = store_->ReadSnapshots(&all); !s.ok()) return s;
  for (storage::JobSnapshot& s : all) {
    std::string id = s.report.job_id;
    snapshots_.emplace(std::move(id), std::move(s));
  }
  snapshots_loaded_ = true;
  return LoadShared();
}

absl::Status StoreReplay::LoadShared() {
  if (absl::Status s = history_.Load(through_batch_); !s.ok()) return s;
  return history_.LoadShared(&shared_);
}

absl::StatusOr<core::FleetReport> StoreReplay::Report(int64_t as_of_ns) {
  if (absl::Status s = LoadSnapshots(); !s.ok()) return s;
  std::vector<core::JobReport> jobs;
  absl::Status s =
      store_->ScanAllJobs([&](const std::string& job_id,
                              std::vector<internal::v1::StoredJobState>* states,
                              storage::JobEventsReader* events) {
        if (cancelled_ && cancelled_()) {
          return absl::CancelledError("report: the request was cancelled");
        }
        auto it = snapshots_.find(job_id);
        if (it != snapshots_.end() && it->second.events_deleted) {
          return absl::OkStatus();  // retention is deleting it: see below
        }
        absl::StatusOr<std::optional<core::JobReport>> job =
            JobFrom(job_id, *states, events, as_of_ns);
        if (!job.ok()) return job.status();
        if (*job) jobs.push_back(**std::move(job));
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  for (const auto& [job_id, snapshot] : snapshots_) {
    if (!snapshot.events_deleted) continue;
    absl::StatusOr<std::optional<core::JobReport>> job =
        Deleted(snapshot, as_of_ns);
    if (!job.ok()) return job.status();
    if (*job) jobs.push_back(**std::move(job));
  }
  absl::StatusOr<std::map<std::string, double>> capacity = Capacity(as_of_ns);
  if (!capacity.ok()) return capacity.status();
  stats_.jobs += static_cast<int64_t>(jobs.size());
  return core::BuildFleetReport(config_, as_of_ns, std::move(jobs),
                                *std::move(capacity));
}

absl::StatusOr<std::optional<core::JobReport>> StoreReplay::Job(
    const std::string& job_id, int64_t as_of_ns) {
  if (absl::Status s = LoadSnapshots(); !s.ok()) return s;
  std::vector<internal::v1::StoredJobState> states;
  int unreadable = 0;
  if (absl::Status s = store_->ReadJobStates(job_id, &states, &unreadable);
      !s.ok()) {
    return s;
  }
  storage::ReadJobReader events(store_, job_id);
  return JobFrom(job_id, states, &events, as_of_ns);
}

absl::StatusOr<std::optional<core::JobReport>> StoreReplay::JobFrom(
    const std::string& job_id,
    const std::vector<internal::v1::StoredJobState>& states,
    storage::JobEventsReader* events, int64_t as_of_ns) {
  if (std::optional<std::optional<core::JobReport>> r =
          FromSnapshot(job_id, events, as_of_ns)) {
    ++stats_.from_snapshot;
    return *r;
  }
  auto it = snapshots_.find(job_id);
  if (it != snapshots_.end() &&
      (it->second.events_deleted || it->second.imported)) {
    return Deleted(it->second, as_of_ns);
  }
  return Replay(job_id, states, events, as_of_ns);
}

std::optional<std::optional<core::JobReport>> StoreReplay::FromSnapshot(
    const std::string& job_id, storage::JobEventsReader* events,
    int64_t as_of_ns) {
  auto it = snapshots_.find(job_id);
  if (it == snapshots_.end()) return std::nullopt;
  const storage::JobSnapshot& s = it->second;
  if (s.events_deleted || as_of_ns < s.ended_ns) return std::nullopt;
  const bool cut = windowed() && config_.since_ns > s.first_event_ns;
  const bool before = windowed() && config_.since_ns >= s.ended_ns;
  if (cut && !before) return std::nullopt;  // the window cuts its life
  std::vector<v1::Event> tail;  // events stored after it make it stale
  if (!events->Read(s.through_batch, through_batch_, &tail).ok() ||
      !tail.empty() ||
      shared_.StaleAfter(s.through_batch, s.ended_ns, /*hosts=*/nullptr)) {
    return std::nullopt;
  }
  if (before) return std::optional<core::JobReport>();  // ended before it
  return std::optional<core::JobReport>(s.report);
}

absl::StatusOr<std::optional<core::JobReport>> StoreReplay::Replay(
    const std::string& job_id,
    const std::vector<internal::v1::StoredJobState>& states,
    storage::JobEventsReader* reader, int64_t as_of_ns) {
  if (absl::StatusOr<bool> begun = BegunBy(states, reader, as_of_ns);
      !begun.ok() || !*begun) {
    if (!begun.ok()) return begun.status();
    return std::nullopt;  // its first event is after the as-of
  }
  // A state fits the question if it was recorded with nothing applied
  // after the window's start (or the as-of).
  const int64_t start = windowed() ? config_.since_ns : as_of_ns;
  if (absl::Status s = BeforeImport(job_id, states, start); !s.ok()) return s;
  std::optional<core::JobTracker> tracker;
  std::vector<v1::Event> events;
  std::set<std::string> hosts;  // of the applied events (HOSTS exclusions)
  int64_t shared_from = std::numeric_limits<int64_t>::min();
  for (auto it = states.rbegin(); it != states.rend() && !tracker; ++it) {
    if (it->through_batch() > through_batch_ ||
        (it->has_last_applied_ns() && it->last_applied_ns() > start)) {
      continue;
    }
    events.clear();
    // Batches of only later events change neither the fit (they sort after
    // the state's last applied event) nor the answer.
    absl::Status s = reader->ReadUntil(it->through_batch(), through_batch_,
                                       as_of_ns, &events);
    if (!s.ok()) return s;
    hosts = {it->hosts().begin(), it->hosts().end()};
    if (!StateFits(*it, events) || (!it->hosts_kept() && !shared_.empty()) ||
        (it->has_last_applied_ns() &&
         shared_.StaleAfter(it->through_batch(), it->last_applied_ns(),
                            &hosts))) {
      continue;
    }
    absl::StatusOr<core::JobTracker> loaded = TrackerOfState(*it, &config_);
    if (!loaded.ok()) continue;
    tracker.emplace(*std::move(loaded));
    if (it->has_last_applied_ns()) shared_from = it->last_applied_ns();
    events.insert(events.begin(), it->buffer().begin(), it->buffer().end());
    ++stats_.from_state;
  }
  if (!tracker) {
    events.clear();
    hosts.clear();
    absl::Status s = reader->ReadUntil(0, through_batch_, as_of_ns, &events);
    if (!s.ok()) return s;
  }
  stats_.events_read += static_cast<int64_t>(events.size());
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (core::EventTimeNanos(events[i]) <= as_of_ns) order.push_back(i);
  }
  if (!tracker && order.empty()) return std::nullopt;  // not begun
  if (!tracker) tracker.emplace(job_id, &config_);
  const size_t own = events.size();
  shared_.EventsIn(shared_from, as_of_ns, through_batch_, &events);
  for (size_t i = own; i < events.size(); ++i) {
    order.push_back(static_cast<uint32_t>(i));
  }
  core::SortForApply(events, &order);
  for (uint32_t i : order) {
    (void)shared_.Apply(events[i], &hosts, &*tracker, through_batch_);
  }
  // An exclusion alone makes no job (docs/semantics.md, "Exclusions").
  if (tracker->cursor_ns() == 0) return std::nullopt;  // nothing else
  return tracker->Report(as_of_ns);
}

absl::StatusOr<bool> StoreReplay::BegunBy(
    const std::vector<internal::v1::StoredJobState>& states,
    storage::JobEventsReader* reader, int64_t as_of_ns) {
  auto newest = states.rbegin();
  while (newest != states.rend() && newest->through_batch() > through_batch_) {
    ++newest;
  }
  if (newest == states.rend()) return true;  // the replay finds out
  if (newest->first_ns() <= as_of_ns) return true;
  // The record's first event is after the as-of; an event stored after it
  // could still be earlier.
  std::vector<v1::Event> tail;
  absl::Status s = reader->ReadUntil(newest->through_batch(), through_batch_,
                                     as_of_ns, &tail);
  if (!s.ok()) return s;
  for (const v1::Event& e : tail) {
    if (core::EventTimeNanos(e) <= as_of_ns) return true;
  }
  return false;
}

absl::StatusOr<std::optional<core::JobReport>> StoreReplay::Deleted(
    const storage::JobSnapshot& d, int64_t as_of_ns) const {
  if (d.first_event_ns > as_of_ns) return std::nullopt;  // not begun
  if (windowed() && config_.since_ns >= d.ended_ns) return std::nullopt;
  if (d.ended_ns <= as_of_ns && config_.since_ns <= d.first_event_ns) {
    return d.report;  // the whole job: its final state
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "as_of/since: job \"", d.report.job_id, "\" ran from ",
      core::FormatTimeNanos(d.first_event_ns), " to ",
      core::FormatTimeNanos(d.ended_ns),
      d.imported ? " and this instance took it over from a partition snapshot "
                   "as its final report, without its raw events"
                 : " and its raw events were deleted by --retention",
      "; a report that cuts it (as_of before its end, or since inside it) "
      "cannot be computed"));
}

absl::Status StoreReplay::BeforeImport(
    const std::string& job_id,
    const std::vector<internal::v1::StoredJobState>& states,
    int64_t start_ns) const {
  if (states.empty() || !states.front().imported() ||
      !states.front().has_last_applied_ns() ||
      start_ns >= states.front().last_applied_ns()) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "as_of/since: job \"", job_id,
      "\" was taken over by this instance from a partition snapshot whose "
      "state of it runs to ",
      core::FormatTimeNanos(states.front().last_applied_ns()),
      "; its raw events before that are not here, so a report as of or "
      "since an earlier time cannot be computed"));
}

absl::StatusOr<std::map<std::string, double>> StoreReplay::Capacity(
    int64_t as_of_ns) {
  return history_.Capacity(as_of_ns);
}

}  // namespace goodput::server
