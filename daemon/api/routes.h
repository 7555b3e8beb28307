#pragma once
// The route table: every REST route declared once. Api::handle dispatches from it (path, method,
// role check, query parameters), GET /v1/openapi.json is generated from it, and the role-walk
// test walks it, so a route cannot be served, documented and checked three different ways.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/base/roles.h"

namespace trainyard::daemon {

struct ApiCall;
struct ApiHandlers;

struct QueryParam {
  std::string_view name;
  std::string_view type;  // its JSON Schema type once parsed: "integer" or "string"
  // An integer's range: the dispatcher answers any other value with a 400 naming the parameter,
  // before the handler runs, so handlers read it without bounds of their own.
  std::int64_t minimum = 0;
  std::int64_t maximum = INT64_MAX;
  // A string's JSON Schema keywords beyond its type, as JSON text (an enum, a pattern), for the
  // document; "" for none. The handler's parser is what enforces them.
  std::string_view schema = "";
};

struct Route {
  // A resource handler's member, bound as on<&JobsApi::get_job> (daemon/api/handlers.h).
  using Handler = void (*)(const ApiHandlers&, ApiCall);

  std::string_view method;   // "GET", "POST", "PUT", "DELETE"
  std::string_view pattern;  // "/v1/jobs/{id}/logs": a {name} segment matches any one segment
  // What the caller's role must allow (daemon/base/roles.h); nullopt: no token needed. A handler may
  // check more (whose job it is).
  std::optional<Action> action;
  std::string_view refused;          // what a role without `action` "may not" do
  std::string_view request_schema;   // daemon/api/schemas.h; "" for no body
  std::string_view response_schema;  // of the success reply
  int success_status;
  std::string_view summary;
  std::vector<QueryParam> query;  // the query parameters it takes; any other is a 400
  Handler handler;
};

// What the table says of a request: its route (nullptr when none takes its method), the pattern
// its path matched ("" when none) and the methods that path takes, as a 405's Allow lists them.
struct RouteMatch {
  const Route* route = nullptr;
  std::string_view pattern;
  std::string allowed;
};

// In dispatch order; routes of one path are listed in the order their 405 names the methods.
const std::vector<Route>& api_routes();

// The pattern's segments as `segments` matches them; {name} matches any one segment.
bool path_matches(std::string_view pattern, const std::vector<std::string>& segments);

}  // namespace trainyard::daemon
