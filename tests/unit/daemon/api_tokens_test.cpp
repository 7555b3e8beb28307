// The REST API on tokens: created, listed, expired, revoked and the join token rotated.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/unit/daemon/api_fixture.h"

namespace trainyard::daemon::testing {
namespace {

using ::testing::HasSubstr;

TEST_F(ApiTest, OnlyAdminsCreateTokensAndTheNewTokenWorks) {
  Reply r = call("POST", "/v1/tokens", kAlice, R"({"user":"carol"})");
  EXPECT_EQ(r.status, 403);
  r = call("POST", "/v1/tokens", kAdmin, R"({"user":"carol","role":"agent"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.error_field(), "role");
  r = call("POST", "/v1/tokens", kAdmin, R"({"user":"carol","expires":1})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.error_field(), "expires");
  r = call("POST", "/v1/tokens", kAdmin, R"({"user":"bad name!"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.error_field(), "user");

  r = call("POST", "/v1/tokens", kAdmin, R"({"user":"carol"})");
  ASSERT_EQ(r.status, 201) << r.body.dump();
  EXPECT_EQ(r.body["role"], "user");
  const std::string secret = r.body.value("token", "");
  ASSERT_FALSE(secret.empty());
  const Reply carol = call("GET", "/v1/jobs", secret);
  EXPECT_EQ(carol.status, 200);
  const JobId id = submit_as(secret);
  EXPECT_EQ(call("GET", "/v1/jobs/" + std::to_string(id), secret).body["user"], "carol");
  EXPECT_EQ(call("POST", "/v1/tokens", secret, R"({"user":"dave"})").status, 403) << "a user token made by an admin is no admin";
}

TEST_F(ApiTest, TokensAreListedWithoutSecretsAdminsAllOthersTheirOwn) {
  const Reply made = call("POST", "/v1/tokens", kAdmin, R"({"user":"alice","role":"viewer","ttl_s":3600})");
  ASSERT_EQ(made.status, 201) << made.body.dump();
  EXPECT_EQ(made.body["role"], "viewer");
  EXPECT_EQ(made.body["expires_at"], format_time(cluster.clock.system_now() + std::chrono::hours(1)));
  const std::string secret = made.body["token"];

  const Reply all = call("GET", "/v1/tokens", kAdmin);
  ASSERT_EQ(all.status, 200);
  EXPECT_EQ(all.body["tokens"].size(), 7u) << "six in the fixture, the join token among them, and the new one";
  const Reply own = call("GET", "/v1/tokens", kAlice);
  ASSERT_EQ(own.body["tokens"].size(), 2u);
  for (const Json& t : own.body["tokens"]) {
    EXPECT_EQ(t["user"], "alice");
    EXPECT_FALSE(t.contains("token"));
    EXPECT_FALSE(t.contains("hash"));
  }
  EXPECT_EQ(own.body["tokens"][1]["id"], made.body["id"]);
  for (const std::string& s : {secret, std::string(kAlice), sha256_hex(secret), sha256_hex(kAlice)}) {
    EXPECT_EQ(all.body.dump().find(s), std::string::npos) << "a listing leaked a secret or its hash";
  }
  EXPECT_NE(own.body["tokens"][0]["last_used_at"], Json(nullptr)) << "alice's token was used to list";
}

TEST_F(ApiTest, ATokenWithATtlExpires) {
  const Reply made = call("POST", "/v1/tokens", kAdmin, R"({"user":"carol","ttl_s":60})");
  ASSERT_EQ(made.status, 201);
  const std::string secret = made.body["token"];
  EXPECT_EQ(call("GET", "/v1/jobs", secret).status, 200);
  cluster.clock.advance(std::chrono::seconds(60));
  const Reply expired = call("GET", "/v1/jobs", secret);
  EXPECT_EQ(expired.status, 401);
  EXPECT_THAT(expired.error_message(), HasSubstr("expired"));
  for (const std::string bad : {R"({"user":"carol","ttl_s":0})", R"({"user":"carol","ttl_s":"1d"})",
                                R"({"user":"carol","ttl_s":1e12})"}) {
    const Reply r = call("POST", "/v1/tokens", kAdmin, bad);
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_EQ(r.error_field(), "ttl_s") << bad;
  }
}

TEST_F(ApiTest, RevokingATokenRefusesItsNextRequest) {
  const Reply made = call("POST", "/v1/tokens", kAdmin, R"({"user":"carol"})");
  const std::string secret = made.body["token"];
  const std::string id = made.body["id"];
  ASSERT_EQ(call("GET", "/v1/jobs", secret).status, 200) << "used once, so its secret is cached as verified";
  EXPECT_EQ(call("DELETE", "/v1/tokens/" + id, kAlice).status, 404) << "another user's token answers as a missing one";
  const Reply revoked = call("DELETE", "/v1/tokens/" + id, kAdmin);
  EXPECT_EQ(revoked.status, 200) << revoked.body.dump();
  EXPECT_EQ(call("GET", "/v1/jobs", secret).status, 401);
  EXPECT_EQ(call("DELETE", "/v1/tokens/" + id, kAdmin).status, 404);
  EXPECT_FALSE(cluster.memory.token_by_hash(sha256_hex(secret))) << "the revocation was not stored";

  const std::string alices = call("GET", "/v1/tokens", kAlice).body["tokens"][0]["id"];
  EXPECT_EQ(call("DELETE", "/v1/tokens/" + alices, kAlice).status, 200) << "anyone may give up their own token";
  EXPECT_EQ(call("GET", "/v1/jobs", kAlice).status, 401);
}

TEST_F(ApiTest, RotatingTheJoinTokenReplacesItInMemoryTheStoreAndItsFile) {
  EXPECT_EQ(call("POST", "/v1/tokens/join/rotate", kOperator).status, 403);
  const Reply rotated = call("POST", "/v1/tokens/join/rotate", kAdmin);
  ASSERT_EQ(rotated.status, 200) << rotated.body.dump();
  const std::string secret = rotated.body["token"];
  EXPECT_FALSE(tokens.authenticate(kJoin, cluster.clock.system_now())) << "the old join token still works";
  const auto who = tokens.authenticate(secret, cluster.clock.system_now());
  ASSERT_TRUE(who);
  EXPECT_EQ(who->role, store::Role::agent);
  EXPECT_FALSE(who->bound_node());
  EXPECT_TRUE(cluster.memory.token_by_hash(sha256_hex(secret)));
  std::ifstream file(join_file);
  std::string written;
  std::getline(file, written);
  EXPECT_EQ(written, secret);
  EXPECT_EQ(std::filesystem::status(join_file).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

}  // namespace
}  // namespace trainyard::daemon::testing
