#pragma once
// GET /v1/events/stream's subscribers (issue 15 item 2): Server-Sent Events with the filters and
// visibility of GET /v1/events. The store worker hands over each commit's events in seq order
// (`publish`); a subscriber resuming after an id is subscribed first, backfilled from the store,
// then given the live events above the last one backfilled, so nothing is missed or sent twice.
// All on the I/O thread; the writing is net/'s (net::ResponseStream), bounded per client.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/auth.h"
#include "daemon/events.h"
#include "daemon/store_worker.h"
#include "net/http_types.h"
#include "proto/time.h"

namespace trainyard {

// One event as SSE puts it: `id: <seq>`, `event: <type>`, `data: <event_json>` on one line.
std::string sse_frame(const Event& event);

class EventStreams {
 public:
  // What a client may have queued and unwritten before it is dropped (a resume's backfill too).
  static constexpr std::size_t kClientBufferBytes = 4 << 20;

  explicit EventStreams(StoreWorker& store) : store_(store) {}
  // The highest seq stored when the daemon started (`Store::last_event_seq`): where a new subscriber
  // that names no id starts until publish() moves it on.
  void set_head(std::int64_t head) { head_ = head; }

  // A new subscriber reading what `who` may read of `filter`: from after `after` (backfilled from
  // the store first), or from now when nullopt. Returns the stream the response writes.
  std::shared_ptr<net::ResponseStream> subscribe(Principal who, EventFilter filter, std::optional<std::int64_t> after);
  // Committed events, in seq order, each once.
  void publish(const std::vector<Event>& events);
  // Sends `: keep-alive` when `interval` passed since the last; drops the clients that left.
  void keep_alive(MonoTime now, Millis interval);

  std::size_t clients() const { return subscribers_.size(); }

 private:
  struct Subscriber {
    Principal who;
    EventFilter filter;
    std::shared_ptr<net::ResponseStream> out;
    std::int64_t last_sent = 0;  // the highest seq sent or skipped as already sent
    bool backfilling = false;
    std::vector<Event> held;  // live events that came while backfilling
  };
  void backfilled(const std::shared_ptr<Subscriber>& subscriber, std::vector<Event> events);
  // Whether `event` is above last_sent (which it moves on) and the subscriber may see it.
  static bool takes(Subscriber& subscriber, const Event& event);
  // Sends `event` when the subscriber takes it; false: drop the subscriber.
  static bool deliver(Subscriber& subscriber, const Event& event);
  // Pushes `text`; false (logged when the buffer overflowed) when the client is gone.
  static bool send(Subscriber& subscriber, std::string_view text);
  // Forgets the subscribers whose stream ended: dropped, left, or closed by a shutdown.
  void drop_gone();

  StoreWorker& store_;
  std::int64_t head_ = 0;
  std::vector<std::shared_ptr<Subscriber>> subscribers_;
  MonoTime last_keep_alive_{};
};


}  // namespace trainyard
