#pragma once
// What a webhook POSTs for an event: the event itself (format "json", event_json) or a message a
// Slack incoming webhook accepts (format "slack": `text`, the fallback line, plus `blocks`).
// Storm folding (webhook_storm.h) sends one summary instead of many events; it renders here too.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "proto/json_reader.h"
#include "store/store.h"

namespace trainyard::daemon {

enum class WebhookFormat { slack, json };
std::string to_string(WebhookFormat format);
std::optional<WebhookFormat> parse_webhook_format(std::string_view text);

// Several events folded into one message: how many, and the line a person reads
// ("37 more job.failed: node_lost on trn-7, trn-8 ...").
struct FoldedEvents {
  std::int64_t first_seq = 0;
  std::int64_t last_seq = 0;
  std::size_t count = 0;
  std::string message;
};
// `events` oldest first, not empty.
FoldedEvents fold_events(std::span<const store::Event> events);

// `public_url` is the daemon's --public-url ("" when unset): Slack messages then link to the
// dashboard page of the event's job (<public-url>/jobs/ID) or node (<public-url>/nodes/NAME).
Json webhook_payload(const store::Event& event, WebhookFormat format, std::string_view public_url);
Json webhook_payload(const FoldedEvents& folded, WebhookFormat format);

// What `webhook test` sends (POST /v1/webhooks/{id}/test), rendered as any event is: a sample of
// the first of a job's failure, a node going down and a job's success that the webhook's event
// globs take (a job's failure when none does), every field filled and its message marked as a
// test, so a user sees the layout before the first real one. Job 0 and node "sample-node" exist nowhere.
store::Event sample_event(const std::vector<std::string>& subscribed, TimePoint now);

}  // namespace trainyard::daemon
