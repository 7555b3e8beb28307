#pragma once
// What a dead agent's fence keeper tells the daemon once it has stopped the agent's attempts
// (agent/fence_keeper_process.h): attempts_stopped, over a connection of its own to the daemon's
// agent gateway with the node's own credential, as the agent itself connects. Without the report
// the daemon must wait the time the keeper may take (the kill grace and a margin,
// daemon/policy/recovery.h) before it replaces the attempts; with it they are replaced at once.
//
// Blocking: the keeper has nothing else to do by then.
#include <chrono>
#include <string>
#include <vector>

#include "net/tls.h"
#include "proto/job.h"

namespace trainyard::agent {

// Where and as whom the keeper reports: the agent's own settings.
struct StopReportTarget {
  std::vector<std::string> servers;  // the agent's --server list, in its order
  net::TlsClientFiles tls;           // for https://, as the agent's
  std::string credential_file;       // the node's credential (agent/node_credential.h)
};

// Reports `attempts` of `node` stopped to the daemon of `target` that takes it (a standby's redirect
// within the list is followed, as the agent follows it), going round the list until `within` has
// passed. True once a daemon noted it; false, logged with why, when none did in time, one refused
// it, or the node has no credential yet.
bool report_attempts_stopped(const StopReportTarget& target, const std::string& node,
                             const std::vector<AttemptId>& attempts, std::chrono::milliseconds within);

}  // namespace trainyard::agent
