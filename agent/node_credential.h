#pragma once
// The node's own credential (daemon/node_credentials.h): the daemon issues it in the welcome of
// the node's first join; the agent keeps it in its work directory, readable by its user only, and
// presents it instead of the join token from then on, across reconnects and restarts. The join
// token no longer admits the node's name, so losing this file means an admin must forget the
// node's credential (DELETE /v1/nodes/{name}/credential) before the node can join again.
#include <string>

namespace trainyard::agent {

std::string node_credential_path(const std::string& work_dir);
// The saved credential, or "" when there is none.
std::string load_node_credential(const std::string& path);
// Replaces the file atomically (temporary file, fsync, rename), mode 0600. Throws on failure.
void save_node_credential(const std::string& path, const std::string& secret);

}  // namespace trainyard::agent
