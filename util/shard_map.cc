#include "util/shard_map.h"

#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace goodput {
namespace {

// OK if `entry` is HOST:PORT with a port in 1..65535.
bool IsHostPort(absl::string_view entry) {
  const size_t colon = entry.rfind(':');
  if (colon == absl::string_view::npos || colon == 0) return false;
  int port = 0;
  return absl::SimpleAtoi(entry.substr(colon + 1), &port) && port >= 1 &&
         port <= 65535;
}

}  // namespace

absl::StatusOr<ShardMap> ShardMap::Parse(absl::string_view text,
                                         absl::string_view flag) {
  if (text.empty())
    return absl::InvalidArgumentError(absl::StrCat(flag, ": required"));
  std::vector<std::string> addresses = absl::StrSplit(text, ',');
  std::set<std::string> seen;
  for (size_t i = 0; i < addresses.size(); ++i) {
    const std::string& a = addresses[i];
    if (!IsHostPort(a)) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, ": entry ", i + 1, " \"", a, "\": want HOST:PORT"));
    }
    if (!seen.insert(a).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, ": entry ", i + 1, " \"", a, "\" is listed twice"));
    }
  }
  return ShardMap(std::move(addresses));
}

size_t ShardMap::ShardOf(absl::string_view job_id) const {
  return static_cast<size_t>(JumpConsistentHash(
      Fnv1a64(job_id), static_cast<int32_t>(addresses_.size())));
}

size_t ShardMap::CapacityShardOf(absl::string_view host) const {
  return goodput::CapacityShardOf(host, addresses_.size());
}

std::vector<size_t> ShardMap::ShardsFor(
    absl::string_view job_id,
    std::optional<absl::string_view> heartbeat_host) const {
  if (heartbeat_host) return {CapacityShardOf(*heartbeat_host)};
  if (!job_id.empty()) return {ShardOf(job_id)};
  std::vector<size_t> all(addresses_.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

absl::StatusOr<ShardPosition> ParseShardPosition(absl::string_view text,
                                                 absl::string_view flag) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, '/');
  ShardPosition p;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &p.index) ||
      !absl::SimpleAtoi(parts[1], &p.count) || p.count < 1 ||
      p.count > 1u << 30 || p.index >= p.count) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": \"", text, "\": want I/N with 0 <= I < N"));
  }
  return p;
}

size_t CapacityShardOf(absl::string_view host, size_t count) {
  return static_cast<size_t>(
      JumpConsistentHash(Fnv1a64(host), static_cast<int32_t>(count)));
}

uint64_t Fnv1a64(absl::string_view bytes) {
  uint64_t hash = 14695981039346656037ull;  // offset basis
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 1099511628211ull;  // FNV prime
  }
  return hash;
}

int32_t JumpConsistentHash(uint64_t key, int32_t buckets) {
  int64_t b = -1, j = 0;
  while (j < buckets) {
    b = j;
    key = key * 2862933555777941757ull + 1;
    j = static_cast<int64_t>((b + 1) * (static_cast<double>(int64_t{1} << 31) /
                                        static_cast<double>((key >> 33) + 1)));
  }
  return static_cast<int32_t>(b);
}

}  // namespace goodput
