#pragma once
// The one JSON shape of an event, shared by GET /v1/events, the SSE stream and webhooks of format
// "json" (docs/DESIGN.md "Webhooks"): id, time, type, severity, message, details, and job /
// attempt / node / user / share only when the event concerns one.
#include "proto/json_reader.h"
#include "store/store.h"

namespace trainyard::daemon {

Json event_json(const store::Event& event);

}  // namespace trainyard::daemon
