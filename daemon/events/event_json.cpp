#include "daemon/events/event_json.h"

#include "proto/time.h"

namespace trainyard::daemon {

Json event_json(const store::Event& event) {
  Json j = {{"id", event.seq},
            {"time", format_time(event.at)},
            {"type", event.kind},
            {"severity", to_string(event.severity)},
            {"message", event.message},
            {"details", event.details}};
  if (event.job_id) j["job"] = *event.job_id;
  if (event.attempt_id) j["attempt"] = *event.attempt_id;
  if (!event.node.empty()) j["node"] = event.node;
  if (!event.user.empty()) j["user"] = event.user;
  if (!event.share.empty()) j["share"] = event.share;
  return j;
}

}  // namespace trainyard::daemon
