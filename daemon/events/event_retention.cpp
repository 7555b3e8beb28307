#include "daemon/events/event_retention.h"

#include <spdlog/spdlog.h>

namespace trainyard::daemon {

void prune_events(StoreWorker& worker, TimePoint now, std::chrono::hours retention) {
  const TimePoint older_than = now - retention;
  worker.read(
      [older_than](store::Store& store) {
        const std::int64_t keep_from_seq = store.webhooks_keep_from_seq().value_or(INT64_MAX);
        const std::int64_t pruned = store.prune_events(older_than, keep_from_seq);
        return StoreWorker::Continuation([pruned, keep_from_seq] {
          if (pruned > 0) spdlog::info("event=events_pruned count={} keep_from_seq={}", pruned, keep_from_seq);
        });
      },
      [](const Error& error) { spdlog::error("event=events_prune_failed error=\"{}\"", error.message); });
}

}  // namespace trainyard::daemon
