#ifndef GOODPUT_STORAGE_READ_JOB_READER_H_
#define GOODPUT_STORAGE_READ_JOB_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "storage/event_store.h"

namespace goodput::storage {

// A JobEventsReader over EventStore::ReadJob: one job's events read with
// point reads, outside a scan. Does not own the store or copy the job id;
// both must outlive it. Not thread-safe.
class ReadJobReader : public JobEventsReader {
 public:
  ReadJobReader(EventStore* store, const std::string& job_id)
      : store_(store), job_id_(job_id) {}
  absl::Status Read(uint64_t after_batch, uint64_t through_batch,
                    std::vector<v1::Event>* out) override {
    return store_->ReadJob(job_id_, after_batch, through_batch, out);
  }
  absl::Status ReadUntil(uint64_t after_batch, uint64_t through_batch,
                         int64_t until_ns,
                         std::vector<v1::Event>* out) override {
    return store_->ReadJobUntil(job_id_, after_batch, through_batch, until_ns,
                                out);
  }

 private:
  EventStore* store_;
  const std::string& job_id_;
};

}  // namespace goodput::storage

#endif  // GOODPUT_STORAGE_READ_JOB_READER_H_
