#pragma once
// The agent gateway: agents dial in over WebSocket at /v1/agent/connect with the join token as a
// Bearer token; the first message must be a hello, which the job manager accepts or refuses.
// Messages are parsed strictly; a malformed one is logged and dropped (after hello) or ends the
// connection with the reason (before hello).
#include "daemon/auth.h"
#include "daemon/job_manager.h"
#include "net/websocket.h"

namespace trainyard {

inline constexpr const char* kAgentPath = "/v1/agent/connect";

class AgentGateway {
 public:
  AgentGateway(JobManager& jobs, const TokenRegistry& tokens) : jobs_(jobs), tokens_(tokens) {}
  net::WebSocketRoute route();

 private:
  JobManager& jobs_;
  const TokenRegistry& tokens_;
};

}  // namespace trainyard
