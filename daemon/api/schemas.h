#pragma once
// The JSON Schemas (draft 2020-12, as OpenAPI 3.1 uses them) of the API's request and response
// bodies, declared once and named by the route table; GET /v1/openapi.json publishes them.
#include <map>
#include <string>
#include <string_view>

#include "proto/text.h"

namespace trainyard::daemon {

struct ApiSchema {
  std::string media_type;  // "application/json", or the exposition's for PrometheusText
  Json schema;             // may $ref others as "#/components/schemas/<name>"
};

// Every schema by name; "Error" is the body of every error reply.
const std::map<std::string, ApiSchema, std::less<>>& api_schemas();

}  // namespace trainyard::daemon
