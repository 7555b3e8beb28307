// The running daemon serves its OpenAPI document without a token, and answers every documented
// JSON route that needs no path parameter with the success status the document gives it.
#include <gtest/gtest.h>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

TEST(OpenApi, TheDaemonServesItsDocumentWithoutATokenAndAnswersAsItSays) {
  Cluster cluster;
  cluster.start_daemon();
  const ApiResult doc = cluster.api("GET", "/v1/openapi.json", "", kNoToken);
  ASSERT_EQ(doc.status, 200) << doc.body.dump();
  EXPECT_EQ(doc.body["openapi"], "3.1.0");
  int checked = 0;
  for (const auto& [path, item] : doc.body["paths"].items()) {
    if (path.find('{') != std::string::npos || !item.contains("get")) continue;
    const Json& responses = item["get"]["responses"];
    if (!responses.contains("200") || !responses["200"]["content"].contains("application/json")) continue;
    EXPECT_EQ(cluster.api("GET", path).status, 200) << path;
    ++checked;
  }
  EXPECT_GE(checked, 8) << "GET /v1/jobs, /v1/nodes, /v1/shares, /v1/tokens, ... are documented";
}

}  // namespace
}  // namespace trainyard::testing
