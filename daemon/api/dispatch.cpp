// The dispatcher: finds a request's route in the table, authenticates and rate-limits the caller
// where the route needs a token, checks the route's action against the caller's role and its query
// parameters against the route's list, then hands the call to the route's handler.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "daemon/api/api.h"
#include "daemon/api/call.h"
#include "daemon/job_manager.h"
#include "proto/flag_parser.h"

namespace trainyard::daemon {
namespace {

net::HttpResponse rate_limited(const RateLimit& limit, std::int64_t retry_after_s) {
  auto resp = net::error_response(
      429, "rate_limited",
      "rate limit exceeded: " + fmt::format("{}", limit.per_second) + " requests/s per user with bursts of " +
          fmt::format("{}", limit.burst) + " (--rate-limit-rps, --rate-limit-burst); retry in " +
          std::to_string(retry_after_s) + " s");
  resp.headers.emplace_back("Retry-After", std::to_string(retry_after_s));
  return resp;
}

// The method as the request observer names it: any the table does not know is "other", so a
// client inventing methods cannot grow the set of names.
std::string known_method(const std::string& method) {
  for (const Route& route : api_routes()) {
    if (route.method == method) return method;
  }
  return "other";
}

// The first query parameter of `request` that `route` does not take, or an integer outside the
// range the route declares for it, as the 400 it earns.
std::optional<InvalidInput> query_problem(const Route& route, const net::HttpRequest& request) {
  for (const auto& parameter : request.query) {
    // Named, not a structured binding: Clang 14 cannot capture one.
    const std::string& key = parameter.first;
    const std::string& value = parameter.second;
    const auto takes = [&key](const QueryParam& param) { return param.name == key; };
    if (const auto param = std::find_if(route.query.begin(), route.query.end(), takes); param != route.query.end()) {
      if (param->type != "integer") continue;
      try {
        parse_integer(key, value, param->minimum, param->maximum);
        continue;
      } catch (const InvalidInput& e) {
        return e;
      }
    }
    if (route.query.empty()) return InvalidInput(key, "unknown query parameter; this route takes none");
    std::string known;
    for (const QueryParam& param : route.query) known += (known.empty() ? "" : ", ") + std::string(param.name);
    return InvalidInput(key, "unknown query parameter; use " + known);
  }
  return std::nullopt;
}

}  // namespace

Api::Api(JobManager& jobs, StoreWorker& store, FileWorker& files, TokenRegistry& tokens, const TimeSource& clock,
         Timers& timers, std::string version, std::string checkpoint_root, UserLimits limits,
         std::filesystem::path join_token_file)
    : store_(store),
      tokens_(tokens),
      clock_(clock),
      job_manager_(jobs),
      rate_limiter_(limits.rate),
      audit_(jobs, clock),
      views_(jobs, store),
      service_(std::move(version), jobs),
      jobs_(jobs, store, files, views_, audit_, clock, std::move(checkpoint_root),
            {limits.max_pending_per_user, limits.max_user_priority}),
      job_control_(jobs, views_, audit_),
      queue_(jobs, views_),
      nodes_(jobs, store, tokens, audit_),
      health_(jobs, store, views_, audit_),
      cluster_(store, clock),
      tokens_api_(tokens, store, audit_, clock, std::move(join_token_file)),
      shares_(jobs, audit_, clock),
      events_(store, clock, timers) {
  events_.streams().set_page_admission([this](const Principal& who) -> std::optional<Millis> {
    if (const auto retry_after_s = rate_limiter_.admit(who, clock_.monotonic_now()))
      return Millis(*retry_after_s * 1000);
    return std::nullopt;
  });
}

bool Api::serves(const Route& route) const {
  if (route.pattern == "/metrics") return service_.serves_metrics();
  if (route.pattern.starts_with("/v1/webhooks")) return webhooks_.has_value();
  return true;
}

ApiHandlers Api::handlers() {
  return {{&service_, &jobs_, &job_control_, &queue_, &nodes_, &health_, &cluster_, &tokens_api_, &shares_,
           webhooks_ ? &*webhooks_ : nullptr, &events_}};
}

RouteMatch Api::match(const net::HttpRequest& request) const {
  RouteMatch found;
  for (const Route& route : api_routes()) {
    if (!serves(route) || !path_matches(route.pattern, request.segments)) continue;
    if (route.method == request.method) found.route = &route;
    found.pattern = route.pattern;
    found.allowed += (found.allowed.empty() ? "" : ", ") + std::string(route.method);
  }
  return found;
}

// Unknown paths under /v1 answer only to callers with a token, as every /v1 route but the OpenAPI
// document does: the set of paths is no secret (the document lists it), but a 404 before a 401
// would make every typo look like a missing resource to a caller who forgot the token.
bool Api::needs_token(const Route* route, const net::HttpRequest& request) const {
  if (!route) return !request.segments.empty() && request.segments[0] == "v1";
  if (!route->action) return false;
  return !(route->pattern == "/metrics" && service_.metrics_public());
}

bool Api::admit(ApiCall& call) {
  const std::string header = call.request.header("authorization");
  auto who = tokens_.authenticate_header(header, clock_.system_now());
  if (!who || !who->may(Action::use_api)) {
    call.fail(Error::unauthorized(header.empty() ? "missing bearer token (Authorization: Bearer <token>)"
                                                 : "token is not valid (unknown, revoked or expired)"));
    return false;
  }
  call.who = *who;
  if (const auto retry_after_s = rate_limiter_.admit(call.who, clock_.monotonic_now())) {
    (*call.respond)(rate_limited(rate_limiter_.limit(), *retry_after_s));
    return false;
  }
  return true;
}

void Api::handle(net::HttpRequest request, net::HttpResponder respond) {
  const RouteMatch matched = match(request);
  const Route* route = matched.route;
  if (observe_request_) {
    respond = [respond = std::move(respond), observe = observe_request_,
               method = route ? request.method : known_method(request.method),
               pattern = matched.pattern.empty() ? std::string("unmatched") : std::string(matched.pattern),
               start = std::chrono::steady_clock::now()](net::HttpResponse response) {
      const int status = response.status;
      respond(std::move(response));
      observe(method, pattern, status, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    };
  }
  ApiCall call{std::move(request), route, {}, std::make_shared<net::HttpResponder>(std::move(respond))};
  const net::HttpRequest& req = call.request;

  if (needs_token(route, req) && !admit(call)) return;
  if (!route && !matched.allowed.empty()) {
    auto resp = net::error_response(405, "method_not_allowed",
                                    req.method + " is not allowed on " + req.path + "; use " + matched.allowed);
    resp.headers.emplace_back("Allow", matched.allowed);
    return (*call.respond)(resp);
  }
  if (!route && dashboard_) {
    if (auto file = dashboard_->serve(req)) return (*call.respond)(std::move(*file));
  }
  if (!route) {
    const bool versioned = !req.segments.empty() && req.segments[0] == "v1";
    return call.fail(Error::not_found("no such endpoint: " + (versioned ? req.method + " " : "") + req.path));
  }
  if (needs_token(route, req) && !call.who.may(*route->action)) return call.forbid(std::string(route->refused));
  if (auto problem = query_problem(*route, req)) return call.invalid(*problem, "invalid_query");
  if (req.method != "GET" && job_manager_.changes_wait_for_store()) {
    // Made now, its change would be stored before the daemon's own that wait (pending_writes.h).
    return call.fail(Error::unavailable("the daemon's own changes wait for the store (" +
                                        job_manager_.store_outage().problem().value_or("its writes failed") +
                                        "); nothing was changed, try again later"));
  }
  try {
    route->handler(handlers(), call);
  } catch (const InvalidInput& e) {
    call.invalid(e, "invalid_" + (e.field() == "id" ? std::string("id") : std::string("query")));
  }
}

}  // namespace trainyard::daemon
