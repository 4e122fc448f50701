#include "cluster/member_directory.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cluster/lease_keeper.h"

namespace goodput::cluster {
namespace {

constexpr absl::string_view kAdvertise = "advertise=";

}  // namespace

std::string MemberValue(absl::string_view id, absl::string_view advertise) {
  if (advertise.empty()) return std::string(id);
  return absl::StrCat(kAdvertise, advertise);
}

std::string AdvertisedAddress(absl::string_view member_value) {
  if (!absl::ConsumePrefix(&member_value, kAdvertise)) return "";
  return std::string(member_value);
}

absl::StatusOr<std::vector<Member>> MemberDirectory::Members() const {
  absl::StatusOr<std::vector<std::string>> keys = store_->Keys();
  if (!keys.ok()) return keys.status();
  const std::string prefix = MemberKey("");
  std::vector<Member> out;
  for (const std::string& key : *keys) {
    if (!absl::StartsWith(key, prefix)) continue;
    absl::StatusOr<LeaseEntry> entry = store_->Get(key);
    if (absl::IsNotFound(entry.status())) continue;  // expired meanwhile
    if (!entry.ok()) return entry.status();
    out.push_back({key.substr(prefix.size()), AdvertisedAddress(entry->value)});
  }
  std::sort(out.begin(), out.end(),
            [](const Member& a, const Member& b) { return a.id < b.id; });
  return out;
}

absl::StatusOr<std::string> MemberDirectory::HolderOf(int32_t partition) const {
  absl::StatusOr<LeaseEntry> entry = store_->Get(LeaseKey(partition));
  if (absl::IsNotFound(entry.status())) {
    return absl::NotFoundError(
        absl::StrCat("partition ", partition, " has no owner now"));
  }
  if (!entry.ok()) return entry.status();
  return std::move(entry->value);
}

}  // namespace goodput::cluster
