#include "tests/nats_cluster.h"

#include <csignal>
#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nats/nats.h"

namespace goodput::testing {
namespace {

constexpr char kServer[] = "/usr/sbin/nats-server";

// True once `url` has a JetStream that answers an account-info request
// (it does only when the cluster has elected its meta leader).
bool JetStreamAnswers(const std::string& url) {
  natsConnection* nc = nullptr;
  if (natsConnection_ConnectTo(&nc, url.c_str()) != NATS_OK) return false;
  jsCtx* js = nullptr;
  jsAccountInfo* info = nullptr;
  bool ok = natsConnection_JetStream(&js, nc, nullptr) == NATS_OK &&
            js_GetAccountInfo(&info, js, nullptr, nullptr) == NATS_OK;
  jsAccountInfo_Destroy(info);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return ok;
}

}  // namespace

absl::StatusOr<std::unique_ptr<NatsCluster>> NatsCluster::Start(
    const std::string& dir, int nodes) {
  auto cluster = std::unique_ptr<NatsCluster>(new NatsCluster(dir));
  cluster->nodes_.resize(nodes);
  for (Node& n : cluster->nodes_) {
    n.client_port = RestartablePort();
    n.route_port = RestartablePort();
    if (n.client_port < 0 || n.route_port < 0) {
      return absl::UnavailableError("no free loopback port for nats-server");
    }
  }
  for (int i = 0; i < nodes; ++i) {
    if (absl::Status s = cluster->WriteConfig(i); !s.ok()) return s;
  }
  for (int i = 0; i < nodes; ++i) cluster->Launch(i);
  if (absl::Status s = cluster->WaitReady(); !s.ok()) return s;
  return cluster;
}

std::vector<std::string> NatsCluster::urls() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < nodes_.size(); ++i) out.push_back(url(i));
  return out;
}

std::string NatsCluster::url(int node) const {
  return absl::StrCat("nats://127.0.0.1:", nodes_[node].client_port);
}

std::string NatsCluster::log_path(int node) const {
  return absl::StrCat(dir_, "/n", node, ".log");
}

void NatsCluster::Kill(int node) {
  Subprocess* p = nodes_[node].process.get();
  if (p == nullptr || !p->running()) return;
  p->Kill(SIGKILL);
  p->Wait();
}

absl::Status NatsCluster::RestartAll() {
  for (size_t i = 0; i < nodes_.size(); ++i) Kill(i);
  for (size_t i = 0; i < nodes_.size(); ++i) Launch(i);
  return WaitReady();
}

absl::Status NatsCluster::Restart(int node) {
  Kill(node);
  Launch(node);
  return WaitReady();
}

absl::Status NatsCluster::WriteConfig(int node) const {
  std::vector<std::string> routes;
  for (const Node& n : nodes_) {
    routes.push_back(absl::StrCat("nats-route://127.0.0.1:", n.route_port));
  }
  std::ofstream conf(absl::StrCat(dir_, "/n", node, ".conf"));
  conf << "server_name: n" << node << "\n"
       << "listen: 127.0.0.1:" << nodes_[node].client_port << "\n"
       << "jetstream { store_dir: \"" << dir_ << "/js" << node << "\" }\n"
       << "cluster {\n  name: goodput-test\n  listen: 127.0.0.1:"
       << nodes_[node].route_port << "\n  routes: ["
       << absl::StrJoin(routes, ", ") << "]\n}\n";
  if (!conf)
    return absl::InternalError(
        absl::StrCat("write ", dir_, "/n", node, ".conf"));
  return absl::OkStatus();
}

void NatsCluster::Launch(int node) {
  nodes_[node].process = std::make_unique<Subprocess>(
      std::vector<std::string>{kServer, "-c",
                               absl::StrCat(dir_, "/n", node, ".conf")},
      log_path(node));
}

absl::Status NatsCluster::WaitReady() const {
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Subprocess* p = nodes_[i].process.get();
    if (p == nullptr || !p->running()) continue;
    if (!Eventually([&] { return JetStreamAnswers(url(i)); }, 30)) {
      return absl::DeadlineExceededError(
          absl::StrCat("nats-server n", i, " has no JetStream after 30 s; see ",
                       log_path(i)));
    }
  }
  return absl::OkStatus();
}

}  // namespace goodput::testing
