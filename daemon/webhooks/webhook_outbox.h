#pragma once
// Delivers events to webhooks (docs/DESIGN.md "Webhooks"). Each webhook has its own lane:
// it reads the events after its durable cursor, keeps those it wants in order, and sends one
// message at a time (an event, or a storm summary, webhook_storm.h), signed, retrying with
// backoff until delivered or dead-lettered, and only then moves the cursor past it, in the same
// transaction that records the delivery. Lanes share nothing but the store worker and the I/O
// thread, so a slow or failing receiver only delays its own webhook.
//
// I/O thread only; the HTTP exchange is `Send`'s (net::HttpClient in the daemon, a fake in tests).
#include <functional>
#include <map>
#include <memory>
#include <random>

#include "daemon/base/prometheus.h"
#include "daemon/base/store_worker.h"
#include "daemon/webhooks/webhook_registry.h"
#include "net/http_client.h"
#include "proto/timers.h"

namespace trainyard::daemon {

class WebhookOutbox {
 public:
  using Send = std::function<void(net::OutboundRequest, std::function<void(net::OutboundResponse)>)>;

  WebhookOutbox(StoreWorker& store, Timers& timers, const TimeSource& clock, WebhookOptions options, Send send,
                prom::Registry& metrics, std::uint64_t seed = std::random_device{}());
  ~WebhookOutbox();

  // Starts a lane for each webhook; hooks into `registry` to hear of new, deleted and retried ones.
  void start(WebhookRegistry& registry);
  // Stops every lane (no new attempts; answers in flight are dropped, the cursor stays where the
  // store has it, so the next start sends them again).
  void stop();

 private:
  struct Lane;
  void start_lane(const store::WebhookRecord& webhook);
  void pump(const std::shared_ptr<Lane>& lane);
  void refill(const std::shared_ptr<Lane>& lane);
  void begin_next(const std::shared_ptr<Lane>& lane);
  void attempt(const std::shared_ptr<Lane>& lane);
  void attempted(const std::shared_ptr<Lane>& lane, const net::OutboundResponse& response, TimePoint at);
  void finish(const std::shared_ptr<Lane>& lane, store::DeliveryState state);
  // Writes a change of the lane with the records that failed before; the records of a change that
  // fails are kept to be written with the next (the cursor in memory has moved past them).
  void write_lane(const std::shared_ptr<Lane>& lane, store::Change change, std::function<void()> then);
  // Runs `pump` after `delay`, once however often it is asked for meanwhile.
  void wake_after(const std::shared_ptr<Lane>& lane, Millis delay);
  void send_test(const store::WebhookRecord& webhook, std::function<void(Json)> done);
  net::OutboundRequest request_for(const store::WebhookRecord& webhook, const std::string& event_id, const std::string& body) const;

  StoreWorker& store_;
  Timers& timers_;
  const TimeSource& clock_;
  WebhookOptions options_;
  Send send_;
  std::mt19937_64 rng_;
  prom::Counter& deliveries_total_;
  prom::Histogram& delivery_seconds_;
  std::map<std::int64_t, std::shared_ptr<Lane>> lanes_;
};

}  // namespace trainyard::daemon
