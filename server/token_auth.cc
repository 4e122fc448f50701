#include "server/token_auth.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "grpcpp/security/auth_context.h"
#include "util/basic_auth.h"
#include "util/secret_file.h"

namespace goodput::server {

const char* TokenAuth::ReasonName(Reason reason) {
  switch (reason) {
    case kMissingToken:
      return "missing_token";
    case kMalformedToken:
      return "malformed_token";
    default:
      return "unknown_token";
  }
}

int64_t TokenAuth::refused() const {
  int64_t sum = 0;
  for (const auto& n : refused_) sum += n.load();
  return sum;
}

grpc::Status TokenAuth::Refuse(Reason reason, const std::string& why) {
  ++refused_[reason];
  return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, why);
}

absl::StatusOr<std::shared_ptr<TokenAuth>> TokenAuth::Load(
    const std::string& path) {
  auto contents = ReadSecretFile("--auth_tokens", path);
  if (!contents.ok()) return contents.status();
  auto auth = Parse(*contents);
  if (!auth.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--auth_tokens: ", path, ": ", auth.status().message()));
  }
  return auth;
}

absl::StatusOr<std::shared_ptr<TokenAuth>> TokenAuth::Parse(
    absl::string_view contents) {
  auto auth = std::make_shared<TokenAuth>();
  int number = 0;
  for (absl::string_view line : absl::StrSplit(contents, '\n')) {
    ++number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (absl::Status s = auth->AddLine(fields); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", number, ": ", s.message()));
    }
  }
  if (auth->token_to_agent_.empty()) {
    return absl::InvalidArgumentError("no \"agent_name token\" line");
  }
  return auth;
}

absl::Status TokenAuth::AddLine(const std::vector<std::string>& fields) {
  if (fields.size() != 2 && fields.size() != 3) {
    return absl::InvalidArgumentError(
        "want \"agent_name token [agent_ids=PATTERN,...]\"");
  }
  if (fields.size() == 3) {
    absl::string_view ids = fields[2];
    if (!absl::ConsumePrefix(&ids, "agent_ids=") || ids.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "third field: want agent_ids=PATTERN,... got \"", fields[2], "\""));
    }
    std::vector<std::string>& patterns = agent_id_patterns_[fields[0]];
    for (absl::string_view p : absl::StrSplit(ids, ',', absl::SkipEmpty())) {
      patterns.emplace_back(p);
    }
  }
  if (!token_to_agent_.emplace(fields[1], fields[0]).second) {
    return absl::InvalidArgumentError(absl::StrCat(
        "token of ", fields[0], " is already used by another agent"));
  }
  return absl::OkStatus();
}

const std::vector<std::string>* TokenAuth::AgentIdPatterns(
    const std::string& agent) const {
  auto it = agent_id_patterns_.find(agent);
  return it == agent_id_patterns_.end() ? nullptr : &it->second;
}

bool AgentIdMatches(const std::vector<std::string>& patterns,
                    absl::string_view agent_id) {
  for (absl::string_view p : patterns) {
    if (absl::ConsumeSuffix(&p, "*") ? absl::StartsWith(agent_id, p)
                                     : agent_id == p) {
      return true;
    }
  }
  return false;
}

std::string TokenAuth::AgentFor(absl::string_view token) const {
  std::string agent;
  for (const auto& [known, name] : token_to_agent_) {
    if (ConstantTimeEquals(known, token)) agent = name;  // no early exit
  }
  return agent;
}

grpc::Status TokenAuth::Process(const InputMetadata& metadata,
                                grpc::AuthContext* context,
                                OutputMetadata* /*consumed*/,
                                OutputMetadata* /*response*/) {
  auto it = metadata.find("authorization");
  if (it == metadata.end()) {
    return Refuse(kMissingToken,
                  "a bearer token is required (goodput-agent and goodputctl "
                  "--auth_token_file)");
  }
  absl::string_view value(it->second.data(), it->second.size());
  if (!absl::ConsumePrefix(&value, "Bearer ")) {
    return Refuse(kMalformedToken, "authorization: want \"Bearer TOKEN\"");
  }
  std::string agent = AgentFor(value);
  if (agent.empty()) return Refuse(kUnknownToken, "unknown bearer token");
  // Not consumed: in cluster mode the Query service forwards it to the
  // other members (server/peer_client.h), which check it again.
  context->AddProperty(kAgentProperty, agent);
  return grpc::Status::OK;
}

std::string AuthenticatedAgent(const grpc::AuthContext* context) {
  if (context == nullptr) return "";
  std::vector<grpc::string_ref> values =
      context->FindPropertyValues(TokenAuth::kAgentProperty);
  if (values.empty()) return "";
  return std::string(values.back().data(), values.back().size());
}

}  // namespace goodput::server
