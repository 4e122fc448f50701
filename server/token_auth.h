// TokenAuth: goodputd's bearer-token check (--auth_tokens=FILE, lines
// "agent_name token [agent_ids=PATTERN,...]"; '#' starts a comment; a
// PATTERN is an agent id, or a prefix ending in '*'). As a gRPC
// AuthMetadataProcessor it runs before any handler: a call without
// "authorization: Bearer TOKEN" of a listed agent ends with UNAUTHENTICATED, so
// nothing it sent is read. An accepted call's AuthContext carries the agent
// name under kAgentProperty (IngestService rate-limits per name, and AgentGuard
// binds agent ids to it, restricted to its agent_ids= if given). Refusals are
// counted by reason (goodput_auth_refused_total). The token table is
// immutable after Parse; thread-safe.
#ifndef GOODPUT_SERVER_TOKEN_AUTH_H_
#define GOODPUT_SERVER_TOKEN_AUTH_H_

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/security/auth_metadata_processor.h"

namespace goodput::server {

class TokenAuth final : public grpc::AuthMetadataProcessor {
 public:
  static constexpr char kAgentProperty[] = "goodput_agent";
  // Why a call was refused; ReasonName gives the metric label.
  enum Reason { kMissingToken, kMalformedToken, kUnknownToken, kNumReasons };
  static const char* ReasonName(Reason reason);

  // Reads --auth_tokens `path`; errors name the flag, path and line.
  static absl::StatusOr<std::shared_ptr<TokenAuth>> Load(
      const std::string& path);
  static absl::StatusOr<std::shared_ptr<TokenAuth>> Parse(
      absl::string_view contents);

  // The agent a token belongs to; empty if none (constant-time per token).
  std::string AgentFor(absl::string_view token) const;
  // The agent_ids= patterns of `agent`'s line; null if it gave none.
  const std::vector<std::string>* AgentIdPatterns(
      const std::string& agent) const;
  // Calls refused so far, in all and for one reason.
  int64_t refused() const;
  int64_t refused(Reason reason) const { return refused_[reason].load(); }

  bool IsBlocking() const override { return false; }
  grpc::Status Process(const InputMetadata& metadata,
                       grpc::AuthContext* context, OutputMetadata* consumed,
                       OutputMetadata* response) override;

 private:
  grpc::Status Refuse(Reason reason, const std::string& why);

  // Adds one "agent_name token [agent_ids=...]" line's `fields`.
  absl::Status AddLine(const std::vector<std::string>& fields);

  std::map<std::string, std::string> token_to_agent_;
  std::map<std::string, std::vector<std::string>> agent_id_patterns_;
  std::array<std::atomic<int64_t>, kNumReasons> refused_{};
};

// The agent name TokenAuth put on the call; empty without --auth_tokens.
std::string AuthenticatedAgent(const grpc::AuthContext* context);

// Whether `agent_id` matches one of `patterns` (an id, or a prefix ending in
// '*').
bool AgentIdMatches(const std::vector<std::string>& patterns,
                    absl::string_view agent_id);

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_TOKEN_AUTH_H_
