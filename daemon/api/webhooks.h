#pragma once
// /v1/webhooks: create (the secret shown once), list, show, delete, send a test message, list
// deliveries, re-send a dead-lettered one.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "daemon/webhooks/webhook_registry.h"
#include "proto/time.h"
#include "store/store.h"

namespace trainyard::daemon {

struct ApiCall;
class Auditor;
class StoreWorker;

class WebhooksApi {
 public:
  WebhooksApi(WebhookRegistry& webhooks, WebhookOptions options, StoreWorker& store, Auditor& audit,
              const TimeSource& clock)
      : webhooks_(webhooks), options_(std::move(options)), store_(store), audit_(audit), clock_(clock) {}

  void create_webhook(ApiCall call);
  void list_webhooks(ApiCall call);
  void get_webhook(ApiCall call);
  void delete_webhook(ApiCall call);
  void test_webhook(ApiCall call);
  void webhook_deliveries(ApiCall call);
  void retry_webhook_delivery(ApiCall call);

 private:
  // The route's webhook {id} if the caller may see it (else a 404), then continues.
  void with_webhook(ApiCall call, std::function<void(ApiCall, store::WebhookRecord)> then);
  void store_new_webhook(const ApiCall& call, const store::WebhookRecord& webhook);
  void resend_delivery(const ApiCall& call, std::int64_t id, std::int64_t n,
                       std::optional<store::WebhookDelivery> delivery);

  // Why a user may not have another webhook (--webhook-max-per-user, counting those being stored),
  // or nothing when they may.
  std::optional<std::string> no_room_for_another(const ApiCall& call) const;
  void creation_answered(const ApiCall& call);

  WebhookRegistry& webhooks_;
  WebhookOptions options_;
  std::map<std::string, int> being_created_;  // by owner: creations not yet answered
  StoreWorker& store_;
  Auditor& audit_;
  const TimeSource& clock_;
};

}  // namespace trainyard::daemon
