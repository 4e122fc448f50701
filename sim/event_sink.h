#ifndef GOODPUT_SIM_EVENT_SINK_H_
#define GOODPUT_SIM_EVENT_SINK_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/event.pb.h"

namespace goodput::sim {

// Where the simulator's events go, in simulated-time order. Events carry
// simulated times; a job's rank-0 events carry its `host`, scheduler
// events and heartbeats are routed by `host` too (scheduler events have
// none). Implementations say their own thread-safety; the simulator calls
// from one thread.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void Emit(const v1::Event& event) = 0;
  // True once nothing more can be delivered (e.g. the stream failed): the
  // simulator stops. A steady fleet runs until this or a signal.
  virtual bool Stopped() const { return false; }
  // Called once after the last event; returns the first error, if any.
  virtual absl::Status Finish() { return absl::OkStatus(); }
};

// Writes JSON Lines (protobuf's JSON mapping, the codec's format) to a
// stream it does not own. Not thread-safe.
class JsonLinesSink : public EventSink {
 public:
  explicit JsonLinesSink(std::ostream* out) : out_(out) {}
  void Emit(const v1::Event& event) override;
  bool Stopped() const override { return !*out_; }
  absl::Status Finish() override;
  int64_t events() const { return events_; }

 private:
  std::ostream* out_;
  std::string line_;
  int64_t events_ = 0;
};

// Keeps the events in memory (tests, benches). Not thread-safe.
class VectorSink : public EventSink {
 public:
  void Emit(const v1::Event& event) override { events_.push_back(event); }
  std::vector<v1::Event>& events() { return events_; }

 private:
  std::vector<v1::Event> events_;
};

// Counts events by kind without keeping them (scale measurements).
class CountingSink : public EventSink {
 public:
  void Emit(const v1::Event& event) override;
  int64_t total() const { return total_; }
  int64_t count(v1::Event::BodyCase kind) const { return by_kind_[kind]; }

 private:
  int64_t total_ = 0;
  int64_t by_kind_[32] = {};
};

}  // namespace goodput::sim

#endif  // GOODPUT_SIM_EVENT_SINK_H_
