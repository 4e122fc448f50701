#include "server/fan_out.h"

#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cluster/partition_assigner.h"

namespace goodput::server {
namespace {

// "member ID (ADDRESS)".
std::string Name(const cluster::Member& m) {
  return absl::StrCat("cluster member ", m.id, " (", m.address, ")");
}

// The partitions in [0, answered.size()) answered `times` times (or more).
std::vector<int32_t> Answered(const std::vector<int>& answered, int times) {
  std::vector<int32_t> out;
  for (size_t p = 0; p < answered.size(); ++p) {
    if (times == 0 ? answered[p] == 0 : answered[p] >= times)
      out.push_back(static_cast<int32_t>(p));
  }
  return out;
}

}  // namespace

std::string FanOut::FormatPartitions(const std::vector<int32_t>& partitions) {
  return absl::StrJoin(partitions, ",");
}

absl::StatusOr<std::vector<int32_t>> FanOut::ParsePartitions(
    absl::string_view text) {
  std::vector<int32_t> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    int32_t p = 0;
    if (!absl::SimpleAtoi(part, &p) || p < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("goodput-partitions: want P,P,... got \"", text, "\""));
    }
    out.push_back(p);
  }
  return out;
}

absl::StatusOr<std::vector<cluster::Member>> FanOut::Members() const {
  absl::StatusOr<std::vector<cluster::Member>> members = directory_->Members();
  if (!members.ok()) {
    return absl::UnavailableError(absl::StrCat(
        "cluster: cannot list the members: ", members.status().message()));
  }
  for (const cluster::Member& m : *members) {
    if (m.address.empty()) {
      return absl::UnavailableError(absl::StrCat(
          "cluster member ", m.id,
          " advertises no address (a goodputd without --cluster_advertise, "
          "an older version?): the fleet's answer would miss its partitions"));
    }
  }
  return members;
}

absl::Status FanOut::AskAll(
    const std::vector<cluster::Member>& members,
    const std::function<absl::StatusOr<std::vector<int32_t>>(size_t i)>& ask)
    const {
  absl::Status s = AskOnce(members, ask);
  if (absl::IsAborted(s)) s = AskOnce(members, ask);  // a move: once more
  return s;
}

absl::Status FanOut::AskOnce(
    const std::vector<cluster::Member>& members,
    const std::function<absl::StatusOr<std::vector<int32_t>>(size_t i)>& ask)
    const {
  std::vector<absl::StatusOr<std::vector<int32_t>>> parts(
      members.size(), absl::UnknownError("not asked"));
  std::vector<std::thread> threads;
  for (size_t i = 1; i < members.size(); ++i) {
    threads.emplace_back([&, i] { parts[i] = ask(i); });
  }
  if (!members.empty()) parts[0] = ask(0);
  for (std::thread& t : threads) t.join();
  std::vector<int> answered(partitions_, 0);
  for (size_t i = 0; i < members.size(); ++i) {
    if (!parts[i].ok()) {
      return absl::Status(
          parts[i].status().code(),
          absl::StrCat(Name(members[i]),
                       " did not answer: ", parts[i].status().message(),
                       "; the fleet's answer would miss its partitions"));
    }
    for (int32_t p : *parts[i]) {
      if (p >= 0 && p < partitions_) ++answered[p];
    }
  }
  return CheckCoverage(answered);
}

absl::Status FanOut::CheckCoverage(const std::vector<int>& answered) const {
  if (std::vector<int32_t> twice = Answered(answered, 2); !twice.empty()) {
    return absl::AbortedError(absl::StrCat(
        "cluster: partitions ", FormatPartitions(twice),
        " answered by two members (they moved during the query); retry"));
  }
  if (std::vector<int32_t> none = Answered(answered, 0); !none.empty()) {
    return absl::UnavailableError(absl::StrCat(
        "cluster: no member answers for partitions ", FormatPartitions(none),
        " (of ", partitions_,
        "): they have no owner now (a member died and its leases have not "
        "expired yet, or they are moving; goodput_cluster_partitions_unowned)"
        "; the answer would miss their jobs, retry after --cluster_lease_ttl"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::pair<cluster::Member, bool>> FanOut::OwnerOfJob(
    const std::string& job_id) const {
  const int32_t p = cluster::PartitionOfJob(job_id, partitions_);
  absl::StatusOr<std::string> holder = directory_->HolderOf(p);
  if (!holder.ok()) {
    return absl::UnavailableError(
        absl::StrCat("cluster: job ", job_id, "'s partition ", p,
                     " has no owner now (retry after --cluster_lease_ttl): ",
                     holder.status().message()));
  }
  absl::StatusOr<std::vector<cluster::Member>> members = directory_->Members();
  if (!members.ok()) return members.status();
  for (cluster::Member& m : *members) {
    if (m.id != *holder) continue;
    if (m.address.empty()) break;
    const bool self = m.id == self_();
    return std::make_pair(std::move(m), self);
  }
  return absl::UnavailableError(absl::StrCat(
      "cluster: job ", job_id, "'s partition ", p, " is held by ", *holder,
      ", which is not a live member with an address now; retry"));
}

}  // namespace goodput::server
