#include "server/ingest_service.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "grpcpp/impl/codegen/method_handler.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "grpcpp/security/auth_context.h"
#include "server/batch_parser.h"
#include "util/grpc_status.h"
#include "util/retry_hint.h"

namespace goodput::server {
namespace {

constexpr char kStreamMethod[] = "/goodput.v1.Ingest/Stream";

// `buffer`'s bytes in one string (the slow path of a bad batch only).
std::string Flatten(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string out;
  if (!buffer.Dump(&slices).ok()) return out;
  for (const grpc::Slice& s : slices) {
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return out;
}

}  // namespace

absl::Status IngestService::Loud(const grpc::ServerContext& context,
                                 absl::Status s) const {
  log_.Warning(
      absl::StrCat("refused stream from ", context.peer(), ": ", s.message()),
      {{"peer", context.peer()}});
  return s;
}

IngestService::IngestService(Ingestor* ingestor, IngestLimits* limits,
                             AgentGuard* guard, const TokenAuth* tokens,
                             IngestStreams* streams, Logger log)
    : ingestor_(ingestor),
      limits_(limits),
      log_(std::move(log)),
      guard_(guard),
      tokens_(tokens),
      streams_(streams) {
  using Handler =
      grpc::internal::BidiStreamingHandler<IngestService, grpc::ByteBuffer,
                                           grpc::ByteBuffer>;
  AddMethod(new grpc::internal::RpcServiceMethod(
      kStreamMethod, grpc::internal::RpcMethod::BIDI_STREAMING,
      new Handler(
          [](IngestService* service, grpc::ServerContext* context,
             RawStream* stream) { return service->Stream(context, stream); },
          this)));
}

grpc::Status IngestService::Stream(grpc::ServerContext* context,
                                   RawStream* stream) {
  if (streams_ == nullptr) return ToGrpc(Serve(context, stream, nullptr));
  auto open = streams_->Enter(context);
  if (!open.ok()) return ToGrpc(open.status());
  return ToGrpc(Serve(context, stream, open->get()));
}

absl::Status IngestService::Serve(grpc::ServerContext* context,
                                  RawStream* stream,
                                  IngestStreams::Handle* open) {
  const CallIdentity who = Identify(*context);
  AgentGuard::Claims claims(guard_, context);
  v1::Batch batch;
  absl::Status status;
  while (ReadBatch(stream, &batch, &status)) {
    if (open != nullptr) open->Touch();
    const size_t bytes = batch.ByteSizeLong();
    if (status = Admit(context, who, batch, bytes, &claims); !status.ok()) {
      break;
    }
    v1::Ack ack;
    if (status = Store(&batch, &ack); !status.ok()) {
      if (absl::IsOutOfRange(status) || absl::IsAlreadyExists(status)) {
        status = Loud(*context, status);
      }
      break;
    }
    grpc::ByteBuffer out;
    bool own = false;
    if (!grpc::SerializationTraits<v1::Ack>::Serialize(ack, &out, &own).ok() ||
        !stream->Write(out)) {
      break;  // the agent went away; it resends
    }
  }
  return status;
}

bool IngestService::ReadBatch(RawStream* stream, v1::Batch* batch,
                              absl::Status* status) {
  grpc::ByteBuffer buffer;
  if (!stream->Read(&buffer)) return false;
  batch->Clear();
  const grpc::ByteBuffer kept(buffer);  // shares the slices: Deserialize
                                        // clears `buffer`
  if (grpc::SerializationTraits<v1::Batch>::Deserialize(&buffer, batch).ok()) {
    return true;
  }
  *status = ExplainUnparsedBatch(Flatten(kept));
  return false;
}

absl::Status IngestService::Store(v1::Batch* batch, v1::Ack* ack) {
  absl::StatusOr<v1::Ack> acked = front_ != nullptr
                                      ? front_->IngestTaking(batch)
                                      : ingestor_->IngestTaking(batch);
  if (absl::IsOutOfRange(acked.status())) return acked.status();
  if (absl::IsAlreadyExists(acked.status())) return acked.status();
  if (absl::IsInvalidArgument(acked.status())) return acked.status();
  if (!acked.ok()) {  // e.g. a failed write: the agent retries
    return absl::UnavailableError(
        absl::StrCat("batch ", batch->sequence(),
                     " not stored: ", acked.status().message()));
  }
  *ack = *std::move(acked);
  return absl::OkStatus();
}

CallIdentity IngestService::Identify(const grpc::ServerContext& context) const {
  const std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  CallIdentity who;
  if (std::string agent = AuthenticatedAgent(auth.get()); !agent.empty()) {
    who.name = absl::StrCat("token ", agent);
    if (tokens_ != nullptr) who.patterns = tokens_->AgentIdPatterns(agent);
    return who;
  }
  if (auth == nullptr || !auth->IsPeerAuthenticated()) return who;
  std::vector<std::string> names;
  for (const grpc::string_ref& n : auth->GetPeerIdentity()) {
    names.emplace_back(n.data(), n.size());
  }
  who.name = absl::StrCat("certificate ", absl::StrJoin(names, ","));
  return who;
}

absl::Status IngestService::Admit(grpc::ServerContext* context,
                                  const CallIdentity& who,
                                  const v1::Batch& batch, size_t bytes,
                                  AgentGuard::Claims* claims) {
  if (limits_ != nullptr) {
    if (absl::Status s = limits_->AdmitBatchBytes(bytes); !s.ok()) return s;
  }
  if (guard_ != nullptr && !batch.agent_id().empty()) {
    absl::Status s =
        guard_->Admit(who, batch.agent_id(), context->peer(), claims);
    if (!s.ok()) return Loud(*context, s);
  }
  if (limits_ == nullptr) return absl::OkStatus();
  // Rate limits apply per authenticated agent, else per agent_id.
  absl::string_view name = who.name;
  const bool by_token = absl::ConsumePrefix(&name, "token ");
  absl::Duration retry_after;
  absl::Status s =
      limits_->AdmitBatch(by_token ? std::string(name) : batch.agent_id(),
                          batch.events_size(), &retry_after);
  if (absl::IsResourceExhausted(s)) SetRetryHint(context, retry_after);
  return s;
}

}  // namespace goodput::server
