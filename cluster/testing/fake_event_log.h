// FakeEventLog: an in-memory EventLog that deduplicates by message id
// (forever, not within a window) and can be told to fail the next N
// publishes. Thread-safe.
#ifndef GOODPUT_CLUSTER_TESTING_FAKE_EVENT_LOG_H_
#define GOODPUT_CLUSTER_TESTING_FAKE_EVENT_LOG_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "cluster/event_log.h"

namespace goodput::cluster {

class FakeEventLog : public EventLog {
 public:
  struct Message {
    std::string subject, id, data;
  };

  absl::StatusOr<PublishAck> Publish(absl::string_view subject,
                                     absl::string_view message_id,
                                     absl::string_view data) override {
    absl::MutexLock lock(&mu_);
    if (fail_next_ > 0) {
      --fail_next_;
      return absl::UnavailableError("fake event log: down");
    }
    auto it = ids_.find(std::string(message_id));
    if (it != ids_.end()) return PublishAck{it->second, true};
    messages_.push_back(Message{std::string(subject), std::string(message_id),
                                std::string(data)});
    ids_[std::string(message_id)] = messages_.size();
    return PublishAck{messages_.size(), false};
  }

  absl::StatusOr<std::unique_ptr<LogReader>> Read(
      absl::string_view subject, uint64_t from_sequence) override {
    return std::unique_ptr<LogReader>(
        new Reader(this, std::string(subject), from_sequence));
  }

  void FailNext(int n) {
    absl::MutexLock lock(&mu_);
    fail_next_ = n;
  }
  std::vector<Message> messages() {
    absl::MutexLock lock(&mu_);
    return messages_;
  }

 private:
  class Reader : public LogReader {
   public:
    Reader(FakeEventLog* log, std::string subject, uint64_t next)
        : log_(log), subject_(std::move(subject)), next_(next) {}
    absl::StatusOr<std::vector<LogMessage>> Next(int max, int64_t) override {
      absl::MutexLock lock(&log_->mu_);
      std::vector<LogMessage> out;
      const std::vector<Message>& all = log_->messages_;
      for (uint64_t seq = std::max<uint64_t>(next_, 1);
           seq <= all.size() && static_cast<int>(out.size()) < max; ++seq) {
        next_ = seq + 1;
        if (all[seq - 1].subject == subject_) {
          out.push_back(LogMessage{seq, all[seq - 1].data});
        }
      }
      return out;
    }

   private:
    FakeEventLog* log_;
    std::string subject_;
    uint64_t next_;
  };

  absl::Mutex mu_;
  std::vector<Message> messages_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, uint64_t> ids_ ABSL_GUARDED_BY(mu_);
  int fail_next_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace goodput::cluster

#endif  // GOODPUT_CLUSTER_TESTING_FAKE_EVENT_LOG_H_
