#ifndef GOODPUT_CLI_BATCH_SENDER_H_
#define GOODPUT_CLI_BATCH_SENDER_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "proto/service.pb.h"

namespace goodput::cli {

// Streams batches to goodputd's Ingest.Stream in order, keeping up to
// `window` unacknowledged; when the stream breaks it reconnects with
// exponential backoff and resends every unacknowledged batch (the server
// acknowledges redelivered ones as duplicates), until all are acknowledged
// or the deadline passes. Refusals that a resend cannot change end it at
// once: bad credentials, an invalid batch, a sequence out of range, and a
// batch over the server's message limit (the error gives its size and the
// flags to change). Does not own the channel. Not thread-safe.
class BatchSender {
 public:
  BatchSender(std::shared_ptr<grpc::Channel> channel, int window = 8)
      : channel_(std::move(channel)), window_(window) {}

  // The acks of `batches`, in order; an error names the last gRPC failure.
  absl::StatusOr<std::vector<v1::Ack>> Send(
      const std::vector<v1::Batch>& batches, absl::Time deadline);

 private:
  // One stream attempt from batch `*next_ack` on; advances it per ack.
  absl::Status Attempt(const std::vector<v1::Batch>& batches,
                       absl::Time deadline, size_t* next_ack,
                       std::vector<v1::Ack>* acks);

  std::shared_ptr<grpc::Channel> channel_;
  int window_;
};

}  // namespace goodput::cli

#endif  // GOODPUT_CLI_BATCH_SENDER_H_
