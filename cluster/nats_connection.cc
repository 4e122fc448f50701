#include "cluster/nats_connection.h"

#include "absl/cleanup/cleanup.h"
#include "cluster/nats_status.h"

namespace goodput::cluster {

absl::StatusOr<std::unique_ptr<NatsConnection>> NatsConnection::Connect(
    const std::vector<std::string>& urls, int64_t timeout_ms) {
  natsOptions* opts = nullptr;
  natsStatus s = natsOptions_Create(&opts);
  absl::Cleanup free_opts = [&] { natsOptions_Destroy(opts); };
  std::vector<const char*> servers;
  for (const std::string& u : urls) servers.push_back(u.c_str());
  if (s == NATS_OK) {
    s = natsOptions_SetServers(opts, servers.data(),
                               static_cast<int>(servers.size()));
  }
  if (s == NATS_OK) s = natsOptions_SetTimeout(opts, timeout_ms);
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(opts, -1);
  natsConnection* nc = nullptr;
  if (s == NATS_OK) s = natsConnection_Connect(&nc, opts);
  if (s != NATS_OK) return FromNats(s, "connect");
  jsOptions js_opts;
  jsOptions_Init(&js_opts);
  js_opts.Wait = timeout_ms;
  jsCtx* js = nullptr;
  s = natsConnection_JetStream(&js, nc, &js_opts);
  if (s != NATS_OK) {
    natsConnection_Destroy(nc);
    return FromNats(s, "JetStream context");
  }
  return std::unique_ptr<NatsConnection>(
      new NatsConnection(nc, js, timeout_ms));
}

bool NatsConnection::connected() const {
  return natsConnection_Status(nc_) == NATS_CONN_STATUS_CONNECTED;
}

NatsConnection::~NatsConnection() {
  jsCtx_Destroy(js_);
  natsConnection_Close(nc_);
  natsConnection_Destroy(nc_);
}

}  // namespace goodput::cluster
