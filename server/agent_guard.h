// AgentGuard: goodputd's checks of the agent_id a stream's batches carry
// (docs/security.md, "Agent identities"), before the Ingestor sees them:
//  * the id is at most --max_agent_id_bytes long (it becomes a metric label);
//  * the call's credentials may use it: a token line's agent_ids= patterns,
//    else the first credentials (token name or client certificate) that used
//    the id own it, recorded in the store's meta records so a restart keeps
//    the binding; unauthenticated calls are not bound;
//  * no other live stream uses it (two agents with one id: a cloned spool),
//    unless that stream has been idle longer than the takeover time: then
//    it is a dead connection's (the agent reconnected) and is cancelled.
// Refusals are counted by reason (goodput_agent_refused_total). Does not own
// the store or clock, which must outlive it. Thread-safe.
#ifndef GOODPUT_SERVER_AGENT_GUARD_H_
#define GOODPUT_SERVER_AGENT_GUARD_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/server_context.h"
#include "storage/event_store.h"
#include "util/clock.h"
#include "util/logger.h"

namespace goodput::server {

// Who a call is: `name` ("token NAME", "certificate IDENTITY"; empty when
// unauthenticated) and the agent ids its token line allows (null = any id
// the name was the first to use).
struct CallIdentity {
  std::string name;
  const std::vector<std::string>* patterns = nullptr;
};

class AgentGuard {
 public:
  // Why a batch's agent_id was refused; ReasonName gives the metric label.
  // (kSequenceJump and kDivergingSequence are the Ingestor's, counted in
  // IngestStats.)
  enum Reason {
    kIdTooLong,
    kIdentityMismatch,
    kIdInUse,
    kSequenceJump,
    kDivergingSequence,
    kNumReasons
  };
  static const char* ReasonName(Reason reason);

  struct Options {
    size_t max_agent_id_bytes = 128;  // --max_agent_id_bytes
    // A stream that read no batch for this long yields its ids to a new
    // stream (--agent_takeover_after).
    int64_t takeover_after_ns = int64_t{180} * 1000 * 1000 * 1000;
    Logger log{"goodputd"};  // where takeovers are logged
  };

  // The agent ids one stream holds; released when it is destroyed. A null
  // guard holds none. `context` (may be null in tests) is cancelled when
  // another stream takes the ids over.
  class Claims {
   public:
    explicit Claims(AgentGuard* guard, grpc::ServerContext* context = nullptr)
        : guard_(guard), context_(context) {}
    ~Claims();
    Claims(const Claims&) = delete;
    Claims& operator=(const Claims&) = delete;

   private:
    friend class AgentGuard;
    AgentGuard* const guard_;
    grpc::ServerContext* const context_;
    std::set<std::string> ids_;
  };

  // `store` may be null (bindings then last until restart).
  AgentGuard(Options options, storage::EventStore* store, Clock* clock)
      : options_(options), store_(store), clock_(clock) {}

  // OK if `who` may send a batch under `agent_id` on the stream holding
  // `claims`, from `peer` (gRPC's peer address); then `claims` holds the id.
  // Errors name the id: InvalidArgument (too long), PermissionDenied (bound to
  // other credentials), AlreadyExists (another live stream holds it),
  // Unavailable (the binding could not be read or stored). Each batch of a
  // stream calls it (that is how idle time is measured).
  absl::Status Admit(const CallIdentity& who, const std::string& agent_id,
                     const std::string& peer, Claims* claims);

  int64_t refused(Reason reason) const { return refused_[reason].load(); }

 private:
  absl::Status CheckLength(const std::string& agent_id);
  absl::Status CheckOwner(const CallIdentity& who, const std::string& agent_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The recorded owner of `agent_id` ("" if none) in `*owner`.
  absl::Status Owner(const std::string& agent_id, std::string* owner)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Claims `agent_id` for `claims`, taking it over from an idle holder.
  absl::Status Hold(const std::string& agent_id, const std::string& peer,
                    Claims* claims) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Refuse(Reason reason, absl::Status status);
  void Release(const Claims& claims);

  // The live stream holding an agent id.
  struct Holder {
    Claims* claims;
    std::string peer;
    int64_t last_batch_ns;
  };

  const Options options_;
  storage::EventStore* const store_;
  Clock* const clock_;
  absl::Mutex mu_;
  std::map<std::string, std::string> owners_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Holder> streaming_ ABSL_GUARDED_BY(mu_);
  std::array<std::atomic<int64_t>, kNumReasons> refused_{};
};

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_AGENT_GUARD_H_
