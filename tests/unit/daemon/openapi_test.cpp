// GET /v1/openapi.json: generated from the route table and the schemas, readable without a token,
// complete (every route; every route the README documents), and self-consistent (every schema a
// route or a schema names is declared). deploy/openapi/ validates it against the OpenAPI 3.1
// schema in CI; with TRAINYARD_OPENAPI_OUT set, this test writes the document there for it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "daemon/api/openapi.h"
#include "daemon/api/routes.h"
#include "daemon/api/schemas.h"
#include "daemon/base/prometheus.h"
#include "tests/unit/daemon/api_fixture.h"

namespace trainyard::daemon::testing {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Every "$ref" in `j`.
void collect_refs(const Json& j, std::set<std::string>& refs) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if (key == "$ref" && value.is_string()) refs.insert(value.get<std::string>());
      collect_refs(value, refs);
    }
  } else if (j.is_array()) {
    for (const Json& item : j) collect_refs(item, refs);
  }
}

// "GET /v1/jobs/{id}/logs" for every route named in README.md's REST API section.
std::set<std::string> readme_routes() {
  std::ifstream in(std::string(TRAINYARD_SOURCE_DIR) + "/README.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  const auto start = readme.find("## The REST API");
  const auto end = readme.find("\n## ", start + 1);
  EXPECT_NE(start, std::string::npos) << "README.md has no REST API section";
  const std::string section = readme.substr(start, end - start);
  std::set<std::string> routes;
  const std::regex route_text("`(GET|POST|PUT|DELETE|PATCH) (/[^`?]*)");
  for (auto it = std::sregex_iterator(section.begin(), section.end(), route_text); it != std::sregex_iterator(); ++it) {
    routes.insert((*it)[1].str() + " " + (*it)[2].str());
  }
  return routes;
}

TEST(OpenApi, DescribesEveryRouteWithItsRolesParametersAndSchemas) {
  const Json doc = openapi_document(api_routes(), api_schemas(), "1.2.3");
  EXPECT_EQ(doc["openapi"], "3.1.0");
  EXPECT_EQ(doc["info"]["version"], "1.2.3");
  std::set<std::string> operation_ids;
  for (const Route& route : api_routes()) {
    const std::string method = lower(route.method);
    const std::string pattern(route.pattern);
    ASSERT_TRUE(doc["paths"].contains(pattern)) << pattern;
    ASSERT_TRUE(doc["paths"][pattern].contains(method)) << method << " " << pattern;
    const Json& op = doc["paths"][pattern][method];
    EXPECT_TRUE(operation_ids.insert(op["operationId"]).second) << op["operationId"];
    EXPECT_TRUE(op["responses"].contains(std::to_string(route.success_status))) << pattern;
    EXPECT_EQ(op["security"].empty(), !route.action) << pattern;
    for (const QueryParam& param : route.query) EXPECT_THAT(op.dump(), ::testing::HasSubstr(std::string(param.name)));
  }
  const Json& drain = doc["paths"]["/v1/nodes/{name}/drain"]["post"];
  EXPECT_EQ(drain["x-trainyard-roles"], Json::array({"admin", "operator"}));
  EXPECT_FALSE(drain["requestBody"]["required"]) << "a drain needs no body";
  EXPECT_TRUE(doc["paths"]["/v1/jobs"]["post"]["requestBody"]["required"]);
  // A job is "12" or, a task of an array, "12_3".
  EXPECT_EQ(doc["paths"]["/v1/jobs/{id}"]["get"]["parameters"][0]["schema"]["pattern"], "^[1-9][0-9]*(_[0-9]+)?$");
  EXPECT_EQ(doc["paths"]["/v1/healthchecks/{id}"]["get"]["parameters"][0]["schema"]["type"], "integer");
  EXPECT_TRUE(doc["paths"]["/metrics"]["get"]["responses"]["200"]["content"].contains(prom::kContentType));
}

TEST(OpenApi, EverySchemaReferencedIsDeclared) {
  const Json doc = openapi_document(api_routes(), api_schemas(), "test");
  std::set<std::string> refs;
  collect_refs(doc, refs);
  EXPECT_FALSE(refs.empty());
  for (const std::string& ref : refs) {
    const std::string prefix = "#/components/schemas/";
    ASSERT_TRUE(ref.starts_with(prefix)) << ref;
    EXPECT_TRUE(doc["components"]["schemas"].contains(ref.substr(prefix.size()))) << ref;
  }
}

TEST(OpenApi, EveryRouteInTheReadmeIsInTheTableAndEveryRouteIsInTheReadme) {
  std::set<std::string> table;
  for (const Route& route : api_routes()) table.insert(std::string(route.method) + " " + std::string(route.pattern));
  const std::set<std::string> readme = readme_routes();
  EXPECT_GE(readme.size(), 20u) << "README.md's API table was not found";
  EXPECT_EQ(readme, table);
}

// The document publishes each integer query parameter's range from the route table, and the
// dispatcher refuses a value outside it, naming the parameter, before any handler runs: the two
// cannot disagree.
TEST_F(ApiTest, AnIntegerQueryParameterOutsideItsDocumentedRangeIsRefusedNamingIt) {
  const Json doc = openapi_document(api_routes(), api_schemas(), "test");
  int checked = 0;
  for (const Route& route : api_routes()) {
    const std::string target = std::regex_replace(std::string(route.pattern), std::regex("\\{[a-z_]+\\}"), "1");
    for (const QueryParam& param : route.query) {
      if (param.type != "integer") continue;
      const Json& parameters = doc["paths"][std::string(route.pattern)][lower(route.method)]["parameters"];
      const auto documented = std::find_if(parameters.begin(), parameters.end(),
                                           [&](const Json& p) { return p["name"] == param.name; });
      ASSERT_NE(documented, parameters.end()) << route.pattern << " " << param.name;
      EXPECT_EQ((*documented)["schema"]["minimum"], param.minimum) << route.pattern << " " << param.name;
      EXPECT_EQ((*documented)["schema"]["maximum"], param.maximum) << route.pattern << " " << param.name;
      std::vector<std::string> outside = {"x1", std::to_string(param.minimum) + ".5"};
      if (param.minimum > INT64_MIN) outside.push_back(std::to_string(param.minimum - 1));
      if (param.maximum < INT64_MAX) outside.push_back(std::to_string(param.maximum + 1));
      for (const std::string& value : outside) {
        const Reply r = call(std::string(route.method), target + "?" + std::string(param.name) + "=" + value, kAdmin);
        if (r.status == 404 && r.error_message().starts_with("no such endpoint")) break;  // not served here (webhooks)
        EXPECT_EQ(r.status, 400) << route.method << " " << target << " " << param.name << "=" << value;
        EXPECT_EQ(r.error_code(), "invalid_query") << route.pattern << " " << param.name << "=" << value;
        EXPECT_EQ(r.error_field(), param.name) << route.pattern << " " << param.name << "=" << value;
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 60) << "limit, before, after, rank, tail, ... of the list routes, 3 or 4 values each";
}

TEST_F(ApiTest, TheOpenApiDocumentIsServedWithoutAToken) {
  const Reply r = call("GET", "/v1/openapi.json", "");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body, openapi_document(api_routes(), api_schemas(), "test-version"));
  EXPECT_EQ(call("GET", "/v1/openapi.json", "ty_not-a-token").status, 200) << "a bad token does not matter here";
  if (const char* out = std::getenv("TRAINYARD_OPENAPI_OUT")) std::ofstream(out) << r.text;
}

}  // namespace
}  // namespace trainyard::daemon::testing
