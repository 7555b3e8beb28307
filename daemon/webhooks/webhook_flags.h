#pragma once
// Webhook delivery's settings as the daemon's flags and config-file keys: where users' webhooks may
// point, links in messages, retries, storm control, and the outbound client's timeouts.
#include "daemon/webhooks/webhook_registry.h"
#include "net/http_client.h"
#include "proto/flag_parser.h"

namespace trainyard::daemon {

void add_webhook_flags(FlagParser& flags, WebhookOptions& options, net::HttpClientOptions& client);

}  // namespace trainyard::daemon
