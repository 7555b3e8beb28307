#pragma once
// Event retention: events older than --event-retention-days are deleted, except
// those a webhook has not had yet: on the store thread, in one step with the delete, the prune asks
// the store for the oldest seq any webhook still needs (Store::webhooks_keep_from_seq) and keeps it
// and everything after it. Cursors only move forward, so nothing needed can slip between the two.
#include <chrono>
#include <cstdint>

#include "daemon/base/store_worker.h"
#include "proto/time.h"

namespace trainyard::daemon {

// Queues the prune on the store worker; logs how many went.
void prune_events(StoreWorker& worker, TimePoint now, std::chrono::hours retention);

}  // namespace trainyard::daemon
