#include "server/ingest_service.h"

#include "absl/strings/str_cat.h"
#include "server/token_auth.h"
#include "util/grpc_status.h"
#include "util/retry_hint.h"

namespace goodput::server {

grpc::Status IngestService::Stream(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<v1::Ack, v1::Batch>* stream) {
  // Rate limits apply per authenticated agent, else per agent_id.
  const std::string agent = AuthenticatedAgent(context->auth_context().get());
  v1::Batch batch;
  while (stream->Read(&batch)) {
    absl::Status admitted =
        Admit(context, agent.empty() ? batch.agent_id() : agent, batch);
    if (!admitted.ok()) return ToGrpc(admitted);
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

absl::Status IngestService::Admit(grpc::ServerContext* context,
                                  const std::string& agent,
                                  const v1::Batch& batch) {
  if (limits_ == nullptr) return absl::OkStatus();
  absl::Status s = limits_->AdmitBatchBytes(batch.ByteSizeLong());
  if (!s.ok()) return s;
  absl::Duration retry_after;
  s = limits_->AdmitBatch(agent, batch.events_size(), &retry_after);
  if (absl::IsResourceExhausted(s)) SetRetryHint(context, retry_after);
  return s;
}

}  // namespace goodput::server
