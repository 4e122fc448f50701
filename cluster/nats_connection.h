// NatsConnection: one connection to a NATS cluster with its JetStream
// context (the C client's natsConnection and jsCtx), owned and closed by
// this object. The client reconnects to another server of `urls` by
// itself. The C client is thread-safe, and so is this class.
#ifndef GOODPUT_CLUSTER_NATS_CONNECTION_H_
#define GOODPUT_CLUSTER_NATS_CONNECTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nats/nats.h"

namespace goodput::cluster {

class NatsConnection {
 public:
  // Connects to any of `urls` ("nats://host:port"); JetStream requests
  // wait up to `timeout_ms`. Unavailable when no server answers.
  static absl::StatusOr<std::unique_ptr<NatsConnection>> Connect(
      const std::vector<std::string>& urls, int64_t timeout_ms);
  ~NatsConnection();
  NatsConnection(const NatsConnection&) = delete;
  NatsConnection& operator=(const NatsConnection&) = delete;

  jsCtx* js() const { return js_; }
  // How long a request waits (Connect's `timeout_ms`).
  int64_t timeout_ms() const { return timeout_ms_; }
  // Whether the client is connected to a server now (not reconnecting,
  // closed or draining).
  bool connected() const;
  natsConnection* connection() const { return nc_; }

 private:
  NatsConnection(natsConnection* nc, jsCtx* js, int64_t timeout_ms)
      : nc_(nc), js_(js), timeout_ms_(timeout_ms) {}

  natsConnection* nc_;
  jsCtx* js_;
  int64_t timeout_ms_;
};

}  // namespace goodput::cluster

#endif  // GOODPUT_CLUSTER_NATS_CONNECTION_H_
