#include "daemon/webhooks/webhook_registry.h"

#include "proto/time.h"

namespace trainyard::daemon {

Json webhook_json(const store::WebhookRecord& w) {
  return {{"id", w.id},         {"owner", w.owner},   {"created_at", format_time(w.created_at)},
          {"url", w.url},       {"events", w.events}, {"format", w.format},
          {"filter", w.filter}, {"cursor", w.cursor_seq}};
}

Json delivery_json(const store::WebhookDelivery& d) {
  return {{"n", d.n},
          {"first_event", d.first_seq},
          {"last_event", d.last_seq},
          {"state", to_string(d.state)},
          {"attempts", d.attempts},
          {"first_attempt_at", format_time(d.first_attempt_at)},
          {"next_retry_at", d.next_attempt_at ? Json(format_time(*d.next_attempt_at)) : Json(nullptr)},
          {"log", d.log}};
}

WebhookRegistry::WebhookRegistry(std::vector<store::WebhookRecord> loaded, std::int64_t max_id) : max_id_(max_id) {
  for (store::WebhookRecord& w : loaded) webhooks_.emplace(w.id, std::move(w));
}

std::optional<store::WebhookRecord> WebhookRegistry::find(std::int64_t id) const {
  const auto it = webhooks_.find(id);
  if (it == webhooks_.end()) return std::nullopt;
  return it->second;
}

std::vector<store::WebhookRecord> WebhookRegistry::list() const {
  std::vector<store::WebhookRecord> out;
  for (const auto& [id, w] : webhooks_) out.push_back(w);
  return out;
}

void WebhookRegistry::add(const store::WebhookRecord& webhook) {
  webhooks_.insert_or_assign(webhook.id, webhook);
  if (listener_.added) listener_.added(webhook);
}

void WebhookRegistry::remove(std::int64_t id) {
  webhooks_.erase(id);
  if (listener_.removed) listener_.removed(id);
}

void WebhookRegistry::retry_requested(std::int64_t id) {
  if (listener_.retry_requested) listener_.retry_requested(id);
}

void WebhookRegistry::send_test(const store::WebhookRecord& webhook, std::function<void(Json)> done) const {
  listener_.send_test(webhook, std::move(done));
}

}  // namespace trainyard::daemon
