// ClusterMode in a build without libnats (CMake found no libnats and
// GOODPUT_REQUIRE_NATS is OFF): --cluster says so.
#include "server/cluster_mode.h"

namespace goodput::server {

absl::StatusOr<std::unique_ptr<ClusterMode>> ClusterMode::Connect(
    const ClusterOptions&, Ingestor*, Clock*, codec::ValidationLimits) {
  return absl::FailedPreconditionError(
      "--cluster: this goodputd was built without libnats (install "
      "libnats-dev and rebuild; cmake -DGOODPUT_REQUIRE_NATS=ON makes it "
      "required)");
}

}  // namespace goodput::server
