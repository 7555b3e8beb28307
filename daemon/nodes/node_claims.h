#pragma once
// What a node may claim about itself in its hello. The join token lets a machine in, but it is not
// believed about itself beyond these bounds: a node claiming thousands of cores would draw every
// job, and a data address on another host (or another service of its own) would make honest
// agents dial it in a pre-flight.
#include <cstdint>
#include <string>

#include "proto/flag_parser.h"
#include "proto/messages.h"
#include "proto/result.h"

namespace trainyard::daemon {

struct NodeClaimLimits {
  int max_cores = 1024;                          // --max-node-cores
  std::int64_t max_memory_mb = 64LL * 1024 * 1024;  // --max-node-memory-mb (64 TiB)
};

// The limits as the daemon's flags and config-file keys.
void add_node_claim_flags(FlagParser& flags, NodeClaimLimits& limits);

// "host:port" and "[v6]:port": the host part (brackets kept), as a peer dials it.
std::string host_of(const std::string& address);

// Whether `hello` stays within `limits`, and its data address (when it has one) is on the address
// the connection comes from (`remote`, "address:port" as the server saw it); a refusal is
// invalid_input naming the field and the flag that bounds it.
Result<void> check_node_claims(const HelloMsg& hello, const std::string& remote, const NodeClaimLimits& limits);

}  // namespace trainyard::daemon
