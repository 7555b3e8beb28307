#pragma once
// /v1/events, its stream, and /v1/audit: the events log as the API reads it (daemon/events/events.h).
#include "daemon/events/event_streams.h"
#include "proto/time.h"

namespace trainyard::daemon {

struct ApiCall;
class StoreWorker;

class EventsApi {
 public:
  EventsApi(StoreWorker& store, const TimeSource& clock, Timers& timers)
      : store_(store), clock_(clock), streams_(store, timers) {}

  // GET /v1/events/stream's subscribers: the daemon hands them the committed events.
  EventStreams& streams() { return streams_; }

  void list_events(ApiCall call);
  void stream_events(ApiCall call);
  void list_audit(ApiCall call);

 private:
  StoreWorker& store_;
  const TimeSource& clock_;
  EventStreams streams_;
};

}  // namespace trainyard::daemon
