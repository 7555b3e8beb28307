#pragma once
// The OpenAPI 3.1 document of the API, generated from the route table and the schemas; pure, so
// a test and a tool can write it without a daemon.
#include <map>
#include <string>
#include <vector>

#include "daemon/api/routes.h"
#include "daemon/api/schemas.h"

namespace trainyard::daemon {

Json openapi_document(const std::vector<Route>& routes, const std::map<std::string, ApiSchema, std::less<>>& schemas,
                      const std::string& version);

}  // namespace trainyard::daemon
