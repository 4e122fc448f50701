// NatsCluster: a real JetStream cluster of `n` `nats-server` processes on
// loopback ports, for tests (issue 20: "every test here uses the real
// thing"). Each node's config, store and log live under `dir`. Nodes can be
// killed with SIGKILL and started again on the same ports. Owns the
// processes (killed when destroyed). Not thread-safe.
#ifndef GOODPUT_TESTS_NATS_CLUSTER_H_
#define GOODPUT_TESTS_NATS_CLUSTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/subprocess.h"

namespace goodput::testing {

class NatsCluster {
 public:
  // Starts the nodes and waits (up to 30 s) until each answers on its
  // client port and the cluster has a JetStream meta leader.
  static absl::StatusOr<std::unique_ptr<NatsCluster>> Start(
      const std::string& dir, int nodes);

  // "nats://127.0.0.1:PORT" of every node.
  std::vector<std::string> urls() const;
  std::string url(int node) const;
  void Kill(int node);  // SIGKILL
  absl::Status Restart(int node);
  // Kills the nodes still running and starts all of them again (a cluster
  // whose nodes were all killed: one node alone has no JetStream).
  absl::Status RestartAll();
  std::string log_path(int node) const;

 private:
  struct Node {
    int client_port = 0;
    int route_port = 0;
    std::unique_ptr<Subprocess> process;
  };
  explicit NatsCluster(std::string dir) : dir_(std::move(dir)) {}
  absl::Status WriteConfig(int node) const;
  void Launch(int node);
  absl::Status WaitReady() const;

  std::string dir_;
  std::vector<Node> nodes_;
};

}  // namespace goodput::testing

#endif  // GOODPUT_TESTS_NATS_CLUSTER_H_
