#pragma once
// One request in flight: the request, the route it matched, the caller, and the ways to answer.
// Copied into the continuations of handlers that answer later; the responder is shared.
#include <memory>
#include <string>

#include "daemon/api/routes.h"
#include "daemon/base/auth.h"
#include "net/http_server.h"
#include "proto/errors.h"
#include "proto/result.h"
#include "proto/text.h"

namespace trainyard::daemon {

struct ApiCall {
  net::HttpRequest request;
  const Route* matched = nullptr;
  Principal who;
  std::shared_ptr<net::HttpResponder> respond;

  // The path segment the route's pattern names {name} (the route must have it).
  const std::string& param(std::string_view name) const;
  // The route's {id}, a whole number from 1; throws InvalidInput("id") otherwise.
  std::int64_t id() const;

  void reply(int status, const Json& body) const {
    (*respond)(net::HttpResponse{status, "application/json", json_text(body), {}});
  }
  void fail(int status, const std::string& code, const std::string& message, const std::string& field = "") const {
    (*respond)(net::error_response(status, code, message, field));
  }
  // An expected failure, answered with its code's status (the one place that maps them); the
  // message of an invalid field starts with the field, as invalid()'s does.
  void fail(const Error& error) const;
  void invalid(const InvalidInput& e, const std::string& code = "invalid_field") const {
    fail(400, code, e.what(), e.field());
  }
  // A request body that failed to parse or validate: invalid_json without a field.
  void invalid_body(const InvalidInput& e) const { invalid(e, e.field().empty() ? "invalid_json" : "invalid_field"); }
  std::string route() const { return request.method + " " + request.path; }
  // The caller's role does not allow `what` (daemon/base/roles.h).
  void forbid(const std::string& what) const {
    fail(Error::forbidden("role " + to_string(who.role) + " may not " + what));
  }
};

}  // namespace trainyard::daemon
