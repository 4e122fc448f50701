#include "server/fleet_history.h"

#include <algorithm>
#include <iterator>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/event_order.h"
#include "proto/tracker_state.pb.h"

namespace goodput::server {
namespace {

using internal::v1::CapacityTrackerState;
using internal::v1::StoredFleetState;

constexpr int64_t kHourNs = 3'600'000'000'000;
constexpr int64_t kDayNs = 24 * kHourNs;

bool Windowed(const core::Config& config) {
  return config.since_ns != core::Config().since_ns;
}

// A spacing bucket of a record cut at `t`: its 10 minutes if it is less
// than FleetHistory::kFineFor older than `newest_ns`, its hour if less than
// kHourlyFor, else its day (the tier first, so tiers never share one).
std::pair<int, int64_t> Bucket(int64_t t, int64_t newest_ns) {
  const int64_t age = newest_ns - t;
  if (age < FleetHistory::kFineFor) return {0, t / (kHourNs / 6)};
  if (age < FleetHistory::kHourlyFor) return {1, t / kHourNs};
  return {2, t / kDayNs};
}

// The time a record is spaced by: its cut, or else its newest heartbeat.
int64_t RecordTime(const StoredFleetState& r) {
  return r.has_cut_ns() ? r.cut_ns() : std::max<int64_t>(0, r.newest_beat_ns());
}

}  // namespace

FleetHistory::FleetHistory(storage::EventStore* store,
                           const core::Config* config)
    : store_(store), config_(config) {}

std::string FleetHistory::Name(uint64_t through_batch) {
  return absl::StrFormat("%s%020u", kRecordPrefix, through_batch);
}

absl::Status FleetHistory::Load(uint64_t through_batch) {
  through_batch_ = through_batch;
  records_.clear();
  absl::Status s = store_->ScanMeta(
      kRecordPrefix, [&](const std::string&, const std::string& value) {
        StoredFleetState r;
        if (!r.ParseFromString(value) || r.version() != 1) {
          ++stats_.records_skipped;  // torn or of another version
        } else if (r.through_batch() <= through_batch) {
          records_.push_back(std::move(r));
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  std::optional<std::string> raw;
  if (s = store_->ReadMeta(kDeletedMeta, &raw); !s.ok()) return s;
  if (raw && !deleted_.ParseFromString(*raw)) {
    return absl::DataLossError(absl::StrCat(
        "meta/", kDeletedMeta, ": the retention mark does not parse"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, double>> FleetHistory::Capacity(
    int64_t as_of_ns) {
  const int64_t start =
      Windowed(*config_) ? std::min(config_->since_ns, as_of_ns) : as_of_ns;
  absl::StatusOr<Cut> cut = BestCut(*config_, as_of_ns, start);
  if (!cut.ok()) return cut.status();
  return cut->tracker.ChipSeconds(as_of_ns);
}

absl::StatusOr<FleetHistory::Cut> FleetHistory::BestCut(
    const core::Config& config, int64_t as_of_ns, int64_t start_ns) {
  for (auto it = records_.rbegin(); it != records_.rend(); ++it) {
    if (!it->has_cut_ns() || it->cut_ns() > start_ns ||
        it->cut_after_batch() < deleted_through()) {
      continue;
    }
    absl::StatusOr<std::optional<Cut>> cut = CutFrom(&*it, config, as_of_ns);
    if (!cut.ok()) return cut.status();
    if (*cut) {
      stats_.from_record = true;
      if (absl::Status s = StillStored(it->cut_after_batch()); !s.ok()) {
        return s;
      }
      return **std::move(cut);
    }
    ++stats_.records_skipped;  // stale or torn: an older one may fit
  }
  if (deleted_through() > 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "as_of/since: ", core::FormatTimeNanos(start_ns),
        " needs heartbeats that --retention deleted: the capacity is kept "
        "from ",
        core::FormatTimeNanos(deleted_.cut_ns()), " on"));
  }
  absl::StatusOr<std::optional<Cut>> cut = CutFrom(nullptr, config, as_of_ns);
  if (!cut.ok()) return cut.status();
  if (absl::Status s = StillStored(0); !s.ok()) return s;
  return **std::move(cut);  // from nothing: never stale
}

absl::Status FleetHistory::StillStored(uint64_t after_batch) {
  std::optional<std::string> raw;
  if (absl::Status s = store_->ReadMeta(kDeletedMeta, &raw); !s.ok()) return s;
  // The mark is written before any deletion: a scan that missed deleted
  // batches finds it afterwards.
  StoredFleetState mark;
  if (!raw ||
      (mark.ParseFromString(*raw) && mark.through_batch() <= after_batch)) {
    return absl::OkStatus();
  }
  return absl::AbortedError(
      "capacity: --retention deleted heartbeats this report was reading; "
      "ask again");
}

absl::StatusOr<std::optional<FleetHistory::Cut>> FleetHistory::CutFrom(
    const StoredFleetState* record, const core::Config& config,
    int64_t as_of_ns) {
  Cut cut{core::CapacityTracker(&config)};
  std::vector<v1::Event> beats, excluded;
  uint64_t through = 0, after = 0;
  int64_t cut_ns = std::numeric_limits<int64_t>::min();
  if (record != nullptr) {
    CapacityTrackerState saved;
    if (!saved.ParseFromString(record->cut_capacity())) return std::nullopt;
    if (Windowed(config)) saved.clear_closed();  // all before the window
    if (!cut.tracker.RestoreState(saved).ok()) return std::nullopt;
    through = record->through_batch();
    after = record->cut_after_batch();
    cut_ns = record->cut_ns();
    for (const auto& x : record->shared()) excluded.push_back(x.event());
  }
  bool stale = false;
  absl::Status s = store_->ScanFleetUntil(
      after, through_batch_, as_of_ns,
      [&](uint64_t id, std::vector<v1::Event>* events) {
        ++stats_.batches_read;
        for (v1::Event& e : *events) {
          const int64_t t = core::EventTimeNanos(e);
          const bool shared = SharedExclusions::IsShared(e);
          if (t > as_of_ns && cut.first_later == 0) cut.first_later = id;
          if (id <= through && (shared || t <= cut_ns)) continue;  // in it
          stale = stale || (shared ? t < cut_ns : t <= cut_ns);
          if (t <= as_of_ns)
            (shared ? excluded : beats).push_back(std::move(e));
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  if (stale) return std::nullopt;
  ApplyInOrder(excluded, beats, as_of_ns, &cut.tracker);
  return std::optional<Cut>(std::move(cut));
}

void FleetHistory::ApplyInOrder(const std::vector<v1::Event>& excluded,
                                const std::vector<v1::Event>& beats,
                                int64_t as_of_ns,
                                core::CapacityTracker* tracker) {
  // Exclusions first (core::CapacityTracker takes none after a heartbeat
  // past its start); then the heartbeats in apply order.
  for (const v1::Event& e : excluded) {
    if (core::EventTimeNanos(e) <= as_of_ns) {
      SharedExclusions::ExcludeOne(e, tracker);
    }
  }
  std::vector<uint32_t> order(beats.size());
  for (uint32_t i = 0; i < beats.size(); ++i) order[i] = i;
  core::SortForApply(beats, &order);
  for (uint32_t i : order) tracker->Apply(beats[i]);
}

absl::Status FleetHistory::LoadShared(SharedExclusions* out) {
  const StoredFleetState* from = nullptr;
  StoredFleetState live;  // the restart record, if newer
  std::optional<std::string> raw;
  if (absl::Status s = store_->ReadMeta(kRestartMeta, &raw); !s.ok()) {
    return s;
  }
  if (raw && live.ParseFromString(*raw) && live.version() == 1 &&
      live.through_batch() <= through_batch_) {
    from = &live;
  }
  if (!records_.empty() && (from == nullptr || records_.back().through_batch() >
                                                   from->through_batch())) {
    from = &records_.back();
  }
  if (from == nullptr && deleted_through() > 0) {
    return absl::DataLossError(
        "fleet state: no record readable and retention deleted the fleet "
        "events before batch " +
        std::to_string(deleted_through() + 1));
  }
  const uint64_t after = from == nullptr ? 0 : from->through_batch();
  if (from != nullptr) {
    for (const auto& x : from->shared()) out->Add(x.event(), x.batch());
  }
  return store_->ScanFleetUntil(
      after, through_batch_, std::numeric_limits<int64_t>::max(),
      [&](uint64_t id, std::vector<v1::Event>* events) {
        ++stats_.batches_read;
        for (const v1::Event& e : *events) {
          if (SharedExclusions::IsShared(e)) out->Add(e, id);
        }
        return absl::OkStatus();
      });
}

absl::Status FleetHistory::Record(StoredFleetState live) {
  if (absl::Status s = AddCut(&live); !s.ok()) return s;
  absl::Status s =
      store_->WriteMeta(Name(live.through_batch()), live.SerializeAsString());
  if (!s.ok()) return s;
  while (!records_.empty() &&
         records_.back().through_batch() >= live.through_batch()) {
    records_.pop_back();  // rewritten (the same batch) or ahead of it
  }
  records_.push_back(std::move(live));
  std::vector<std::string> dropped = Dropped();
  if (dropped.empty()) return absl::OkStatus();
  std::set<std::string> gone(dropped.begin(), dropped.end());
  records_.erase(std::remove_if(records_.begin(), records_.end(),
                                [&](const StoredFleetState& r) {
                                  return gone.count(Name(r.through_batch()));
                                }),
                 records_.end());
  return store_->DeleteMeta(dropped);
}

absl::Status FleetHistory::AddCut(StoredFleetState* live) {
  if (live->newest_beat_ns() == std::numeric_limits<int64_t>::min()) {
    return absl::OkStatus();  // no heartbeat yet: nothing to cut
  }
  core::Config whole = *config_;  // a cut holds no window
  whole.since_ns = core::Config().since_ns;
  const int64_t cut_ns = live->newest_beat_ns() - storage::kFleetLateNanos;
  absl::StatusOr<Cut> cut = BestCut(whole, cut_ns, cut_ns);
  if (absl::IsFailedPrecondition(cut.status())) {
    return absl::OkStatus();  // retention left none to start from
  }
  if (!cut.ok()) return cut.status();
  CapacityTrackerState saved;
  cut->tracker.SaveState(&saved);
  live->set_cut_ns(cut_ns);
  live->set_cut_after_batch(cut->first_later == 0 ? through_batch_
                                                  : cut->first_later - 1);
  live->set_cut_capacity(saved.SerializeAsString());
  return absl::OkStatus();
}

std::vector<std::string> FleetHistory::Dropped() const {
  std::vector<std::string> out;
  if (records_.size() <= static_cast<size_t>(kKeepNewest)) return out;
  const int64_t newest = RecordTime(records_.back());
  std::optional<std::pair<int, int64_t>> last;
  for (size_t i = 0; i + kKeepNewest < records_.size(); ++i) {
    const std::pair<int, int64_t> b = Bucket(RecordTime(records_[i]), newest);
    if (last == b) out.push_back(Name(records_[i].through_batch()));
    last = b;
  }
  return out;
}

absl::StatusOr<uint64_t> FleetHistory::DeleteBefore(int64_t horizon_ns,
                                                    uint64_t done_through) {
  const auto keep = NewestCutAtOrBefore(horizon_ns);
  const bool further = keep != records_.end() &&
                       keep->cut_after_batch() > deleted_through() &&
                       keep->cut_after_batch() < store_->LastBatchId();
  if (!further && deleted_through() <= done_through) return done_through;
  if (further) {  // the mark first: a deletion cut short after it is redone
    if (absl::Status s = WriteMark(*keep); !s.ok()) return s;
  }
  absl::Status s = store_->DeleteFleetEvents(deleted_through());
  if (s.ok() && keep != records_.end() &&
      keep->cut_after_batch() == deleted_through()) {
    s = DeleteOlderThan(keep);
  }
  if (!s.ok()) return s;
  return deleted_through();
}

std::vector<StoredFleetState>::iterator FleetHistory::NewestCutAtOrBefore(
    int64_t horizon_ns) {
  for (auto r = records_.rbegin(); r != records_.rend(); ++r) {
    if (r->has_cut_ns() && r->cut_ns() <= horizon_ns) {
      return std::prev(r.base());
    }
  }
  return records_.end();
}

absl::Status FleetHistory::WriteMark(const StoredFleetState& record) {
  StoredFleetState mark;
  mark.set_version(1);
  mark.set_through_batch(record.cut_after_batch());
  mark.set_cut_ns(record.cut_ns());
  absl::Status s = store_->WriteMeta(kDeletedMeta, mark.SerializeAsString());
  if (s.ok()) deleted_ = std::move(mark);
  return s;
}

absl::Status FleetHistory::DeleteOlderThan(
    std::vector<StoredFleetState>::iterator keep) {
  std::vector<std::string> older;
  for (auto r = records_.begin(); r != keep; ++r) {
    older.push_back(Name(r->through_batch()));
  }
  records_.erase(records_.begin(), keep);
  return store_->DeleteMeta(older);
}

absl::StatusOr<std::map<std::string, double>> FleetHistory::FullScanCapacity(
    storage::EventStore* store, const core::Config& config,
    uint64_t through_batch, int64_t as_of_ns) {
  std::vector<v1::Event> beats;
  absl::Status s = store->ScanHeartbeats(
      [&](uint64_t batch_id, std::vector<v1::Event>* events) {
        if (batch_id > through_batch) return absl::OkStatus();
        for (v1::Event& e : *events) {
          if (core::EventTimeNanos(e) <= as_of_ns) {
            beats.push_back(std::move(e));
          }
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  std::vector<uint32_t> order(beats.size());
  for (uint32_t i = 0; i < beats.size(); ++i) order[i] = i;
  core::SortForApply(beats, &order);
  core::CapacityTracker capacity(&config);
  // Exclusions first: core::CapacityTracker takes none after a heartbeat
  // past its start, and one known early changes nothing before it.
  for (const v1::Event& e : beats) {
    if (SharedExclusions::IsShared(e)) {
      SharedExclusions::ExcludeOne(e, &capacity);
    }
  }
  for (uint32_t i : order) {
    if (beats[i].has_heartbeat()) capacity.Apply(beats[i]);
  }
  return capacity.ChipSeconds(as_of_ns);
}

}  // namespace goodput::server
