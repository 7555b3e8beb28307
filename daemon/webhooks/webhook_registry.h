#pragma once
// The daemon's webhooks in memory (they are few), loaded from the store at start-up; the store is
// the record. The API changes them here after its store write succeeded; the outbox
// (webhook_outbox.h) hears of every change and is how the API reaches a webhook's delivery.
// I/O thread only.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/webhooks/webhook_backoff.h"
#include "daemon/webhooks/webhook_storm.h"
#include "proto/json_reader.h"
#include "store/store.h"

namespace trainyard::daemon {

struct WebhookOptions {
  std::vector<std::string> allowed_hosts;  // --webhook-allowed-hosts: where users' webhooks may point
  std::string public_url;                  // --public-url: Slack messages link to the dashboard
  WebhookRetryPolicy backoff;
  StormPolicy storm;
  Millis poll_interval{100};  // how often an idle webhook looks for new events
  int max_per_user = 20;      // --webhook-max-per-user: a user's (not an admin's) webhooks at most
};

// A webhook as the API shows it: never its secret.
Json webhook_json(const store::WebhookRecord& webhook);
Json delivery_json(const store::WebhookDelivery& delivery);

class WebhookRegistry {
 public:
  WebhookRegistry(std::vector<store::WebhookRecord> loaded, std::int64_t max_id);

  std::int64_t next_id() { return ++max_id_; }
  std::optional<store::WebhookRecord> find(std::int64_t id) const;
  std::vector<store::WebhookRecord> list() const;  // in id order
  void add(const store::WebhookRecord& webhook);
  void remove(std::int64_t id);
  // A dead delivery was marked for another try (POST .../deliveries/{n}/retry).
  void retry_requested(std::int64_t id);

  // What the outbox does on each change; the API's test message goes through `send_test`.
  struct Listener {
    std::function<void(const store::WebhookRecord&)> added;
    std::function<void(std::int64_t id)> removed;
    std::function<void(std::int64_t id)> retry_requested;
    // Sends a test message now, outside the event order; `done` gets {"status", "latency_ms", "error"}.
    std::function<void(const store::WebhookRecord&, std::function<void(Json)> done)> send_test;
  };
  void set_listener(Listener listener) { listener_ = std::move(listener); }
  bool can_send() const { return static_cast<bool>(listener_.send_test); }
  void send_test(const store::WebhookRecord& webhook, std::function<void(Json)> done) const;

 private:
  std::map<std::int64_t, store::WebhookRecord> webhooks_;
  std::int64_t max_id_;
  Listener listener_;
};

}  // namespace trainyard::daemon
