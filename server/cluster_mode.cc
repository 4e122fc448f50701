#include "server/cluster_mode.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cluster/partition_assigner.h"

namespace goodput::server {
namespace {

constexpr absl::string_view kScheme = "nats://";

// nats://HOST:PORT with a port from 1 to 65535.
bool IsNatsUrl(absl::string_view url) {
  if (!absl::ConsumePrefix(&url, kScheme)) return false;
  const size_t colon = url.rfind(':');
  int port = 0;
  return colon != absl::string_view::npos && colon > 0 &&
         absl::SimpleAtoi(url.substr(colon + 1), &port) && port > 0 &&
         port < 65536;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ParseClusterUrls(
    const std::string& text) {
  std::vector<std::string> urls = absl::StrSplit(text, ',', absl::SkipEmpty());
  if (urls.empty()) {
    return absl::InvalidArgumentError(
        "--cluster: want nats://HOST:PORT[,nats://HOST:PORT...]");
  }
  for (const std::string& url : urls) {
    if (!IsNatsUrl(url)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--cluster: want nats://HOST:PORT, got \"", url, "\""));
    }
  }
  return urls;
}

std::string DefaultClusterId(const std::string& host, int port) {
  std::string id = absl::StrCat(host, "-", port);
  std::replace_if(
      id.begin(), id.end(),
      [](char c) {
        return !std::isalnum(static_cast<unsigned char>(c)) && c != '_' &&
               c != '-';
      },
      '-');
  return id;
}

std::string DefaultAdvertise(const std::string& grpc_address,
                             const std::string& hostname, int port) {
  const size_t colon = grpc_address.rfind(':');
  std::string host =
      colon == std::string::npos ? "" : grpc_address.substr(0, colon);
  if (host.empty() || host == "0.0.0.0" || host == "[::]" || host == "::") {
    host = hostname;
  }
  return absl::StrCat(host, ":", port);
}

absl::Status CheckAdvertise(const std::string& address) {
  const size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port <= 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--cluster_advertise: want HOST:PORT, got \"", address, "\""));
  }
  return absl::OkStatus();
}

void ConfigureClusterIngestor(Ingestor* ingestor) {
  ingestor->set_check_event_times(false);
  ingestor->set_max_sequence_jump(0);
}

std::function<bool(const std::string&)> ClusterMode::HeldJobs() const {
  const std::vector<int32_t> held = status().held;  // ascending
  return [held, partitions = partitions_](const std::string& job_id) {
    return std::binary_search(held.begin(), held.end(),
                              cluster::PartitionOfJob(job_id, partitions));
  };
}

void ClusterMode::AddSnapshotFamilies(
    const cluster::SnapshotStats& s, std::vector<core::MetricFamilyData>* out) {
  const std::pair<const char*, const char*> help[] = {
      {"goodput_cluster_snapshots_published_total",
       "Partition snapshots this instance published (every chunk stored)."},
      {"goodput_cluster_snapshot_publish_errors_total",
       "Partition snapshots this instance failed to export or publish."},
      {"goodput_cluster_snapshots_imported_total",
       "Partitions this instance took over from a snapshot (then read only "
       "the log after it)."},
      {"goodput_cluster_snapshot_import_errors_total",
       "Takeovers whose snapshot could not be read or imported (the "
       "partition was then read from the log)."},
      {"goodput_cluster_snapshots_incomplete_total",
       "Torn or partial snapshots seen at takeovers and skipped."}};
  const int64_t values[] = {s.published, s.publish_errors, s.imported,
                            s.import_errors, s.skipped_incomplete};
  for (size_t i = 0; i < std::size(values); ++i) {
    out->push_back(core::NewFamily(help[i].first, help[i].second,
                                   core::MetricKind::kCounter));
    core::AddSample(&out->back(), {}, static_cast<double>(values[i]));
  }
}

std::vector<core::MetricFamilyData> ClusterMode::Families() const {
  using core::AddSample;
  using core::MetricKind;
  using core::NewFamily;
  const ClusterRunnerStatus s = status();
  std::vector<core::MetricFamilyData> out;
  out.push_back(NewFamily("goodput_cluster_partitions_held",
                          "Partitions whose lease this instance holds (and "
                          "whose messages it applies).",
                          MetricKind::kGauge));
  AddSample(&out.back(), {}, static_cast<double>(s.held.size()));
  out.push_back(NewFamily(
      "goodput_cluster_partitions_unowned",
      "Partitions no lease names and nobody applies, as this instance saw at "
      "its last lease round (-1 before its first).",
      MetricKind::kGauge));
  AddSample(&out.back(), {}, s.unowned);
  out.push_back(NewFamily("goodput_cluster_applied_messages_total",
                          "Log messages this instance applied (its "
                          "partitions' and the heartbeats').",
                          MetricKind::kCounter));
  AddSample(&out.back(), {}, static_cast<double>(s.applied));
  out.push_back(NewFamily("goodput_cluster_nats_connected",
                          "1 while this instance's NATS client is connected, "
                          "0 while NATS is unreachable (/readyz says why).",
                          MetricKind::kGauge));
  AddSample(&out.back(), {}, Reachable().ok() ? 1 : 0);
  out.push_back(NewFamily("goodput_cluster_errors_total",
                          "Lease rounds and apply pumps that failed.",
                          MetricKind::kCounter));
  AddSample(&out.back(), {}, static_cast<double>(s.errors));
  AddSnapshotFamilies(s.snapshots, &out);
  return out;
}

}  // namespace goodput::server
