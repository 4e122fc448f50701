#include "server/ingest_service.h"

#include "absl/strings/str_cat.h"
#include "util/grpc_status.h"

namespace goodput::server {

grpc::Status IngestService::Stream(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<v1::Ack, v1::Batch>* stream) {
  v1::Batch batch;
  while (stream->Read(&batch)) {
    absl::StatusOr<v1::Ack> ack = ingestor_->IngestTaking(&batch);
    if (absl::IsInvalidArgument(ack.status())) return ToGrpc(ack.status());
    if (!ack.ok()) {  // e.g. a failed write: the agent retries
      return ToGrpc(absl::UnavailableError(
          absl::StrCat("batch ", batch.sequence(),
                       " not stored: ", ack.status().message())));
    }
    if (!stream->Write(*ack)) break;  // the agent went away; it resends
  }
  return grpc::Status::OK;
}

}  // namespace goodput::server
