#ifndef GOODPUT_SIM_LIVE_SINK_H_
#define GOODPUT_SIM_LIVE_SINK_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/event_sink.h"
#include "util/clock.h"

namespace goodput::sim {

// Streams the simulator's events live into goodput-agents' Unix sockets
// as JSON Lines: an event of host H goes to socket hash(H) mod N (events
// without a host, i.e. the scheduler's, to the first). Simulated time is
// played `speed` times faster than real time; since agents reject event
// times in the future, simulated time is mapped onto the wall clock
// (start = now) and every duration inside an event (input wait, idle,
// FLOPs and bytes) is divided by `speed` too, so that every ratio is the
// simulated one (goodputd's --stall_after must be divided too). Owns its
// socket connections; `clock` is not owned. Not thread-safe.
class LiveSink : public EventSink {
 public:
  using SleepUntil = std::function<void(int64_t wall_ns)>;

  // Connects to every socket; `sim_start_ms` maps to the clock's now.
  static absl::StatusOr<std::unique_ptr<LiveSink>> Connect(
      const std::vector<std::string>& sockets, double speed,
      int64_t sim_start_ms, Clock* clock, SleepUntil sleep_until);
  ~LiveSink() override;

  void Emit(const v1::Event& event) override;
  bool Stopped() const override { return !status_.ok(); }
  absl::Status Finish() override;

  // Also writes every line as sent to `tee` (not owned), e.g. to compare
  // the service with an offline replay of exactly what it was sent.
  void set_tee(std::ostream* tee) { tee_ = tee; }

  // The event as sent: time moved and compressed, durations scaled.
  static v1::Event Compress(const v1::Event& event, double speed,
                            int64_t sim_start_ms, int64_t wall_start_ns);

 private:
  LiveSink(std::vector<int> fds, double speed, int64_t sim_start_ms,
           Clock* clock, SleepUntil sleep_until);
  size_t Route(const std::string& host) const;
  void FlushAll();

  std::vector<int> fds_;
  std::vector<std::string> buffers_;
  double speed_;
  int64_t sim_start_ms_, wall_start_ns_;
  Clock* clock_;
  SleepUntil sleep_until_;
  std::string line_;
  std::ostream* tee_ = nullptr;
  absl::Status status_;
};

}  // namespace goodput::sim

#endif  // GOODPUT_SIM_LIVE_SINK_H_
