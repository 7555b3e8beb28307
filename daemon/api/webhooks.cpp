// Webhooks: create (the secret shown once), list, show, delete, send a test message, list
// deliveries, re-send a dead-lettered one. Admins manage every webhook and may point one anywhere;
// users only their own, for their own jobs' events, to hosts on --webhook-allowed-hosts.
#include <algorithm>
#include <map>
#include <spdlog/spdlog.h>

#include "daemon/api/auditor.h"
#include "daemon/api/call.h"
#include "daemon/api/paging.h"
#include "daemon/api/query.h"
#include "daemon/api/webhooks.h"
#include "daemon/base/store_worker.h"
#include "daemon/webhooks/webhook_signature.h"
#include "daemon/webhooks/webhook_spec.h"
#include "daemon/webhooks/webhook_url.h"
#include "proto/flag_parser.h"

namespace trainyard::daemon {
namespace {

bool may_see(const ApiCall& call, const store::WebhookRecord& webhook) {
  return call.who.may(Action::manage_webhooks) || webhook.owner == call.who.user;
}

}  // namespace

std::optional<std::string> WebhooksApi::no_room_for_another(const ApiCall& call) const {
  const std::vector<store::WebhookRecord> all = webhooks_.list();
  const auto owned = std::count_if(all.begin(), all.end(), [&](const store::WebhookRecord& w) { return w.owner == call.who.user; });
  const auto creating = being_created_.find(call.who.user);
  const int held = static_cast<int>(owned) + (creating == being_created_.end() ? 0 : creating->second);
  if (held < options_.max_per_user) return std::nullopt;
  return "user " + call.who.user + " already has " + std::to_string(held) +
         " webhooks, the most one user may have (--webhook-max-per-user " + std::to_string(options_.max_per_user) +
         "); delete one first";
}

void WebhooksApi::creation_answered(const ApiCall& call) {
  if (call.who.may(Action::manage_webhooks)) return;
  if (--being_created_[call.who.user] <= 0) being_created_.erase(call.who.user);
}

void WebhooksApi::with_webhook(ApiCall call, std::function<void(ApiCall, store::WebhookRecord)> then) {
  std::int64_t id = 0;
  try {
    id = call.id();
  } catch (const InvalidInput& e) {
    return call.invalid(e);
  }
  const auto webhook = webhooks_.find(id);
  // Another user's webhook answers as a missing one does.
  if (!webhook || !may_see(call, *webhook))
    return call.fail(Error::not_found("webhook " + std::to_string(id) + " does not exist"));
  then(std::move(call), *webhook);
}

void WebhooksApi::create_webhook(ApiCall call) {
  WebhookRequest request;
  try {
    request = parse_webhook_request(parse_json_text(call.request.body));
    if (!call.who.may(Action::manage_webhooks)) {
      check_user_webhook_events(request.events);
      check_user_webhook_host(parse_webhook_url(request.url, "url"), options_.allowed_hosts, "url");
      if (request.filter.contains("user") && request.filter["user"] != call.who.user) {
        throw InvalidInput("filter.user", "a user's webhook gets only the events of their own jobs");
      }
      request.filter["user"] = call.who.user;
    }
  } catch (const InvalidInput& e) {
    return call.invalid_body(e);
  }
  if (!call.who.may(Action::manage_webhooks)) {
    if (const auto full = no_room_for_another(call)) return call.fail(Error::conflict(*full));
    ++being_created_[call.who.user];
  }
  store::WebhookRecord webhook{webhooks_.next_id(),
                               call.who.user,
                               clock_.system_now(),
                               request.url,
                               request.events,
                               request.format,
                               request.filter,
                               generate_webhook_secret(),
                               0,
                               !call.who.may(Action::manage_webhooks)};
  // A new webhook hears of events from now on: its cursor starts at the newest event.
  store_.read(
      [this, call, webhook](store::Store& store) mutable {
        webhook.cursor_seq = store.last_event_seq();
        return std::function<void()>([this, call, webhook] { store_new_webhook(call, webhook); });
      },
      [this, call](const Error& error) {
        creation_answered(call);
        call.fail(Error::unavailable("could not read the events log: " + error.message));
      });
}

void WebhooksApi::store_new_webhook(const ApiCall& call, const store::WebhookRecord& webhook) {
  store::Change change;
  change.webhooks.push_back(webhook);
  change.events.push_back(
      audit_.event(call, {"webhook.created",
                          call.route(),
                          std::to_string(webhook.id),
                          {{"url", url_without_path(parse_webhook_url(webhook.url, "url"))}, {"events", webhook.events}, {"owner", webhook.owner}}}));
  store_.write(std::move(change), [this, call, webhook](const Result<void>& written, store::Change&) {
    creation_answered(call);
    if (!written) return call.fail(Error::unavailable("the new webhook could not be stored; nothing was changed"));
    webhooks_.add(webhook);
    spdlog::info("event=webhook_created id={} owner={} host={}", webhook.id, webhook.owner,
                 parse_webhook_url(webhook.url, "url").host);
    Json body = webhook_json(webhook);
    body["secret"] = webhook.secret;
    call.reply(201, body);
  });
}

void WebhooksApi::list_webhooks(ApiCall call) {
  Json list = Json::array();
  for (const store::WebhookRecord& w : webhooks_.list()) {
    if (may_see(call, w)) list.push_back(webhook_json(w));
  }
  call.reply(200, {{"webhooks", list}});
}

void WebhooksApi::get_webhook(ApiCall call) {
  with_webhook(std::move(call), [](ApiCall call, store::WebhookRecord webhook) { call.reply(200, webhook_json(webhook)); });
}

void WebhooksApi::delete_webhook(ApiCall call) {
  with_webhook(std::move(call), [this](ApiCall call, store::WebhookRecord webhook) {
    store::Change change;
    change.deleted_webhooks.push_back(webhook.id);
    change.events.push_back(audit_.event(call, {"webhook.deleted",
                                                call.route(),
                                                std::to_string(webhook.id),
                                                {{"url", url_without_path(parse_webhook_url(webhook.url, "url"))}, {"owner", webhook.owner}}}));
    store_.write(std::move(change), [this, call, id = webhook.id](const Result<void>& written, store::Change&) {
      if (!written) return call.fail(Error::unavailable("the deletion of webhook " + std::to_string(id) +
                                                               " could not be stored; nothing was changed"));
      webhooks_.remove(id);
      spdlog::info("event=webhook_deleted id={} by={}", id, call.who.user);
      call.reply(200, {{"id", id}, {"deleted", true}});
    });
  });
}

void WebhooksApi::test_webhook(ApiCall call) {
  with_webhook(std::move(call), [this](ApiCall call, store::WebhookRecord webhook) {
    if (!webhooks_.can_send()) return call.fail(Error::unavailable("webhook delivery is not running"));
    webhooks_.send_test(webhook, [call](Json result) { call.reply(200, result); });
  });
}

namespace {

// How many of a page's events are read to name their types: a page of deliveries stays one
// bounded store task however many events each carried.
constexpr int kDeliveryEventBudget = 20'000;

// The types of the events `delivery` carried (those of its range the webhook takes), counted;
// null when the page's budget is spent (store thread).
Json delivered_types(store::Store& store, const store::WebhookRecord& webhook, const store::WebhookDelivery& delivery,
                     int& budget) {
  const std::int64_t span = delivery.last_seq - delivery.first_seq + 1;
  if (span <= 0 || span > budget) return nullptr;
  budget -= static_cast<int>(span);
  std::map<std::string, int> types;
  for (const store::Event& e : store.events_after(delivery.first_seq - 1, static_cast<int>(span))) {
    if (e.seq <= delivery.last_seq && webhook_wants(webhook, e)) ++types[e.kind];
  }
  return types;
}

}  // namespace

void WebhooksApi::webhook_deliveries(ApiCall call) {
  std::optional<std::int64_t> before;
  int limit = 100;
  try {
    before = query_int(call.request, "before");
    const PageRequest page = page_request(call.request, "deliveries", 100);
    limit = static_cast<int>(*page.limit);
    if (page.after) before = cursor_number(*page.after);
  } catch (const InvalidInput& e) {
    return call.invalid(e);
  }
  with_webhook(std::move(call), [this, before, limit](ApiCall call, store::WebhookRecord webhook) {
    store_.read(
        [call, webhook, before, limit](store::Store& store) {
          auto found = store.webhook_deliveries(webhook.id, before, limit + 1);
          Json next = nullptr;
          if (std::ssize(found) > limit) {
            found.pop_back();
            next = page_cursor(call.request, "deliveries", std::to_string(found.back().n));
          }
          Json list = Json::array();
          int budget = kDeliveryEventBudget;
          for (const store::WebhookDelivery& d : found) {
            list.push_back(delivery_json(d));
            list.back()["event_types"] = delivered_types(store, webhook, d, budget);
          }
          return std::function<void()>([call, body = Json{{"deliveries", list}, {"next", next}}] { call.reply(200, body); });
        },
        [call](const Error& error) { call.fail(error.during("could not read deliveries")); });
  });
}

void WebhooksApi::retry_webhook_delivery(ApiCall call) {
  std::int64_t n = 0;
  try {
    n = parse_integer("n", call.param("n"), 1, INT64_MAX);
  } catch (const InvalidInput& e) {
    return call.invalid(e);
  }
  with_webhook(std::move(call), [this, n](ApiCall call, store::WebhookRecord webhook) {
    store_.read(
        [this, call, id = webhook.id, n](store::Store& store) {
          const auto found = store.webhook_deliveries(id, n + 1, 1);
          std::optional<store::WebhookDelivery> delivery;
          if (!found.empty() && found.front().n == n) delivery = found.front();
          return std::function<void()>([this, call, id, n, delivery] { resend_delivery(call, id, n, delivery); });
        },
        [call](const Error& error) { call.fail(error.during("could not read deliveries")); });
  });
}

void WebhooksApi::resend_delivery(const ApiCall& call, std::int64_t id, std::int64_t n,
                                  std::optional<store::WebhookDelivery> delivery) {
  const std::string name = "delivery " + std::to_string(n) + " of webhook " + std::to_string(id);
  if (!delivery) return call.fail(Error::not_found(name + " does not exist"));
  if (delivery->state != store::DeliveryState::dead) {
    return call.fail(
        Error::conflict(name + " is " + to_string(delivery->state) + "; only dead-lettered ones are re-sent"));
  }
  delivery->state = store::DeliveryState::retrying;
  delivery->attempts = 0;
  delivery->first_attempt_at = clock_.system_now();
  delivery->next_attempt_at = clock_.system_now();
  store::Change change;
  change.webhook_deliveries.push_back(*delivery);
  change.events.push_back(audit_.event(
      call, {"webhook.delivery_retried",
             call.route(),
             std::to_string(id),
             {{"delivery", n}, {"first_event", delivery->first_seq}, {"last_event", delivery->last_seq}}}));
  store_.write(std::move(change), [this, call, id, name, committed = *delivery](const Result<void>& written, store::Change&) {
    if (!written) return call.fail(Error::unavailable("the retry of " + name + " could not be stored; nothing was changed"));
    webhooks_.retry_requested(id);
    call.reply(202, delivery_json(committed));
  });
}

}  // namespace trainyard::daemon
