#pragma once
// Event retention (issue 15 item 1): events older than --event-retention-days are deleted, except
// those a reader still needs. The daemon asks `EventsStillNeeded` before each prune, on the I/O
// thread: it returns the lowest seq some reader has not had yet (the webhook outbox's oldest
// undelivered event, once webhooks exist), and nothing at or above it is pruned. The default
// needs nothing (INT64_MAX). To add a reader, compose it into this one function (the minimum).
#include <chrono>
#include <cstdint>
#include <functional>

#include "daemon/store_worker.h"
#include "proto/time.h"

namespace trainyard {

using EventsStillNeeded = std::function<std::int64_t()>;
inline std::int64_t no_event_still_needed() { return INT64_MAX; }

// Queues the prune on the store worker; logs how many went.
void prune_events(StoreWorker& worker, TimePoint now, std::chrono::hours retention, const EventsStillNeeded& still_needed);

}  // namespace trainyard
