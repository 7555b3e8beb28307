#include "daemon/webhooks/webhook_flags.h"

namespace trainyard::daemon {

void add_webhook_flags(FlagParser& flags, WebhookOptions& options, net::HttpClientOptions& client) {
  flags.add_list("webhook-allowed-hosts",
                 "host a user's webhook may point to (repeatable; \"*.example.com\" "
                 "allows its sub-domains); admins' webhooks may point anywhere",
                 &options.allowed_hosts);
  flags.add_string("public-url", "the daemon's address as people reach it; Slack messages link to its dashboard pages",
                   &options.public_url);
  flags.add_string("webhook-ca-file", "PEM CA certificate trusted for HTTPS webhooks besides the system's store",
                   &client.ca_file);
  flags.add_duration<Millis>("webhook-backoff-initial-ms",
                             "a failed webhook delivery is retried within this, the "
                             "bound doubling on each failure (full jitter)",
                             &options.backoff.waits.first, 1, 3'600'000);
  flags.add_duration<Millis>("webhook-backoff-cap-ms", "the largest wait between two tries of a webhook delivery",
                             &options.backoff.waits.cap, 1, 24 * 3'600'000LL);
  flags.add_duration<std::chrono::seconds>("webhook-give-up-s",
                                           "after this long a failing webhook delivery is dead-lettered",
                                           &options.backoff.give_up_after, 1, 30 * 24 * 3600);
  flags.add_int("webhook-max-per-minute",
                "messages one webhook gets a minute at most; the excess is folded into "
                "one summary",
                &options.storm.max_per_minute, 1, 100'000);
  flags.add_int("webhook-failure-reserve",
                "messages one webhook may get a minute beyond --webhook-max-per-minute for a failure "
                "(job.failed, job.stuck, node.down, node.unhealthy, canary.failed), so it never waits "
                "behind informational events",
                &options.storm.failure_reserve, 0, 100'000);
  flags.add_int("webhook-max-per-user",
                "webhooks one user (not an admin) may have at most; each polls the events log and "
                "sends on its own",
                &options.max_per_user, 1, 10'000);
  flags.add_duration<Millis>("webhook-connect-timeout-ms", "to connect to a webhook receiver", &client.connect_timeout,
                             1, 600'000);
  flags.add_duration<Millis>("webhook-timeout-ms", "for a whole webhook request, connect to answer",
                             &client.total_timeout, 1, 600'000);
}

}  // namespace trainyard::daemon
