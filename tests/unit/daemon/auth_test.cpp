// Token secrets, their hashes, and authentication of Authorization headers.
#include <gtest/gtest.h>

#include "daemon/base/auth.h"
#include "proto/time.h"

namespace trainyard::daemon {
namespace {

const TimePoint kAuthNow = from_unix_ms(1'700'000'000'000);

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(TokenSecret, IsPrefixedHexAndFresh) {
  const std::string a = generate_token_secret();
  const std::string b = generate_token_secret();
  ASSERT_EQ(a.size(), 3u + 64u);
  EXPECT_EQ(a.substr(0, 3), "ty_");
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef", 3), std::string::npos);
  EXPECT_NE(a, b);
}

TEST(TokenRegistry, KnowsEachNodesCredentialAndForgetsARemovedOne) {
  TokenRegistry tokens;
  tokens.add(store::TokenRecord{sha256_hex("join"), "agent", store::Role::agent, {}});
  tokens.add(store::TokenRecord{sha256_hex("n1"), node_token_user("n1"), store::Role::agent, {}});
  EXPECT_FALSE(tokens.authenticate("join", kAuthNow)->bound_node()) << "the join token is bound to no node";
  EXPECT_EQ(tokens.authenticate("n1", kAuthNow)->bound_node(), "n1");
  EXPECT_EQ(tokens.node_credential("n1"), sha256_hex("n1"));
  EXPECT_FALSE(tokens.node_credential("agent"));
  EXPECT_FALSE((Principal{node_token_user("n1"), store::Role::user}.bound_node())) << "only agent tokens are bound to nodes";

  tokens.remove(sha256_hex("n1"));
  EXPECT_FALSE(tokens.authenticate("n1", kAuthNow)) << "a removed token is not remembered as verified";
  EXPECT_FALSE(tokens.node_credential("n1"));
}

TEST(TokenRegistry, AuthenticatesByHashOnly) {
  TokenRegistry tokens;
  const std::string secret = generate_token_secret();
  tokens.add(store::TokenRecord{sha256_hex(secret), "alice", store::Role::user, {}});
  const auto who = tokens.authenticate(secret, kAuthNow);
  ASSERT_TRUE(who);
  EXPECT_EQ(who->user, "alice");
  EXPECT_FALSE(who->role == store::Role::admin);
  EXPECT_FALSE(tokens.authenticate(sha256_hex(secret), kAuthNow)) << "the stored hash is not a credential";
  EXPECT_FALSE(tokens.authenticate("", kAuthNow));
  EXPECT_FALSE(tokens.authenticate(secret + "x", kAuthNow));
}

TEST(TokenRegistry, ReplacingATokenChangesWhatItsSecretAuthenticatesAs) {
  TokenRegistry tokens;
  const std::string secret = generate_token_secret();
  tokens.add(store::TokenRecord{sha256_hex(secret), "alice", store::Role::admin, {}});
  ASSERT_TRUE(tokens.authenticate(secret, kAuthNow));
  EXPECT_TRUE(tokens.authenticate(secret, kAuthNow)->role == store::Role::admin)
      << "a secret authenticates again once verified";
  tokens.add(store::TokenRecord{sha256_hex(secret), "alice", store::Role::user, {}});
  ASSERT_TRUE(tokens.authenticate(secret, kAuthNow));
  EXPECT_FALSE(tokens.authenticate(secret, kAuthNow)->role == store::Role::admin)
      << "the replaced record's role must not outlive it";
}

TEST(TokenRegistry, AVerifiedSecretDoesNotAdmitOthersOfItsLength) {
  TokenRegistry tokens;
  const std::string secret = generate_token_secret();
  tokens.add(store::TokenRecord{sha256_hex(secret), "alice", store::Role::user, {}});
  ASSERT_TRUE(tokens.authenticate(secret, kAuthNow));
  std::string near = secret;
  near.back() = near.back() == 'a' ? 'b' : 'a';
  EXPECT_FALSE(tokens.authenticate(near, kAuthNow));
  EXPECT_FALSE(tokens.authenticate(generate_token_secret(), kAuthNow));
  EXPECT_TRUE(tokens.authenticate(secret, kAuthNow));
}

TEST(TokenRegistry, ParsesBearerHeaders) {
  TokenRegistry tokens;
  tokens.add(store::TokenRecord{sha256_hex("s3cret"), "root", store::Role::admin, {}});
  ASSERT_TRUE(tokens.authenticate_header("Bearer s3cret", kAuthNow));
  EXPECT_TRUE(tokens.authenticate_header("Bearer s3cret", kAuthNow)->role == store::Role::admin);
  EXPECT_FALSE(tokens.authenticate_header("s3cret", kAuthNow));
  EXPECT_FALSE(tokens.authenticate_header("Basic s3cret", kAuthNow));
  EXPECT_FALSE(tokens.authenticate_header("Bearer ", kAuthNow));
  EXPECT_FALSE(tokens.authenticate_header("Bearer  s3cret", kAuthNow));
  EXPECT_FALSE(tokens.authenticate_header("Bearer " + std::string(300, 'a'), kAuthNow))
      << "oversized secrets are not hashed";
}

TEST(TokenRegistry, AnExpiredTokenIsRefusedFromItsExpiryOn) {
  ManualTimeSource clock(kAuthNow);
  TokenRegistry tokens;
  store::TokenRecord token = new_token_record("s3cret", "alice", store::Role::user, clock.system_now());
  token.expires_at = clock.system_now() + std::chrono::seconds(30);
  tokens.add(token);
  ASSERT_TRUE(tokens.authenticate("s3cret", clock.system_now()));
  clock.advance(std::chrono::seconds(29));
  EXPECT_TRUE(tokens.authenticate("s3cret", clock.system_now())) << "verified and cached before its expiry";
  clock.advance(std::chrono::seconds(1));
  EXPECT_FALSE(tokens.authenticate("s3cret", clock.system_now())) << "the cache of verified secrets outlived the expiry";
}

TEST(TokenRegistry, RevokingForgetsAVerifiedSecretAndTellsTheListener) {
  TokenRegistry tokens;
  const store::TokenRecord token = new_token_record("s3cret", "alice", store::Role::user, kAuthNow);
  tokens.add(token);
  std::vector<std::string> heard;
  tokens.on_removed([&](const store::TokenRecord& t) { heard.push_back(t.id); });
  ASSERT_TRUE(tokens.authenticate("s3cret", kAuthNow));
  const auto found = tokens.find_by_id(token.id);
  ASSERT_TRUE(found);
  tokens.remove(found->hash);
  EXPECT_FALSE(tokens.authenticate("s3cret", kAuthNow)) << "the verified-secret cache outlived the revocation";
  EXPECT_FALSE(tokens.find_by_id(token.id));
  EXPECT_EQ(heard, std::vector<std::string>{token.id});
  tokens.add(new_token_record("other", "bob", store::Role::user, kAuthNow));
  tokens.add(new_token_record("other", "bob", store::Role::viewer, kAuthNow));
  EXPECT_EQ(heard.size(), 1u) << "replacing a token is no revocation";
}

TEST(TokenRegistry, ListsTokensOldestFirstWithTheirLastUseInMemory) {
  TokenRegistry tokens;
  const store::TokenRecord older = new_token_record("a", "alice", store::Role::user, kAuthNow);
  const store::TokenRecord newer =
      new_token_record("b", "bob", store::Role::viewer, kAuthNow + std::chrono::seconds(1));
  tokens.add(newer);
  tokens.add(older);
  tokens.authenticate("b", kAuthNow + std::chrono::seconds(5));
  const auto listed = tokens.list();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].id, older.id);
  EXPECT_FALSE(listed[0].last_used_at);
  EXPECT_EQ(listed[1].id, newer.id);
  EXPECT_EQ(listed[1].last_used_at, kAuthNow + std::chrono::seconds(5));
  EXPECT_NE(older.id, newer.id);
  EXPECT_TRUE(older.id.starts_with("tok_"));
}

TEST(TokenRegistry, WritesEachTokensLastUseAtMostOncePerInterval) {
  using std::chrono::seconds;
  ManualTimeSource clock(kAuthNow);
  TokenRegistry tokens;
  const store::TokenRecord token = new_token_record("s3cret", "alice", store::Role::user, clock.system_now());
  tokens.add(token);
  tokens.add(new_token_record("idle", "bob", store::Role::user, clock.system_now()));
  EXPECT_TRUE(tokens.take_uses_to_persist(clock.monotonic_now()).empty()) << "an unused token has no use to write";

  for (int i = 0; i < 100; ++i) tokens.authenticate("s3cret", clock.system_now());
  using Uses = std::vector<std::pair<std::string, TimePoint>>;
  EXPECT_EQ(tokens.take_uses_to_persist(clock.monotonic_now()), (Uses{{token.hash, kAuthNow}}))
      << "a hundred uses, one write";
  EXPECT_TRUE(tokens.take_uses_to_persist(clock.monotonic_now()).empty()) << "written already";

  clock.advance(seconds(10));
  tokens.authenticate("s3cret", clock.system_now());
  EXPECT_TRUE(tokens.take_uses_to_persist(clock.monotonic_now()).empty()) << "written less than a minute ago";
  clock.advance(kTokenUsePersistInterval - seconds(10));
  EXPECT_EQ(tokens.take_uses_to_persist(clock.monotonic_now()), (Uses{{token.hash, kAuthNow + seconds(10)}}))
      << "the newest use is written once the interval passed";
  clock.advance(kTokenUsePersistInterval);
  EXPECT_TRUE(tokens.take_uses_to_persist(clock.monotonic_now()).empty()) << "no use since the last write";

  ASSERT_EQ(tokens.take_uses_to_persist(clock.monotonic_now()).size(), 0u);
  tokens.authenticate("s3cret", clock.system_now());
  ASSERT_EQ(tokens.take_uses_to_persist(clock.monotonic_now()).size(), 1u);
  clock.step_system_clock(std::chrono::hours(1));
  tokens.authenticate("s3cret", clock.system_now());
  EXPECT_TRUE(tokens.take_uses_to_persist(clock.monotonic_now()).empty())
      << "a wall clock stepped an hour ahead is not a minute of waiting";
}

}  // namespace
}  // namespace trainyard::daemon
