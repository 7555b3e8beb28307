#include "daemon/event_streams.h"

#include <algorithm>
#include <spdlog/spdlog.h>
#include <unordered_map>

#include "proto/text.h"

namespace trainyard::daemon {

std::string sse_frame(const store::Event& event) {
  return "id: " + std::to_string(event.seq) + "\nevent: " + event.kind + "\ndata: " + json_text(event_json(event)) + "\n\n";
}

std::shared_ptr<net::ResponseStream> EventStreams::subscribe(Principal who, EventFilter filter,
                                                             std::optional<std::int64_t> after) {
  auto subscriber = std::make_shared<Subscriber>();
  subscriber->who = std::move(who);
  subscriber->filter = std::move(filter);
  subscriber->reader = reader_key(subscriber->who, subscriber->filter);
  subscriber->out = std::make_shared<net::ResponseStream>(kClientBufferBytes);
  subscriber->last_sent = after.value_or(head_);
  subscriber->backfilling = after.has_value();
  subscribers_.push_back(subscriber);
  spdlog::info("event=sse_client_subscribed user={} after={} clients={}", subscriber->who.user, subscriber->last_sent,
               subscribers_.size());
  if (!after) return subscriber->out;
  // Queued after every commit whose events reached publish() so far, so the store has them all.
  store_.read(
      [this, subscriber, who = subscriber->who, filter = subscriber->filter, after = *after](store::Store& store) {
        std::vector<store::Event> events;
        for (std::optional<std::int64_t> from = after; from;) {
          EventPage page = read_events(store, who, filter, *from, 1000);
          std::move(page.events.begin(), page.events.end(), std::back_inserter(events));
          from = page.next;
        }
        return StoreWorker::Continuation(
            [this, subscriber, events = std::move(events)]() mutable { backfilled(subscriber, std::move(events)); });
      },
      [subscriber](const Error& error) {
        spdlog::error("event=sse_backfill_failed user={} error=\"{}\"", subscriber->who.user, error.message);
        subscriber->out->close();
      });
  return subscriber->out;
}

void EventStreams::backfilled(const std::shared_ptr<Subscriber>& subscriber, std::vector<store::Event> events) {
  subscriber->backfilling = false;
  const std::vector<store::Event> held = std::exchange(subscriber->held, {});
  events.insert(events.end(), held.begin(), held.end());
  std::vector<std::string> frames(events.size());
  if (auto batch = batch_for(*subscriber, events, frames); batch && !send(*subscriber, std::move(batch))) drop_gone();
}

bool EventStreams::takes(Subscriber& subscriber, const store::Event& event) {
  if (event.seq <= subscriber.last_sent) return false;
  subscriber.last_sent = event.seq;
  return visible_to(subscriber.who, event) && matches(subscriber.filter, event);
}

net::ResponseStream::Chunk EventStreams::batch_for(Subscriber& subscriber, const std::vector<store::Event>& events,
                                                   std::vector<std::string>& frames) {
  std::string batch;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (!takes(subscriber, events[i])) continue;
    if (frames[i].empty()) frames[i] = sse_frame(events[i]);
    batch += frames[i];
  }
  return batch.empty() ? nullptr : std::make_shared<const std::string>(std::move(batch));
}

bool EventStreams::send(Subscriber& subscriber, net::ResponseStream::Chunk text) {
  const bool was_open = !subscriber.out->closed();
  if (subscriber.out->push(std::move(text))) return true;
  if (was_open) {
    spdlog::warn("event=sse_client_dropped user={} last_sent={} buffer_bytes={} reason=\"not reading\"",
                 subscriber.who.user, subscriber.last_sent, kClientBufferBytes);
  }
  return false;
}

void EventStreams::publish(const std::vector<store::Event>& events) {
  if (events.empty()) return;
  head_ = std::max(head_, events.back().seq);
  if (subscribers_.empty()) return;  // one that comes later starts after head_
  if (unsent_.empty()) timers_.after(flush_window_, [this] { flush(); });
  unsent_.insert(unsent_.end(), events.begin(), events.end());
}

void EventStreams::flush() {
  const std::vector<store::Event> events = std::exchange(unsent_, {});
  // Each event's frame is built once, and each reader key's batch once: what a client costs per
  // window is one push of a shared string (and one write by its connection).
  std::vector<std::string> frames(events.size());
  std::unordered_map<std::string, net::ResponseStream::Chunk> batches;
  for (const auto& subscriber : subscribers_) {
    if (subscriber->backfilling) {
      subscriber->held.insert(subscriber->held.end(), events.begin(), events.end());
      continue;
    }
    net::ResponseStream::Chunk batch;
    if (subscriber->last_sent < events.front().seq) {
      auto [shared, first] = batches.try_emplace(subscriber->reader);
      if (first) shared->second = batch_for(*subscriber, events, frames);
      subscriber->last_sent = events.back().seq;
      batch = shared->second;
    } else {
      // Subscribed within the window, or resumed: it skips what it has had.
      batch = batch_for(*subscriber, events, frames);
    }
    if (batch) send(*subscriber, std::move(batch));
  }
  drop_gone();
}

void EventStreams::keep_alive(MonoTime now, Millis interval) {
  if (now - last_keep_alive_ < interval) return;
  last_keep_alive_ = now;
  static const auto comment = std::make_shared<const std::string>(": keep-alive\n\n");
  for (const auto& subscriber : subscribers_) send(*subscriber, comment);
  drop_gone();
}

void EventStreams::drop_gone() {
  std::erase_if(subscribers_, [&](const std::shared_ptr<Subscriber>& s) {
    if (!s->out->closed()) return false;
    spdlog::info("event=sse_client_ended user={} last_sent={}", s->who.user, s->last_sent);
    return true;
  });
}

}  // namespace trainyard::daemon
