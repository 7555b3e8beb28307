#pragma once
// The agent gateway: agents dial in over WebSocket at /v1/agent/connect with an agent token (the
// join token, or their node's own credential) as a Bearer token; admin and user tokens are refused.
// The first message must be a hello, whose node name the token must admit (node_credentials.h) and
// which the job manager accepts or refuses. Messages are parsed strictly; a malformed one is
// logged and dropped (after hello) or ends the connection with the reason (before hello).
#include "daemon/auth.h"
#include "daemon/job_manager.h"
#include "daemon/store_worker.h"
#include "net/websocket.h"
#include "proto/time.h"

namespace trainyard {

inline constexpr const char* kAgentPath = "/v1/agent/connect";

class AgentGateway {
 public:
  AgentGateway(JobManager& jobs, TokenRegistry& tokens, StoreWorker& store, const TimeSource& clock)
      : jobs_(jobs), tokens_(tokens), store_(store), clock_(clock) {}
  net::WebSocketRoute route();

 private:
  JobManager& jobs_;
  TokenRegistry& tokens_;
  StoreWorker& store_;
  const TimeSource& clock_;
};

}  // namespace trainyard
