// FanOut: how a goodputd in cluster mode answers a fleet query for the
// whole fleet (docs/scaling.md, "One view whoever you ask"). Gather asks
// every live member (from the lease bucket's member records, in parallel,
// one thread each) for its part: this instance answers itself, the others
// are called over gRPC by the caller's `ask`. Each part says which
// partitions it answered for; the parts are kept only if together they
// cover every partition exactly once. Otherwise the query fails, never
// silently short: a member that does not answer fails it naming the member
// and its address; partitions no member answered for (no owner now: a dead
// member's leases not yet expired, or a move under way) fail it as
// UNAVAILABLE naming them; a partition answered twice (it moved during the
// query) is asked again once, then ABORTED. Borrows the directory, which
// must outlive it. Thread-safe.
#ifndef GOODPUT_SERVER_FAN_OUT_H_
#define GOODPUT_SERVER_FAN_OUT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cluster/member_directory.h"

namespace goodput::server {

// One member's answer and the partitions it answered for.
template <typename T>
struct MemberPart {
  T response;
  std::vector<int32_t> partitions;
};

class FanOut {
 public:
  // `self` gives this instance's member id (empty before it joined).
  FanOut(const cluster::MemberDirectory* directory, int32_t partitions,
         std::function<std::string()> self)
      : directory_(directory),
        partitions_(partitions),
        self_(std::move(self)) {}

  // How Gather asks one member; `self` is whether it is this instance.
  template <typename T>
  using Ask = std::function<absl::StatusOr<MemberPart<T>>(
      const cluster::Member& member, bool self)>;

  // Every live member's part, in member order; an error as above.
  template <typename T>
  absl::StatusOr<std::vector<T>> Gather(const Ask<T>& ask) const;

  // The member that holds `job_id`'s partition and whether it is this
  // instance; UNAVAILABLE if the partition has no owner or its owner no
  // address.
  absl::StatusOr<std::pair<cluster::Member, bool>> OwnerOfJob(
      const std::string& job_id) const;

  // "3,7,9" and back (the peers' trailing metadata goodput-partitions);
  // InvalidArgument for what is not such a list.
  static std::string FormatPartitions(const std::vector<int32_t>& partitions);
  static absl::StatusOr<std::vector<int32_t>> ParsePartitions(
      absl::string_view text);

 private:
  // Calls `ask(i)` for each of `members` in parallel; each returns the
  // partitions its part covered. Checks errors and coverage as above.
  absl::Status AskAll(
      const std::vector<cluster::Member>& members,
      const std::function<absl::StatusOr<std::vector<int32_t>>(size_t i)>& ask)
      const;
  absl::Status AskOnce(
      const std::vector<cluster::Member>& members,
      const std::function<absl::StatusOr<std::vector<int32_t>>(size_t i)>& ask)
      const;
  // The members, each with an address (UNAVAILABLE naming one without).
  absl::StatusOr<std::vector<cluster::Member>> Members() const;
  // OK if `answered` (partition -> how many parts) covers each once.
  absl::Status CheckCoverage(const std::vector<int>& answered) const;

  const cluster::MemberDirectory* const directory_;
  const int32_t partitions_;
  const std::function<std::string()> self_;
};

template <typename T>
absl::StatusOr<std::vector<T>> FanOut::Gather(const Ask<T>& ask) const {
  absl::StatusOr<std::vector<cluster::Member>> members = Members();
  if (!members.ok()) return members.status();
  const std::string self = self_();
  std::vector<T> out(members->size());
  absl::Status s =
      AskAll(*members, [&](size_t i) -> absl::StatusOr<std::vector<int32_t>> {
        const cluster::Member& m = (*members)[i];
        absl::StatusOr<MemberPart<T>> part = ask(m, m.id == self);
        if (!part.ok()) return part.status();
        out[i] = std::move(part->response);
        return std::move(part->partitions);
      });
  if (!s.ok()) return s;
  return out;
}

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_FAN_OUT_H_
