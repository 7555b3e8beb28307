#include "daemon/api/openapi.h"

#include <array>
#include <stdexcept>

#include "store/store.h"

namespace trainyard::daemon {
namespace {

Json ref(std::string_view schema) { return {{"$ref", "#/components/schemas/" + std::string(schema)}}; }

// The named schema; a route naming one that is not declared is a bug, caught by the tests.
const ApiSchema& schema_of(const std::map<std::string, ApiSchema, std::less<>>& schemas, std::string_view name) {
  const auto it = schemas.find(name);
  if (it == schemas.end()) throw std::logic_error("route names undeclared schema " + std::string(name));
  return it->second;
}

// "get /v1/jobs/{id}/logs" -> "get_v1_jobs_id_logs"
std::string operation_id(const Route& route) {
  std::string id;
  for (const char c : route.method) id += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char c : route.pattern) {
    if (c == '/' || c == '.') id += '_';
    else if (c != '{' && c != '}') id += c;
  }
  return id;
}

Json parameters(const Route& route) {
  Json list = Json::array();
  std::size_t at = 0;
  while ((at = route.pattern.find('{', at)) != std::string_view::npos) {
    const std::size_t end = route.pattern.find('}', at);
    const std::string name(route.pattern.substr(at + 1, end - at - 1));
    Json schema = {{"type", "string"}};
    if (name == "id") {
      // A job is also addressed as task N of array ID: "ID_N".
      schema = route.pattern.starts_with("/v1/jobs/") ? Json{{"type", "string"}, {"pattern", "^[1-9][0-9]*(_[0-9]+)?$"}}
                                                      : Json{{"type", "integer"}, {"minimum", 1}};
    } else if (name == "n") {
      // An attempt's number, or the newest ("last"); a delivery's id.
      schema = route.pattern.ends_with("/provenance") ? Json{{"type", "string"}, {"pattern", "^([1-9][0-9]*|last)$"}}
                                                      : Json{{"type", "integer"}, {"minimum", 1}};
    }
    list.push_back({{"name", name}, {"in", "path"}, {"required", true}, {"schema", schema}});
    at = end;
  }
  for (const QueryParam& param : route.query) {
    Json schema = param.schema.empty() ? Json::object() : Json::parse(param.schema);
    schema["type"] = param.type;
    if (param.type == "integer") {
      schema["minimum"] = param.minimum;
      schema["maximum"] = param.maximum;
    }
    list.push_back({{"name", param.name}, {"in", "query"}, {"required", false}, {"schema", schema}});
  }
  return list;
}

// The roles route.action allows, as a reader of the document wants them spelled.
Json roles_allowed(const Route& route) {
  Json roles = Json::array();
  for (const store::Role role : {store::Role::admin, store::Role::operator_, store::Role::user, store::Role::viewer}) {
    if (allows(role, *route.action)) roles.push_back(to_string(role));
  }
  return roles;
}

Json operation(const Route& route, const std::map<std::string, ApiSchema, std::less<>>& schemas) {
  const ApiSchema& answer = schema_of(schemas, route.response_schema);
  const Json error = {{"description", "an error naming what was wrong"},
                      {"content", {{"application/json", {{"schema", ref("Error")}}}}}};
  Json success = {{"description", route.summary},
                  {"content", {{answer.media_type, {{"schema", ref(route.response_schema)}}}}}};
  Json responses = {{std::to_string(route.success_status), success}, {"default", error}};
  // The one route whose failure answers with its own schema: a degraded /healthz says why in it.
  if (route.pattern == "/healthz") {
    responses["503"] = {{"description", "degraded: the store confirms no lease renewal, or its writes fail"},
                        {"content", {{answer.media_type, {{"schema", ref(route.response_schema)}}}}}};
  }
  Json op = {{"operationId", operation_id(route)}, {"summary", route.summary}, {"responses", responses}};
  if (const Json params = parameters(route); !params.empty()) op["parameters"] = params;
  if (!route.request_schema.empty()) {
    const ApiSchema& body = schema_of(schemas, route.request_schema);
    // A body whose every field is optional may be left out (drain's).
    op["requestBody"] = {{"required", body.schema.contains("required")},
                         {"content", {{body.media_type, {{"schema", ref(route.request_schema)}}}}}};
  }
  if (route.action) {
    op["security"] = Json::array({{{"bearer", Json::array()}}});
    op["x-trainyard-roles"] = roles_allowed(route);
  } else {
    op["security"] = Json::array();
  }
  return op;
}

}  // namespace

Json openapi_document(const std::vector<Route>& routes, const std::map<std::string, ApiSchema, std::less<>>& schemas,
                      const std::string& version) {
  Json paths = Json::object();
  for (const Route& route : routes) {
    std::string method(route.method);
    for (char& c : method) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    paths[std::string(route.pattern)][method] = operation(route, schemas);
  }
  Json components = Json::object();
  for (const auto& [name, schema] : schemas) components[name] = schema.schema;
  return {{"openapi", "3.1.0"},
          {"info",
           {{"title", "Trainyard"},
            {"version", version},
            {"description",
             "The Trainyard control plane's REST API, generated from the daemon's route table. Send "
             "Authorization: Bearer <token>; x-trainyard-roles lists the roles an operation admits (a handler may "
             "narrow it to one's own jobs or tokens). Errors are {\"error\":{\"code\",\"message\",\"field\"}}."}}},
          {"paths", paths},
          {"components",
           {{"schemas", components}, {"securitySchemes", {{"bearer", {{"type", "http"}, {"scheme", "bearer"}}}}}}}};
}

}  // namespace trainyard::daemon
