#pragma once
// The agent gateway: agents dial in over WebSocket at /v1/agent/connect with an agent token (the
// join token, or their node's own credential) as a Bearer token; admin and user tokens are refused.
// The first message must be a hello, whose node name the token must admit (node_credentials.h) and
// which the job manager accepts or refuses, or a dead agent's fence keeper's attempts_stopped,
// which only the node's own credential may send (check_stop_report), answered stop_noted before the
// connection is closed. Messages are parsed strictly; a malformed one is
// logged and dropped (after hello) or ends the connection with the reason (before hello).
// Revoking the token a connection was opened with closes it, unless it is the join token of a
// node that has joined since (the node holds its own credential by then).
// With mutual TLS (`require_client_certificate`, the daemon's --agent-client-ca) an agent must
// also present a certificate from that CA, and the name in its hello must be one the certificate
// is issued to (net::certificate_names: a DNS subject alternative name, else the CN).
#include <memory>
#include <unordered_map>

#include "daemon/base/auth.h"
#include "daemon/base/store_worker.h"
#include "daemon/job_manager.h"
#include "daemon/nodes/node_claims.h"
#include "net/websocket.h"
#include "proto/time.h"

namespace trainyard::daemon {

inline constexpr const char* kAgentPath = "/v1/agent/connect";

class AgentSession;

class AgentGateway {
 public:
  // Listens to `tokens` for revocations: it must outlive the gateway.
  AgentGateway(JobManager& jobs, TokenRegistry& tokens, StoreWorker& store, const TimeSource& clock,
               bool require_client_certificate = false);
  // Bounds on what a node may claim about itself (node_claims.h); defaults until set.
  void set_node_claim_limits(const NodeClaimLimits& limits) { claim_limits_ = limits; }
  net::WebSocketRoute route();
  // Agent connections opened and not yet closed.
  std::size_t open_sessions() const { return sessions_.size(); }

 private:
  void token_revoked(const store::TokenRecord& token);

  JobManager& jobs_;
  TokenRegistry& tokens_;
  StoreWorker& store_;
  const TimeSource& clock_;
  const bool require_client_certificate_;
  NodeClaimLimits claim_limits_;
  // The open sessions, for revocations. Each leaves as it closes (on_closed comes once for every
  // connection), so a connection costs the same however many are open: pruning closed ones on each
  // new connection walked them all, ~6% of the daemon's CPU while 10,000 nodes joined (bench/fleet).
  std::unordered_map<const AgentSession*, std::weak_ptr<AgentSession>> sessions_;
};

}  // namespace trainyard::daemon
