#include "server/shared_exclusions.h"

#include <algorithm>

namespace goodput::server {

int64_t SharedExclusions::UntilNanos(const v1::Event& e) {
  const auto& until = e.exclusion().until();
  return until.seconds() * core::kNanosPerSecond + until.nanos();
}

void SharedExclusions::ExcludeOne(const v1::Event& e,
                                  core::CapacityTracker* capacity) {
  const auto& hosts = e.exclusion().hosts();
  capacity->Exclude(core::EventTimeNanos(e), UntilNanos(e),
                    {hosts.begin(), hosts.end()});
}

void SharedExclusions::ExcludeFrom(core::CapacityTracker* capacity) const {
  for (const Entry& x : entries_) ExcludeOne(x.event, capacity);
}

void SharedExclusions::Add(const v1::Event& e, uint64_t batch) {
  Entry x{core::EventTimeNanos(e), UntilNanos(e), batch, e};
  auto pos = std::upper_bound(
      entries_.begin(), entries_.end(), x.start_ns,
      [](int64_t t, const Entry& y) { return t < y.start_ns; });
  entries_.insert(pos, std::move(x));
}

bool SharedExclusions::MayCover(const v1::Event& e,
                                const std::set<std::string>* hosts) {
  if (hosts == nullptr) return true;
  if (e.exclusion().scope() != v1::Exclusion::HOSTS) return true;
  for (const std::string& host : e.exclusion().hosts()) {
    if (hosts->count(host) > 0) return true;
  }
  return false;
}

bool SharedExclusions::StaleAfter(uint64_t through_batch, int64_t applied_ns,
                                  const std::set<std::string>* hosts) const {
  for (const Entry& x : entries_) {
    if (x.start_ns >= applied_ns) break;
    if (x.batch > through_batch && MayCover(x.event, hosts)) return true;
  }
  return false;
}

std::vector<SharedExclusions::Entry>::const_iterator
SharedExclusions::FirstFrom(int64_t t) const {
  return std::lower_bound(
      entries_.begin(), entries_.end(), t,
      [](const Entry& x, int64_t u) { return x.start_ns < u; });
}

bool SharedExclusions::AnyBetween(int64_t from_ns, int64_t to_ns) const {
  auto it = FirstFrom(from_ns);
  return it != entries_.end() && it->start_ns <= to_ns;
}

std::vector<const v1::Event*> SharedExclusions::Between(int64_t from_ns,
                                                        int64_t to_ns) const {
  std::vector<const v1::Event*> out;
  for (auto it = FirstFrom(from_ns);
       it != entries_.end() && it->start_ns <= to_ns; ++it) {
    out.push_back(&it->event);
  }
  return out;
}

void SharedExclusions::EventsIn(int64_t from_ns, int64_t to_ns,
                                uint64_t through_batch,
                                std::vector<v1::Event>* out) const {
  for (const Entry& x : entries_) {
    if (x.start_ns > to_ns) break;
    if (x.start_ns >= from_ns && x.batch <= through_batch) {
      out->push_back(x.event);
    }
  }
}

// As core::FleetTracker at a job's first event: the exclusions applied
// before it (they start before it: exclusions sort after the job events of
// their instant) that last past it, HOSTS ones if its host is theirs.
std::vector<const SharedExclusions::Entry*> SharedExclusions::Around(
    const v1::Event& first, uint64_t through_batch) const {
  std::vector<const Entry*> out;
  const int64_t t = core::EventTimeNanos(first);
  const std::set<std::string> host = {first.host()};
  for (const Entry& x : entries_) {
    if (x.start_ns >= t) break;
    if (x.until_ns > t && x.batch <= through_batch &&
        MayCover(x.event, &host)) {
      out.push_back(&x);
    }
  }
  return out;
}

}  // namespace goodput::server
