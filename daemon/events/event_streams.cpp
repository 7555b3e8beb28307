#include "daemon/events/event_streams.h"

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
  subscriber->backfill_from = after.value_or(0);
  subscribers_.push_back(subscriber);
  spdlog::info("event=sse_client_subscribed user={} after={} clients={}", subscriber->who.user, subscriber->last_sent,
               subscribers_.size());
  // The first page is queued after every commit whose events reached publish() so far, so the
  // store has every event the held live ones do not cover.
  if (after) read_backfill_page(subscriber);
  return subscriber->out;
}

void EventStreams::read_backfill_page(const std::shared_ptr<Subscriber>& subscriber) {
  if (subscriber->out->closed()) return drop_gone();
  if (admit_page_) {
    if (const std::optional<Millis> wait = admit_page_(subscriber->who)) {
      timers_.after(*wait, [this, subscriber] { read_backfill_page(subscriber); });
      return;
    }
  }
  store_.read(
      [this, subscriber, who = subscriber->who, filter = subscriber->filter,
       from = subscriber->backfill_from](store::Store& store) {
        EventPage page = read_events(store, who, filter, EventWalk{.from = from}, kBackfillPageEvents, kBackfillPageRows);
        return StoreWorker::Continuation([this, subscriber, page = std::move(page)]() mutable {
          subscriber->unsent_backfill = std::move(page.events);
          subscriber->more_in_store = page.next.has_value();
          if (page.next) subscriber->backfill_from = *page.next;
          continue_backfill(subscriber);
        });
      },
      [this, subscriber](const Error& error) {
        spdlog::error("event=sse_backfill_failed user={} error=\"{}\"", subscriber->who.user, error.message);
        subscriber->out->close();
        drop_gone();
      });
}

void EventStreams::continue_backfill(const std::shared_ptr<Subscriber>& subscriber) {
  std::vector<store::Event>& unsent = subscriber->unsent_backfill;
  std::string chunk;
  std::size_t used = 0;
  while (used < unsent.size() && chunk.size() < kBackfillChunkBytes) {
    const store::Event& event = unsent[used++];
    if (takes(*subscriber, event)) chunk += sse_frame(event);
  }
  unsent.erase(unsent.begin(), unsent.begin() + static_cast<std::ptrdiff_t>(used));
  if (!chunk.empty() && !send(*subscriber, std::make_shared<const std::string>(std::move(chunk)))) return drop_gone();
  if (!unsent.empty()) return when_taken(subscriber, &EventStreams::continue_backfill);
  if (subscriber->more_in_store) {
    // Rows up to the cursor were scanned (sent, or not this reader's); held live events among them
    // came from the store.
    subscriber->last_sent = std::max(subscriber->last_sent, subscriber->backfill_from);
    std::erase_if(subscriber->held, [&](const store::Event& e) { return e.seq <= subscriber->backfill_from; });
    return when_taken(subscriber, &EventStreams::read_backfill_page);
  }
  subscriber->backfilling = false;
  const std::vector<store::Event> held = std::exchange(subscriber->held, {});
  std::vector<std::string> frames(held.size());
  if (auto batch = batch_for(*subscriber, held, frames); batch && !send(*subscriber, std::move(batch))) drop_gone();
}

void EventStreams::when_taken(const std::shared_ptr<Subscriber>& subscriber,
                              void (EventStreams::*then)(const std::shared_ptr<Subscriber>&)) {
  subscriber->out->when_drained([this, then, weak = std::weak_ptr<Subscriber>(subscriber)] {
    if (auto alive = weak.lock()) (this->*then)(alive);
  });
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
