#include "cli/batch_sender.h"

#include <algorithm>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "proto/service.grpc.pb.h"
#include "util/grpc_status.h"

namespace goodput::cli {
namespace {

// gRPC's refusal of a message over the receiver's limit: retrying the same
// batch cannot help.
bool IsMessageTooLarge(const absl::Status& s) {
  return absl::IsResourceExhausted(s) &&
         absl::StrContains(s.message(), "larger than max");
}

absl::Status TooLarge(const v1::Batch& batch, const absl::Status& s) {
  return absl::InvalidArgumentError(absl::StrCat(
      "batch ", batch.sequence(), " of ", batch.events_size(), " events is ",
      batch.ByteSizeLong(), " bytes, more than goodputd accepts (", s.message(),
      "): send fewer events per batch (goodputctl send --batch=N) or raise "
      "goodputd's --max_batch_bytes"));
}

}  // namespace

absl::StatusOr<std::vector<v1::Ack>> BatchSender::Send(
    const std::vector<v1::Batch>& batches, absl::Time deadline) {
  std::vector<v1::Ack> acks;
  size_t next_ack = 0;
  absl::Duration backoff = absl::Milliseconds(100);
  absl::Status last;
  while (next_ack < batches.size()) {
    const size_t before = next_ack;
    last = Attempt(batches, deadline, &next_ack, &acks);
    if (next_ack == batches.size()) break;
    if (IsMessageTooLarge(last)) return TooLarge(batches[next_ack], last);
    if (absl::IsUnauthenticated(last) || absl::IsPermissionDenied(last) ||
        absl::IsInvalidArgument(last) || absl::IsOutOfRange(last)) {
      return last;  // retrying cannot help
    }
    if (next_ack > before) backoff = absl::Milliseconds(100);  // progress
    if (absl::Now() + backoff > deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "server: ", next_ack, " of ", batches.size(),
          " batches acknowledged before the deadline; last error: ",
          last.message()));
    }
    absl::SleepFor(backoff);  // between attempts only, never for logic
    backoff = std::min(backoff * 2, absl::Seconds(5));
  }
  return acks;
}

absl::Status BatchSender::Attempt(const std::vector<v1::Batch>& batches,
                                  absl::Time deadline, size_t* next_ack,
                                  std::vector<v1::Ack>* acks) {
  auto stub = v1::Ingest::NewStub(channel_);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(deadline));
  auto stream = stub->Stream(&context);
  size_t next_write = *next_ack;
  v1::Ack ack;
  while (*next_ack < batches.size()) {
    while (next_write < batches.size() &&
           next_write < *next_ack + static_cast<size_t>(window_)) {
      if (!stream->Write(batches[next_write])) break;
      ++next_write;
    }
    if (!stream->Read(&ack)) break;
    if (ack.sequence() != batches[*next_ack].sequence()) {
      context.TryCancel();
      return absl::InternalError(absl::StrCat("server: ack for sequence ",
                                              ack.sequence(), ", expected ",
                                              batches[*next_ack].sequence()));
    }
    acks->push_back(ack);
    ++*next_ack;
  }
  if (*next_ack == batches.size()) stream->WritesDone();
  return FromGrpc(stream->Finish());
}

}  // namespace goodput::cli
