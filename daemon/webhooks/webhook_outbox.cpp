#include "daemon/webhooks/webhook_outbox.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <deque>
#include <iterator>

#include "daemon/webhooks/webhook_payload.h"
#include "daemon/webhooks/webhook_signature.h"
#include "daemon/webhooks/webhook_spec.h"
#include "daemon/webhooks/webhook_url.h"
#include "proto/text.h"

namespace trainyard::daemon {
namespace {

// Events read from the log per refill of a lane.
constexpr int kReadBatch = 500;
// The newest attempts a delivery's log keeps.
constexpr std::size_t kLoggedAttempts = 20;

bool succeeded(int status) { return status >= 200 && status < 300; }

std::string failure_text(const net::OutboundResponse& r) {
  if (r.status == 0) return r.error;
  std::string text = "HTTP " + std::to_string(r.status);
  if (r.status >= 300 && r.status < 400) text += " (redirects are not followed)";
  return text;
}

// Adds the records of a failed commit to those kept, one per delivery: the newest record wins.
void keep_unrecorded(std::vector<store::WebhookDelivery>& kept, std::vector<store::WebhookDelivery> failed) {
  for (store::WebhookDelivery& record : failed) {
    const auto same = std::find_if(kept.begin(), kept.end(), [&](const store::WebhookDelivery& k) { return k.n == record.n; });
    if (same != kept.end()) {
      *same = std::move(record);
    } else {
      kept.push_back(std::move(record));
    }
  }
}

}  // namespace

// A message to send: a delivery and the events it carries.
struct Message {
  store::WebhookDelivery delivery;
  std::vector<store::Event> events;
  bool counts_for_storm = true;  // not for a dead letter sent again
};

struct WebhookOutbox::Lane {
  store::WebhookRecord webhook;
  WebhookFormat format;
  StormGate gate;
  std::int64_t cursor = 0;      // as stored
  std::int64_t scanned_to = 0;  // the log is read up to here
  std::deque<store::Event> pending;    // wanted events after the cursor not yet in a message, oldest first
  bool read_while_waiting = false;     // storm control holds `pending`: read the log for a failure
  std::deque<Message> reopened;  // open deliveries read from the store, sent before anything new
  std::optional<Message> current;
  // Delivery records whose commit failed: written again with the lane's next change, oldest first.
  std::vector<store::WebhookDelivery> unrecorded;
  std::int64_t next_n = 1;
  bool load_open = true;  // the next refill reads the open deliveries
  bool busy = false;      // a read, an attempt or a write is under way
  bool wake_scheduled = false;
  bool stopped = false;
};

WebhookOutbox::WebhookOutbox(StoreWorker& store, Timers& timers, const TimeSource& clock, WebhookOptions options,
                             Send send, prom::Registry& metrics, std::uint64_t seed)
    : store_(store),
      timers_(timers),
      clock_(clock),
      options_(std::move(options)),
      send_(std::move(send)),
      rng_(seed),
      deliveries_total_(metrics.counter("trainyard_webhook_deliveries_total",
                                        "Webhook delivery attempts by result: delivered, failed (to be retried) or dead.",
                                        {"result"})),
      delivery_seconds_(metrics.histogram("trainyard_webhook_delivery_seconds",
                                          "Time from an event to its delivery to a webhook.",
                                          {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600})) {}

WebhookOutbox::~WebhookOutbox() { stop(); }

void WebhookOutbox::start(WebhookRegistry& registry) {
  registry.set_listener({
      .added = [this](const store::WebhookRecord& w) { start_lane(w); },
      .removed =
          [this](std::int64_t id) {
            if (auto it = lanes_.find(id); it != lanes_.end()) {
              it->second->stopped = true;
              lanes_.erase(it);
            }
          },
      .retry_requested =
          [this](std::int64_t id) {
            if (auto it = lanes_.find(id); it != lanes_.end()) {
              it->second->load_open = true;
              pump(it->second);
            }
          },
      .send_test = [this](const store::WebhookRecord& w, std::function<void(Json)> done) { send_test(w, std::move(done)); },
  });
  for (const store::WebhookRecord& w : registry.list()) start_lane(w);
}

void WebhookOutbox::stop() {
  for (auto& [id, lane] : lanes_) lane->stopped = true;
  lanes_.clear();
}

void WebhookOutbox::start_lane(const store::WebhookRecord& webhook) {
  auto lane = std::make_shared<Lane>(Lane{.webhook = webhook,
                                          .format = parse_webhook_format(webhook.format).value_or(WebhookFormat::json),
                                          .gate = StormGate(options_.storm)});
  lane->cursor = lane->scanned_to = webhook.cursor_seq;
  lanes_[webhook.id] = lane;
  pump(lane);
}

// The lane's one step: what to read or send next. One step of a lane runs at a time.
void WebhookOutbox::pump(const std::shared_ptr<Lane>& lane) {
  if (lane->stopped || lane->busy) return;
  if (!lane->current && !lane->reopened.empty() && !lane->load_open) {
    lane->current = std::move(lane->reopened.front());
    lane->reopened.pop_front();
  }
  if (lane->current) return attempt(lane);
  if (lane->load_open || lane->pending.empty() || std::exchange(lane->read_while_waiting, false)) return refill(lane);
  begin_next(lane);
}

void WebhookOutbox::wake_after(const std::shared_ptr<Lane>& lane, Millis delay) {
  if (std::exchange(lane->wake_scheduled, true)) return;
  timers_.after(delay, [this, lane] {
    lane->wake_scheduled = false;
    if (!lane->stopped) pump(lane);
  });
}

// Reads the open deliveries (at start and when one is re-sent) and the log after what was scanned.
void WebhookOutbox::refill(const std::shared_ptr<Lane>& lane) {
  lane->busy = true;
  const bool load_open = lane->load_open;
  store_.read(
      [this, lane, load_open, webhook = lane->webhook, from = lane->scanned_to](store::Store& store) {
        std::vector<Message> open;
        std::int64_t next_n = 1;
        if (load_open) {
          for (store::WebhookDelivery& d : store.open_webhook_deliveries(webhook.id)) {
            Message m{std::move(d), {}, false};
            const auto span = static_cast<int>(m.delivery.last_seq - m.delivery.first_seq + 1);
            for (store::Event& e : store.events_after(m.delivery.first_seq - 1, span)) {
              if (webhook_wants(webhook, e)) m.events.push_back(std::move(e));
            }
            open.push_back(std::move(m));
          }
          const auto newest = store.webhook_deliveries(webhook.id, std::nullopt, 1);
          if (!newest.empty()) next_n = newest.front().n + 1;
        }
        std::vector<store::Event> read = store.events_after(from, kReadBatch);
        return std::function<void()>(
            [this, lane, load_open, open = std::move(open), next_n, read = std::move(read)]() mutable {
              lane->busy = false;
              if (lane->stopped) return;
              if (load_open) {
                lane->load_open = false;
                lane->next_n = std::max(lane->next_n, next_n);
                lane->reopened.clear();
                for (Message& m : open) {
                  // A delivery under way when the daemon stopped carries the events after the cursor.
                  if (m.delivery.state == store::DeliveryState::pending) {
                    lane->scanned_to = std::max(lane->scanned_to, m.delivery.last_seq);
                    std::erase_if(lane->pending, [&](const store::Event& e) { return e.seq <= m.delivery.last_seq; });
                  }
                  if (!m.events.empty()) lane->reopened.push_back(std::move(m));
                }
              }
              const bool found = !read.empty();
              for (store::Event& e : read) {
                if (e.seq <= lane->scanned_to) continue;
                lane->scanned_to = e.seq;
                if (webhook_wants(lane->webhook, e)) lane->pending.push_back(std::move(e));
              }
              if (found || !lane->reopened.empty() || !lane->pending.empty()) return pump(lane);
              if (lane->scanned_to > lane->cursor || !lane->unrecorded.empty()) {
                // Only events it does not want since the last delivery: remember they are done
                // (and the records that failed to be stored before, if any).
                store::Change change;
                change.webhook_cursors.emplace_back(lane->webhook.id, lane->scanned_to);
                lane->cursor = lane->scanned_to;
                write_lane(lane, std::move(change), nullptr);
              }
              wake_after(lane, options_.poll_interval);
            });
      },
      [this, lane](const Error& error) {
        lane->busy = false;
        spdlog::error("event=webhook_read_failed webhook={} error=\"{}\"", lane->webhook.id, error.message);
        wake_after(lane, options_.poll_interval);
      });
}

// The next message from the pending events, as storm control allows.
void WebhookOutbox::begin_next(const std::shared_ptr<Lane>& lane) {
  const TimePoint now = clock_.system_now();
  const auto failure = std::find_if(lane->pending.begin(), lane->pending.end(),
                                    [](const store::Event& e) { return is_failure_event(e.kind); });
  const std::optional<std::size_t> first_failure =
      failure == lane->pending.end() ? std::nullopt
                                     : std::optional<std::size_t>(static_cast<std::size_t>(failure - lane->pending.begin()));
  const StormGate::Step step = lane->gate.next(lane->pending.size(), now, first_failure);
  if (step.action == StormGate::Action::wait) {
    const auto until = std::chrono::duration_cast<Millis>(step.until - now);
    // The log is read on meanwhile: a failure that comes goes out from the reserve.
    if (lane->gate.failure_reserve_left() && until > options_.poll_interval) {
      lane->read_while_waiting = true;
      return wake_after(lane, options_.poll_interval);
    }
    return wake_after(lane, until);
  }
  Message m;
  if (step.action == StormGate::Action::send_one) {
    m.events.push_back(std::move(lane->pending.front()));
    lane->pending.pop_front();
  } else {
    const auto end = step.action == StormGate::Action::fold_all
                         ? lane->pending.end()
                         : lane->pending.begin() + static_cast<std::ptrdiff_t>(step.count);
    m.events.assign(std::make_move_iterator(lane->pending.begin()), std::make_move_iterator(end));
    lane->pending.erase(lane->pending.begin(), end);
    spdlog::warn("event=webhook_storm_folded webhook={} events={} first={} last={}", lane->webhook.id, m.events.size(),
                 m.events.front().seq, m.events.back().seq);
  }
  m.delivery = store::WebhookDelivery{lane->webhook.id, lane->next_n++, m.events.front().seq, m.events.back().seq,
                               store::DeliveryState::pending, 0, now, std::nullopt, Json::array()};
  lane->current = std::move(m);
  attempt(lane);
}

void WebhookOutbox::attempt(const std::shared_ptr<Lane>& lane) {
  lane->busy = true;
  const Message& m = *lane->current;
  const bool single = m.events.size() == 1;
  const Json body = single ? webhook_payload(m.events.front(), lane->format, options_.public_url)
                           : webhook_payload(fold_events(m.events), lane->format);
  // The same id on every try of the message, so a receiver can drop what it already has.
  const std::string event_id = single ? std::to_string(m.delivery.first_seq)
                                      : std::to_string(m.delivery.first_seq) + "-" + std::to_string(m.delivery.last_seq);
  const TimePoint at = clock_.system_now();
  send_(request_for(lane->webhook, event_id, json_text(body)),
        [this, lane, at](net::OutboundResponse response) {
          if (!lane->stopped) attempted(lane, response, at);
        });
}

void WebhookOutbox::attempted(const std::shared_ptr<Lane>& lane, const net::OutboundResponse& response, TimePoint at) {
  lane->busy = false;
  store::WebhookDelivery& d = lane->current->delivery;
  ++d.attempts;
  Json entry = {{"at", format_time(at)},
                {"status", response.status ? Json(response.status) : Json(nullptr)},
                {"latency_ms", response.latency.count()}};
  if (!succeeded(response.status)) entry["error"] = failure_text(response);
  const auto log_attempt = [&d](Json e) {
    d.log.push_back(std::move(e));
    if (d.log.size() > kLoggedAttempts) d.log.erase(d.log.begin());
  };
  if (succeeded(response.status)) {
    log_attempt(std::move(entry));
    deliveries_total_.inc({"delivered"});
    const TimePoint now = clock_.system_now();
    for (const store::Event& e : lane->current->events) delivery_seconds_.observe(std::chrono::duration<double>(now - e.at).count());
    return finish(lane, store::DeliveryState::delivered);
  }
  const TimePoint now = clock_.system_now();
  std::optional<Millis> retry_after;
  if (response.status == 429 || response.status == 503) retry_after = parse_retry_after(response.retry_after, now);
  const auto next = next_attempt_at(options_.backoff, d.attempts, d.first_attempt_at, now, retry_after, rng_);
  entry["next_retry_at"] = next ? Json(format_time(*next)) : Json(nullptr);
  log_attempt(std::move(entry));
  if (!next) {
    deliveries_total_.inc({"dead"});
    spdlog::warn("event=webhook_dead_lettered webhook={} delivery={} attempts={} error=\"{}\"", lane->webhook.id, d.n,
                 d.attempts, failure_text(response));
    return finish(lane, store::DeliveryState::dead);
  }
  deliveries_total_.inc({"failed"});
  d.next_attempt_at = next;
  // The attempt is recorded before waiting, so the deliveries list shows it and a restart keeps
  // the delivery's age (its 24 h horizon).
  store::Change change;
  change.webhook_deliveries.push_back(d);
  lane->busy = true;
  write_lane(lane, std::move(change), [this, lane, delay = std::chrono::duration_cast<Millis>(*next - now)] {
    lane->busy = false;
    if (!lane->stopped) wake_after(lane, delay);
  });
}

void WebhookOutbox::write_lane(const std::shared_ptr<Lane>& lane, store::Change change, std::function<void()> then) {
  if (!lane->unrecorded.empty()) {
    // Before the change's own records, so a newer record of the same delivery wins the upsert.
    change.webhook_deliveries.insert(change.webhook_deliveries.begin(), std::make_move_iterator(lane->unrecorded.begin()),
                                     std::make_move_iterator(lane->unrecorded.end()));
    lane->unrecorded.clear();
  }
  store_.write(std::move(change), [lane, then = std::move(then)](const Result<void>& written, store::Change& committed) {
    if (!written) {
      spdlog::error("event=webhook_record_failed webhook={} deliveries={} error=\"{}\"", lane->webhook.id,
                    committed.webhook_deliveries.size(), written.error().message);
      keep_unrecorded(lane->unrecorded, std::move(committed.webhook_deliveries));
    }
    if (then) then();
  });
}

// Records the message as delivered or dead and moves the cursor past it, in one transaction, and
// goes on to the next message without waiting for that commit: the store commits in order, so the
// cursor only moves forward, and the receiver already has the message (a record lost to a crash
// means it is sent again: at least once). Waiting held each webhook to one message per commit
// (~350 deliveries/s in bench/webhooks).
void WebhookOutbox::finish(const std::shared_ptr<Lane>& lane, store::DeliveryState state) {
  store::WebhookDelivery& d = lane->current->delivery;
  d.state = state;
  d.next_attempt_at.reset();
  const std::int64_t cursor = std::max(lane->cursor, d.last_seq);
  store::Change change;
  change.webhook_deliveries.push_back(d);
  change.webhook_cursors.emplace_back(lane->webhook.id, cursor);
  write_lane(lane, std::move(change), nullptr);
  lane->cursor = cursor;
  if (lane->current->counts_for_storm) lane->gate.sent(clock_.system_now());
  lane->current.reset();
  pump(lane);
}

void WebhookOutbox::send_test(const store::WebhookRecord& webhook, std::function<void(Json)> done) {
  const WebhookFormat format = parse_webhook_format(webhook.format).value_or(WebhookFormat::json);
  Json body = webhook_payload(sample_event(webhook.events, clock_.system_now()), format, options_.public_url);
  if (format == WebhookFormat::json) body["test"] = true;  // so no automation takes the sample for a real failure
  const std::string event_id = "test-" + std::to_string(to_unix_ms(clock_.system_now()));
  send_(request_for(webhook, event_id, json_text(body)), [done = std::move(done)](net::OutboundResponse r) {
    Json result = {{"delivered", succeeded(r.status)},
                   {"status", r.status ? Json(r.status) : Json(nullptr)},
                   {"latency_ms", r.latency.count()}};
    if (!succeeded(r.status)) result["error"] = failure_text(r);
    done(result);
  });
}

net::OutboundRequest WebhookOutbox::request_for(const store::WebhookRecord& webhook, const std::string& event_id,
                                                const std::string& body) const {
  const net::Url url = parse_webhook_url(webhook.url, "url");
  const std::int64_t timestamp = to_unix_ms(clock_.system_now()) / 1000;
  net::OutboundRequest request{url.tls(), url.host, url.port, url.path, {}, "application/json", body, webhook.restricted};
  request.headers = {{std::string(kWebhookEventIdHeader), event_id},
                     {std::string(kWebhookTimestampHeader), std::to_string(timestamp)},
                     {std::string(kWebhookSignatureHeader), webhook_signature(webhook.secret, timestamp, body)}};
  return request;
}

}  // namespace trainyard::daemon
