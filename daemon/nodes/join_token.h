#pragma once
// Rotating the join token (POST /v1/tokens/join/rotate). The join token only introduces nodes
// that have no credential yet (node_credentials.h), so replacing it leaves every joined node, and
// its open connection, as it was; a node that has not joined yet needs the new secret.
//
// Threading contract: I/O thread only (the TokenRegistry's).
#include <filesystem>
#include <functional>
#include <string>

#include "daemon/base/audit.h"
#include "daemon/base/auth.h"
#include "daemon/base/store_worker.h"

namespace trainyard::daemon {

// The token user of the join token.
inline constexpr const char* kJoinTokenUser = "agent";

// Whether `token` is a join token (an agent token bound to no node).
bool is_join_token(const store::TokenRecord& token);

// Replaces every join token with a new one: stored first (the new one in, the old ones out), then
// in memory, then written to `file` (0600) for whoever starts agents on the daemon's host.
// `done` gets the new secret, or unavailable when the store failed (nothing changed).
// A file that could not be written is logged: the new secret is valid and returned all the same.
void rotate_join_token(TokenRegistry& tokens, StoreWorker& store, const std::filesystem::path& file, TimePoint now,
                       std::function<void(Result<std::string> secret)> done, AuditOf audit = nullptr);

}  // namespace trainyard::daemon
