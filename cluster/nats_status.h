// The one place where the NATS C client's errors (natsStatus and JetStream
// error codes) become absl::Status, so nothing above cluster/nats_* sees a
// NATS type. Thread-safe (pure functions).
#ifndef GOODPUT_CLUSTER_NATS_STATUS_H_
#define GOODPUT_CLUSTER_NATS_STATUS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nats/nats.h"

namespace goodput::cluster {

// `what` names the operation, e.g. "publish to goodput.p.3". A wrong last
// sequence (a compare-and-set that lost, by its JetStream code or, from the
// KV calls that hide the code, by the server's text) is FailedPrecondition; timeouts
// DeadlineExceeded; no server, a closed connection or no responders
// Unavailable; not found NotFound; the rest Internal, with NATS's text.
absl::Status FromNats(natsStatus s, jsErrCode js_error, absl::string_view what);
inline absl::Status FromNats(natsStatus s, absl::string_view what) {
  return FromNats(s, static_cast<jsErrCode>(0), what);
}

}  // namespace goodput::cluster

#endif  // GOODPUT_CLUSTER_NATS_STATUS_H_
