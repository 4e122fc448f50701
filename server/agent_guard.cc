#include "server/agent_guard.h"

#include <optional>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "server/token_auth.h"

namespace goodput::server {
namespace {

constexpr char kOwnerMeta[] = "agent_owner/";

// An id for a message: quoted, escaped, long ones cut.
std::string Quote(absl::string_view id) {
  constexpr size_t kShown = 64;
  return absl::StrCat("\"", absl::CHexEscape(id.substr(0, kShown)),
                      id.size() > kShown ? "\"..." : "\"");
}

}  // namespace

const char* AgentGuard::ReasonName(Reason reason) {
  switch (reason) {
    case kIdTooLong:
      return "id_too_long";
    case kIdentityMismatch:
      return "identity_mismatch";
    case kIdInUse:
      return "id_in_use";
    case kDivergingSequence:
      return "diverging_sequence";
    default:
      return "sequence_jump";
  }
}

AgentGuard::Claims::~Claims() {
  if (guard_ != nullptr) guard_->Release(*this);
}

absl::Status AgentGuard::Admit(const CallIdentity& who,
                               const std::string& agent_id,
                               const std::string& peer, Claims* claims) {
  const bool held = claims->ids_.count(agent_id) > 0;
  if (!held) {
    if (absl::Status s = CheckLength(agent_id); !s.ok()) return s;
  }
  absl::MutexLock lock(&mu_);
  if (held) {
    auto it = streaming_.find(agent_id);
    if (it == streaming_.end() || it->second.claims != claims) {
      return absl::AlreadyExistsError(
          absl::StrCat("batch.agent_id: ", Quote(agent_id),
                       ": this idle stream was taken over by a newer one"));
    }
    it->second.last_batch_ns = clock_->NowNanos();
    return absl::OkStatus();
  }
  if (absl::Status s = CheckOwner(who, agent_id); !s.ok()) return s;
  return Hold(agent_id, peer, claims);
}

absl::Status AgentGuard::Hold(const std::string& agent_id,
                              const std::string& peer, Claims* claims) {
  const int64_t now = clock_->NowNanos();
  auto [it, fresh] =
      streaming_.try_emplace(agent_id, Holder{claims, peer, now});
  Holder& h = it->second;
  if (!fresh && now - h.last_batch_ns <= options_.takeover_after_ns) {
    return Refuse(
        kIdInUse,
        absl::AlreadyExistsError(absl::StrCat(
            "batch.agent_id: ", Quote(agent_id),
            " is already streaming on another connection (from ", h.peer,
            "): two agents share one id (a copied spool "
            "directory?); this stream is refused (docs/delivery.md, "
            "\"Two agents with one id\")")));
  }
  if (!fresh) {  // a dead connection's stream: the agent reconnected
    options_.log.Info(
        absl::StrCat("agent ", Quote(agent_id), ": stream from ", h.peer,
                     " read nothing for ", (now - h.last_batch_ns) / 1000000000,
                     " s; ", peer, " takes it over"),
        {{"agent_id", agent_id}, {"peer", std::string(peer)}});
    if (h.claims->context_ != nullptr) h.claims->context_->TryCancel();
    h = Holder{claims, peer, now};
  }
  claims->ids_.insert(agent_id);
  return absl::OkStatus();
}

absl::Status AgentGuard::CheckLength(const std::string& agent_id) {
  if (agent_id.size() <= options_.max_agent_id_bytes) return absl::OkStatus();
  return Refuse(kIdTooLong, absl::InvalidArgumentError(absl::StrCat(
                                "batch.agent_id: must be at most ",
                                options_.max_agent_id_bytes,
                                " bytes (--max_agent_id_bytes), got ",
                                agent_id.size(), " bytes ", Quote(agent_id))));
}

absl::Status AgentGuard::CheckOwner(const CallIdentity& who,
                                    const std::string& agent_id) {
  if (who.name.empty()) return absl::OkStatus();
  if (who.patterns != nullptr) {
    if (AgentIdMatches(*who.patterns, agent_id)) return absl::OkStatus();
    return Refuse(kIdentityMismatch, absl::PermissionDeniedError(absl::StrCat(
                                         "batch.agent_id: ", Quote(agent_id),
                                         " is not among the "
                                         "agent_ids= of ",
                                         who.name, " in --auth_tokens")));
  }
  std::string owner;
  if (absl::Status s = Owner(agent_id, &owner); !s.ok()) return s;
  if (owner == who.name) return absl::OkStatus();
  if (owner.empty()) {
    if (store_ != nullptr) {
      absl::Status s = store_->WriteMeta(kOwnerMeta + agent_id, who.name);
      if (!s.ok()) {
        return absl::UnavailableError(absl::StrCat(
            "agent ", Quote(agent_id), ": binding not stored: ", s.message()));
      }
    }
    owners_[agent_id] = who.name;
    return absl::OkStatus();
  }
  return Refuse(kIdentityMismatch,
                absl::PermissionDeniedError(absl::StrCat(
                    "batch.agent_id: ", Quote(agent_id), " belongs to ", owner,
                    ", not to this call's ", who.name,
                    " (docs/security.md, \"Agent identities\")")));
}

absl::Status AgentGuard::Owner(const std::string& agent_id,
                               std::string* owner) {
  auto it = owners_.find(agent_id);
  if (it != owners_.end() || store_ == nullptr) {
    *owner = it != owners_.end() ? it->second : "";
    return absl::OkStatus();
  }
  std::optional<std::string> stored;
  absl::Status s = store_->ReadMeta(kOwnerMeta + agent_id, &stored);
  if (!s.ok()) {
    return absl::UnavailableError(absl::StrCat(
        "agent ", Quote(agent_id), ": binding not readable: ", s.message()));
  }
  *owner = stored.value_or("");
  if (stored) owners_[agent_id] = *owner;
  return absl::OkStatus();
}

absl::Status AgentGuard::Refuse(Reason reason, absl::Status status) {
  ++refused_[reason];
  return status;
}

void AgentGuard::Release(const Claims& claims) {
  if (claims.ids_.empty()) return;
  absl::MutexLock lock(&mu_);
  for (const std::string& id : claims.ids_) {
    auto it = streaming_.find(id);
    // Not if another stream took it over.
    if (it != streaming_.end() && it->second.claims == &claims) {
      streaming_.erase(it);
    }
  }
}

}  // namespace goodput::server
