// Token lifecycle against the real daemon, agents and CLI: expiry, revocation at once, a revoked
// node credential's agent disconnected, and join token rotation that leaves joined agents alone.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

bool connected(Cluster& cluster, const std::string& node) {
  return cluster.api("GET", "/v1/nodes/" + node).body.value("connected", false);
}

TEST(Tokens, ATokenWithATtlExpiresAndARevokedOneIsRefusedAtOnce) {
  Cluster cluster;
  cluster.start_daemon();
  const ApiResult brief = cluster.api("POST", "/v1/tokens", R"({"user":"carol","ttl_s":2})");
  ASSERT_EQ(brief.status, 201) << brief.body.dump();
  const std::string brief_secret = brief.body["token"];
  EXPECT_EQ(cluster.api("GET", "/v1/jobs", "", brief_secret).status, 200);

  const ApiResult kept = cluster.api("POST", "/v1/tokens", R"({"user":"dave"})");
  const std::string kept_secret = kept.body["token"];
  ASSERT_EQ(cluster.api("GET", "/v1/jobs", "", kept_secret).status, 200);
  ASSERT_EQ(cluster.api("DELETE", "/v1/tokens/" + kept.body["id"].get<std::string>()).status, 200);
  EXPECT_EQ(cluster.api("GET", "/v1/jobs", "", kept_secret).status, 401) << "the revoked token worked once more";

  EXPECT_TRUE(eventually([&] { return cluster.api("GET", "/v1/jobs", "", brief_secret).status == 401; }, 10s))
      << "the token outlived its ttl";

  // The join token, revoked rather than rotated, is still in its file: it must not come back from it.
  std::string join_id;
  const Json listed = cluster.api("GET", "/v1/tokens").body;
  for (const Json& t : listed["tokens"]) {
    if (t["user"] == "agent" && t["role"] == "agent") join_id = t["id"];
  }
  ASSERT_EQ(cluster.api("DELETE", "/v1/tokens/" + join_id).status, 200);

  // None comes back with a restart.
  cluster.kill_daemon(SIGTERM);
  cluster.start_daemon();
  EXPECT_EQ(cluster.api("GET", "/v1/jobs", "", kept_secret).status, 401);
  EXPECT_EQ(cluster.api("GET", "/v1/jobs", "", brief_secret).status, 401);
  cluster.start_agent("node-a");
  const auto status = cluster.agent("node-a").wait_exit(20s);
  ASSERT_TRUE(status) << "an agent joined with a revoked join token read back from its file";
  EXPECT_EQ(WEXITSTATUS(*status), 3);
}

TEST(Tokens, RevokingANodesCredentialDisconnectsItsAgent) {
  Cluster cluster;
  cluster.start_daemon();
  cluster.start_agent("node-a");
  cluster.wait_for_nodes(1);
  std::string id;
  const Json listed = cluster.api("GET", "/v1/tokens").body;
  for (const Json& t : listed["tokens"]) {
    if (t["user"] == "node:node-a") id = t["id"];
  }
  ASSERT_FALSE(id.empty()) << listed.dump(2);
  ASSERT_EQ(cluster.api("DELETE", "/v1/tokens/" + id).status, 200);
  EXPECT_TRUE(eventually([&] { return !connected(cluster, "node-a"); }, 10s))
      << "the agent stayed connected with a revoked credential";
  const auto status = cluster.agent("node-a").wait_exit(30s);
  ASSERT_TRUE(status) << "the agent kept reconnecting with its revoked credential";
}

TEST(Tokens, RotatingTheJoinTokenKeepsJoinedAgentsAndAdmitsOnlyTheNewOne) {
  Cluster cluster;
  cluster.start_daemon();
  cluster.start_agent("node-a");
  cluster.wait_for_nodes(1);
  const std::string join_file = cluster.dir() + "/data/join.token";
  const std::string old_file = cluster.dir() + "/old-join.token";
  std::ofstream(old_file) << read_text(join_file);

  const std::string out = cluster.dir() + "/rotate.out";
  const std::string cli = std::string(TRAINYARD_CLI_BIN) + " --server " + cluster.url() + " --token-file " +
                          cluster.dir() + "/data/admin.token";
  ASSERT_EQ(std::system((cli + " token rotate-join > " + out + " 2>&1").c_str()), 0) << read_text(out);
  const std::string secret = trimmed(read_text(out));
  ASSERT_TRUE(secret.starts_with("ty_")) << secret;
  EXPECT_EQ(trimmed(read_text(join_file)), secret) << "the daemon did not rewrite its join.token";
  struct stat st {};
  ASSERT_EQ(::stat(join_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  cluster.start_agent("node-old", AgentSpec{4, {}, old_file});
  const auto refused = cluster.agent("node-old").wait_exit(20s);
  ASSERT_TRUE(refused) << "an agent joined with the old join token";
  EXPECT_EQ(WEXITSTATUS(*refused), 3);

  cluster.start_agent("node-b");  // the daemon's join.token: the new secret
  cluster.wait_for_nodes(2);
  EXPECT_TRUE(connected(cluster, "node-a")) << "the rotation disturbed an agent that had joined";
  EXPECT_TRUE(cluster.agent("node-a").running());

  // The CLI lists them, never with a secret.
  ASSERT_EQ(std::system((cli + " token list > " + out + " 2>&1").c_str()), 0) << read_text(out);
  const std::string listed = read_text(out);
  EXPECT_NE(listed.find("node:node-b"), std::string::npos) << listed;
  EXPECT_EQ(listed.find(secret), std::string::npos) << listed;
}

}  // namespace
}  // namespace trainyard::testing
