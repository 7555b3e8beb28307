#pragma once
// What a webhook subscribes to, as POST /v1/webhooks gives it, validated,
// and which events it wants. Pure.
#include <string>
#include <string_view>
#include <vector>

#include "proto/json_reader.h"
#include "store/store.h"

namespace trainyard::daemon {

struct WebhookRequest {
  std::string url;                  // checked by parse_webhook_url
  std::vector<std::string> events;  // globs, each matching at least one event type (events.h)
  std::string format = "slack";
  Json filter = Json::object();     // {"share", "user", "job"}
};

// Parses and validates a POST /v1/webhooks body; throws InvalidInput naming the field (unknown
// fields, an unknown format, an event glob no type matches, over-long values).
WebhookRequest parse_webhook_request(const Json& body);

// For a user's (not an admin's) webhook: throws InvalidInput naming the glob that names audit events.
void check_user_webhook_events(const std::vector<std::string>& events);

// Whether `webhook` delivers `event`: its type matches one of the globs and the filter agrees; a
// user's webhook (restricted) never delivers audit events.
bool webhook_wants(const store::WebhookRecord& webhook, const store::Event& event);

}  // namespace trainyard::daemon
