#include "cluster/lease_keeper.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cluster/member_directory.h"
#include "cluster/partition_assigner.h"

namespace goodput::cluster {
namespace {

constexpr absl::string_view kMemberPrefix = "member.";
constexpr absl::string_view kLeasePrefix = "lease.";

bool IsKeyChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' ||
         c == '_';
}

}  // namespace

std::string LeaseKey(int32_t partition) {
  return absl::StrCat(kLeasePrefix, partition);
}

std::string MemberKey(absl::string_view id) {
  return absl::StrCat(kMemberPrefix, id);
}

LeaseKeeper::LeaseKeeper(LeaseStore* store, Clock* clock,
                         LeaseKeeperOptions options)
    : store_(store),
      clock_(clock),
      options_(std::move(options)),
      member_key_(MemberKey(options_.self)) {}

absl::Status LeaseKeeper::Validate(const LeaseKeeperOptions& o) {
  if (o.self.empty() || !std::all_of(o.self.begin(), o.self.end(), IsKeyChar)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--cluster_id='", o.self, "': want letters, digits, '-' or '_'"));
  }
  if (o.partitions <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--cluster_partitions=", o.partitions, ": want > 0"));
  }
  if (o.ttl_ns <= 0) {
    return absl::InvalidArgumentError("--cluster_lease_ttl: want > 0");
  }
  return absl::OkStatus();
}

LeaseChanges LeaseKeeper::Tick() {
  LeaseChanges changes;
  ReleaseStale(&changes);
  Note(RenewMembership(), &changes);
  if (!changes.status.ok()) return changes;
  Note(ReadMembers(), &changes);
  if (!changes.status.ok()) return changes;
  const std::vector<int32_t> mine =
      PartitionsOf(options_.self, options_.partitions, members_);
  std::vector<int32_t> give_back;
  for (const auto& [p, lease] : held_) {
    if (!std::binary_search(mine.begin(), mine.end(), p))
      give_back.push_back(p);
  }
  for (int32_t p : give_back) Release(p, &changes);
  for (int32_t p : mine) {
    // With the store gone every further call would wait its whole timeout
    // too: the round ends, so the caller notices (and says) it in time.
    if (Unreachable(changes.status)) break;
    Keep(p, &changes);
  }
  CountUnowned();
  return changes;
}

void LeaseKeeper::CountUnowned() {
  unowned_ = 0;
  for (int32_t p = 0; p < options_.partitions; ++p) {
    if (leased_.count(p) == 0 && !Holds(p)) ++unowned_;
  }
}

absl::Status LeaseKeeper::Leave() {
  LeaseChanges changes;
  std::vector<int32_t> all = Held();
  for (int32_t p : all) Release(p, &changes);
  held_.clear();  // overdue ones expire by themselves: see Holds()
  Note(store_->Delete(member_key_), &changes);
  member_revision_.reset();
  return changes.status;
}

bool LeaseKeeper::Holds(int32_t partition) const {
  auto it = held_.find(partition);
  return it != held_.end() &&
         clock_->NowNanos() < it->second.renewed_ns + options_.ttl_ns / 2;
}

std::vector<int32_t> LeaseKeeper::Held() const {
  std::vector<int32_t> out;
  for (const auto& [p, lease] : held_) {
    if (Holds(p)) out.push_back(p);
  }
  return out;
}

absl::Status LeaseKeeper::RenewMembership() {
  const std::string value = MemberValue(options_.self, options_.advertise);
  absl::StatusOr<uint64_t> rev =
      member_revision_.has_value()
          ? store_->Update(member_key_, value, *member_revision_)
          : absl::StatusOr<uint64_t>(absl::NotFoundError("first round"));
  if (!rev.ok() && !absl::IsUnavailable(rev.status())) {
    rev = store_->Create(member_key_, value);
    if (absl::IsAlreadyExists(rev.status())) {
      return absl::AlreadyExistsError(absl::StrCat(
          "--cluster_id=", options_.self,
          ": another live instance uses this id (two goodputd with one "
          "id would both take its partitions)"));
    }
  }
  if (!rev.ok()) return rev.status();
  member_revision_ = *rev;
  return absl::OkStatus();
}

absl::Status LeaseKeeper::ReadMembers() {
  absl::StatusOr<std::vector<std::string>> keys = store_->Keys();
  if (!keys.ok()) return keys.status();
  members_.clear();
  leased_.clear();
  for (const std::string& key : *keys) {
    absl::string_view rest = key;
    int32_t partition = 0;
    if (absl::StartsWith(key, kMemberPrefix)) {
      members_.push_back(key.substr(kMemberPrefix.size()));
    } else if (absl::ConsumePrefix(&rest, kLeasePrefix) &&
               absl::SimpleAtoi(rest, &partition)) {
      leased_.insert(partition);
    }
  }
  std::sort(members_.begin(), members_.end());
  return absl::OkStatus();
}

void LeaseKeeper::ReleaseStale(LeaseChanges* changes) {
  for (auto it = held_.begin(); it != held_.end();) {
    if (Holds(it->first)) {
      ++it;
      continue;
    }
    changes->released.push_back(it->first);
    it = held_.erase(it);
  }
}

void LeaseKeeper::Release(int32_t partition, LeaseChanges* changes) {
  // Stop holding before the key goes: the caller stops applying first.
  held_.erase(partition);
  changes->released.push_back(partition);
  // Unreachable: the key is left to expire (its TTL) rather than waiting.
  if (Unreachable(changes->status)) return;
  Note(store_->Delete(LeaseKey(partition)), changes);
}

void LeaseKeeper::Keep(int32_t partition, LeaseChanges* changes) {
  const int64_t now = clock_->NowNanos();
  auto it = held_.find(partition);
  absl::StatusOr<uint64_t> rev =
      it != held_.end() ? store_->Update(LeaseKey(partition), options_.self,
                                         it->second.revision)
                        : store_->Create(LeaseKey(partition), options_.self);
  if (rev.ok()) {
    Take(partition, *rev, now, changes);
    return;
  }
  if (absl::IsAlreadyExists(rev.status())) {
    Adopt(partition, changes);  // ours from before a missed renewal?
    return;
  }
  if (it != held_.end() && !absl::IsUnavailable(rev.status())) {
    held_.erase(it);  // someone else wrote it: ours expired
    changes->released.push_back(partition);
  }
  Note(rev.status(), changes);
}

void LeaseKeeper::Adopt(int32_t partition, LeaseChanges* changes) {
  // Another holder's lease stays until it is given back or expires. A
  // lease this instance wrote before it stopped holding it (a renewal
  // overdue past ttl/2) is taken back by compare-and-set on its revision.
  absl::StatusOr<LeaseEntry> e = store_->Get(LeaseKey(partition));
  if (!e.ok() || e->value != options_.self) return;
  const int64_t now = clock_->NowNanos();
  absl::StatusOr<uint64_t> rev =
      store_->Update(LeaseKey(partition), options_.self, e->revision);
  if (rev.ok()) Take(partition, *rev, now, changes);
}

void LeaseKeeper::Take(int32_t partition, uint64_t revision, int64_t now_ns,
                       LeaseChanges* changes) {
  auto [it, is_new] =
      held_.insert_or_assign(partition, Lease{revision, now_ns});
  if (is_new) changes->acquired.push_back(partition);
}

bool LeaseKeeper::Unreachable(const absl::Status& s) {
  return absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s);
}

void LeaseKeeper::Note(const absl::Status& s, LeaseChanges* changes) {
  if (changes->status.ok() && !s.ok()) changes->status = s;
}

}  // namespace goodput::cluster
