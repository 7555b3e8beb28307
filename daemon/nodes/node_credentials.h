#pragma once
// Each node's own credential, so that holding the join token does not let anyone be any node.
//
// The join token only introduces a node name that has no credential yet: its first accepted hello
// makes the node a credential (a token of role agent whose user is node_token_user(name), stored
// hashed like every token), whose secret the welcome carries once; the agent keeps it (mode 0600
// in its work directory) and presents it from then on. A node credential says hello only as its
// own node, and the join token no longer admits that name, so a second connection cannot take a
// node's place. To replace a node whose credential is lost (a reinstalled machine), an admin
// forgets it (DELETE /v1/nodes/{name}/credential, refused while the node is connected); the next
// agent to join under that name with the join token gets a new one.
//
// Threading contract: I/O thread only (the TokenRegistry's).
#include <functional>
#include <string>

#include "daemon/base/audit.h"
#include "daemon/base/auth.h"
#include "daemon/base/store_worker.h"

namespace trainyard::daemon {

// Whether a connection authenticated as `who` may say hello as `node`; a refusal is forbidden and
// says why.
Result<void> check_node_hello(const TokenRegistry& tokens, const Principal& who, const std::string& node);

// Whether a connection authenticated as `who` may report that `node`'s dead agent's attempts
// stopped (its fence keeper's attempts_stopped): only the node's own credential may, since the
// report makes the daemon lose the node's ranks; the join token names no node. A refusal is
// forbidden and says why.
Result<void> check_stop_report(const Principal& who, const std::string& node);

// Makes `node` a credential. It is in the registry at once, so a second join of the name is
// refused while the first is being stored; `done` gets its secret once it is durable, or
// unavailable when the store failed (the credential is then withdrawn).
void issue_node_credential(TokenRegistry& tokens, StoreWorker& store, TimePoint now, const std::string& node,
                           std::function<void(Result<std::string> secret)> done);

// Deletes `node`'s credential, from the store first; `by` says who or why, for the log.
// `done` gets not_found when it has none, unavailable when the store failed.
void forget_node_credential(TokenRegistry& tokens, StoreWorker& store, const std::string& node, const std::string& by,
                            std::function<void(Result<void> forgotten)> done, AuditOf audit = nullptr);

}  // namespace trainyard::daemon
