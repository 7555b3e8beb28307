#pragma once
// What a change overwrites, named so that two changes can be told to touch the same thing: a job
// (its record and its attempts' records), a node, a share, a webhook (its record, deliveries and
// cursor) or a token. Rows only ever appended (events, metrics, health checks, samples) are not
// named: no later change rewrites them.
//
// The store worker refuses a change to a thing made before the failure of an earlier change to it
// was heard (store_worker.h), and the daemon's waiting changes tell which requests they carry
// (daemon/pending_writes.h).
#include <string>
#include <vector>

#include "store/store.h"

namespace trainyard::daemon {

// Sorted, without repeats: "job/ID", "node/NAME", "share/NAME", "webhook/ID", "token/HASH".
std::vector<std::string> changed_entities(const store::Change& change);

}  // namespace trainyard::daemon
