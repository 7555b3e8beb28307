#include "daemon/webhooks/webhook_spec.h"

#include <algorithm>

#include "daemon/base/attempt_outcome.h"
#include "daemon/events/events.h"
#include "daemon/webhooks/webhook_payload.h"
#include "daemon/webhooks/webhook_url.h"
#include "proto/errors.h"

namespace trainyard::daemon {
namespace {

constexpr std::size_t kMaxEventGlobs = 32;
constexpr std::size_t kMaxGlobLength = 64;

Json parse_filter(const Json* given) {
  Json filter = Json::object();
  if (given == nullptr) return filter;
  if (!given->is_object()) throw InvalidInput("filter", "must be an object");
  ObjectReader r(*given, "filter");
  if (auto share = r.opt_string("share", 1, 64)) {
    check_name("filter.share", *share);
    filter["share"] = *share;
  }
  if (auto user = r.opt_string("user", 1, 64)) {
    check_name("filter.user", *user);
    filter["user"] = *user;
  }
  if (auto job = r.opt_integer("job", 1, INT64_MAX)) filter["job"] = *job;
  r.finish();
  return filter;
}

}  // namespace

WebhookRequest parse_webhook_request(const Json& body) {
  if (!body.is_object()) throw InvalidInput("", "the body must be a JSON object");
  ObjectReader r(body, "");
  WebhookRequest request;
  request.url = r.string("url", 1, kMaxWebhookUrlLength);
  parse_webhook_url(request.url, "url");
  request.events = r.string_list("events", kMaxEventGlobs, kMaxGlobLength);
  if (request.events.empty()) throw InvalidInput("events", "must name at least one event type or glob");
  for (std::size_t i = 0; i < request.events.size(); ++i) {
    if (!glob_matches_an_event_type(request.events[i])) {
      throw InvalidInput("events[" + std::to_string(i) + "]",
                         "\"" + request.events[i] + "\" matches no event type (job.*, node.*, healthcheck.finished, canary.*, audit.*)");
    }
  }
  if (auto format = r.opt_string("format", 1, 16)) {
    if (!parse_webhook_format(*format)) throw InvalidInput("format", "must be \"slack\" or \"json\"");
    request.format = *format;
  }
  request.filter = parse_filter(r.child("filter"));
  r.finish();
  return request;
}

void check_user_webhook_events(const std::vector<std::string>& events) {
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i].starts_with("audit.")) {
      throw InvalidInput("events[" + std::to_string(i) + "]",
                         "audit events are for admins' webhooks: the audit log records other users' actions");
    }
  }
}

bool webhook_wants(const store::WebhookRecord& webhook, const store::Event& event) {
  // A user's webhook never hears the audit log, even through a glob such as "*".
  if (webhook.restricted && event.kind.starts_with("audit.")) return false;
  const bool type_matches = std::any_of(webhook.events.begin(), webhook.events.end(),
                                        [&](const std::string& glob) { return glob_match(glob, event.kind); });
  if (!type_matches) return false;
  const Json& f = webhook.filter;
  if (f.contains("share") && f["share"] != event.share) return false;
  if (f.contains("user") && f["user"] != event.user) return false;
  if (f.contains("job") && (!event.job_id || f["job"] != *event.job_id)) return false;
  return true;
}

}  // namespace trainyard::daemon
