#pragma once
// GET /v1/events/stream's subscribers: Server-Sent Events with the filters and visibility of
// GET /v1/events. The store worker hands over each commit's events in seq order (`publish`); a
// subscriber resuming after an id is subscribed first, backfilled from the store, then given the
// live events above the last one backfilled, so nothing is missed or sent twice.
// A backfill is read a page at a time (at most kBackfillPageRows rows scanned per store task, so
// other requests are served between pages), each page counted
// against the user's request rate, and the next page is read only once the client has taken the
// last: a client far behind catches up at the pace it reads instead of overflowing its buffer.
// Live events are sent in flush windows: publish() only queues them, and when the window has
// passed each client gets one push of everything since, shared with every client that reads the
// same events. All on the I/O thread; the writing is net/'s (net::ResponseStream), bounded per client.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/base/auth.h"
#include "daemon/base/store_worker.h"
#include "daemon/events/events.h"
#include "net/http_types.h"
#include "proto/time.h"
#include "proto/timers.h"

namespace trainyard::daemon {

// One event as SSE puts it: `id: <seq>`, `event: <type>`, `data: <event_json>` on one line.
std::string sse_frame(const store::Event& event);

class EventStreams {
 public:
  // What a client may have queued and unwritten before it is dropped (a resume's backfill too).
  static constexpr std::size_t kClientBufferBytes = 4 << 20;
  // Events and rows scanned per backfill page read from the store (a few ms of the store worker:
  // a user's streams cost it at most their request rate times that), and the most text of a page
  // pushed at once (the rest when the client has taken that), well under the client's buffer.
  static constexpr int kBackfillPageEvents = 1000;
  static constexpr int kBackfillPageRows = 1000;
  static constexpr std::size_t kBackfillChunkBytes = 1 << 20;
  // Whether `who` may have one more backfill page read now; else how long to wait (the API's rate
  // limiter: a stream's catch-up is the user's requests).
  using PageAdmission = std::function<std::optional<Millis>(const Principal& who)>;

  EventStreams(StoreWorker& store, Timers& timers) : store_(store), timers_(timers) {}
  // The highest seq stored when the daemon started (`Store::last_event_seq`): where a new subscriber
  // that names no id starts until publish() moves it on.
  void set_head(std::int64_t head) { head_ = head; }
  // How long live events wait to be sent with those that follow (0: at the I/O loop's next turn).
  void set_flush_window(Millis window) { flush_window_ = window; }
  void set_page_admission(PageAdmission admit) { admit_page_ = std::move(admit); }

  // A new subscriber reading what `who` may read of `filter`: from after `after` (backfilled from
  // the store first), or from now when nullopt. Returns the stream the response writes.
  std::shared_ptr<net::ResponseStream> subscribe(Principal who, EventFilter filter, std::optional<std::int64_t> after);
  // Committed events, in seq order, each once: sent when the flush window that the first of them
  // opened has passed.
  void publish(const std::vector<store::Event>& events);
  // Sends `: keep-alive` when `interval` passed since the last; drops the clients that left.
  void keep_alive(MonoTime now, Millis interval);

  std::size_t clients() const { return subscribers_.size(); }

 private:
  struct Subscriber {
    Principal who;
    EventFilter filter;
    std::string reader;  // reader_key(who, filter)
    std::shared_ptr<net::ResponseStream> out;
    std::int64_t last_sent = 0;  // the highest seq sent or skipped as already sent
    bool backfilling = false;
    std::int64_t backfill_from = 0;  // where the next backfill page starts: the last row scanned
    bool more_in_store = false;      // the last page read was not the log's end
    std::vector<store::Event> unsent_backfill;  // read from the store, not yet pushed
    std::vector<store::Event> held;  // live events that came while backfilling
  };
  // Sends what was published since the last flush.
  void flush();
  // Reads the next backfill page once the user's rate admits it.
  void read_backfill_page(const std::shared_ptr<Subscriber>& subscriber);
  // Pushes up to kBackfillChunkBytes of the page read; once the client has taken it, the rest, then
  // the next page; at the log's end, the held live events, and the subscriber is live.
  void continue_backfill(const std::shared_ptr<Subscriber>& subscriber);
  void when_taken(const std::shared_ptr<Subscriber>& subscriber, void (EventStreams::*then)(const std::shared_ptr<Subscriber>&));
  // Whether `event` is above last_sent (which it moves on) and the subscriber may see it.
  static bool takes(Subscriber& subscriber, const store::Event& event);
  // The frames of `events` that the subscriber takes, as one text (null when none); `frames` are
  // the events' frames, built here when first needed.
  static net::ResponseStream::Chunk batch_for(Subscriber& subscriber, const std::vector<store::Event>& events,
                                              std::vector<std::string>& frames);
  // Pushes `text`; false (logged when the buffer overflowed) when the client is gone.
  static bool send(Subscriber& subscriber, net::ResponseStream::Chunk text);
  // Forgets the subscribers whose stream ended: dropped, left, or closed by a shutdown.
  void drop_gone();

  StoreWorker& store_;
  Timers& timers_;
  Millis flush_window_{0};
  PageAdmission admit_page_;
  std::int64_t head_ = 0;
  std::vector<std::shared_ptr<Subscriber>> subscribers_;
  std::vector<store::Event> unsent_;  // published since the last flush, which is due when non-empty
  MonoTime last_keep_alive_{};
};


}  // namespace trainyard::daemon
