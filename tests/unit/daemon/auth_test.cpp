// Token secrets, their hashes, and authentication of Authorization headers.
#include <gtest/gtest.h>

#include "daemon/auth.h"

namespace trainyard {
namespace {

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
  tokens.add(TokenRecord{sha256_hex("join"), "agent", Role::agent, {}});
  tokens.add(TokenRecord{sha256_hex("n1"), node_token_user("n1"), Role::agent, {}});
  EXPECT_FALSE(tokens.authenticate("join")->bound_node()) << "the join token is bound to no node";
  EXPECT_EQ(tokens.authenticate("n1")->bound_node(), "n1");
  EXPECT_EQ(tokens.node_credential("n1"), sha256_hex("n1"));
  EXPECT_FALSE(tokens.node_credential("agent"));
  EXPECT_FALSE((Principal{node_token_user("n1"), Role::user}.bound_node())) << "only agent tokens are bound to nodes";

  tokens.remove(sha256_hex("n1"));
  EXPECT_FALSE(tokens.authenticate("n1")) << "a removed token is not remembered as verified";
  EXPECT_FALSE(tokens.node_credential("n1"));
}

TEST(TokenRegistry, AuthenticatesByHashOnly) {
  TokenRegistry tokens;
  const std::string secret = generate_token_secret();
  tokens.add(TokenRecord{sha256_hex(secret), "alice", Role::user, {}});
  const auto who = tokens.authenticate(secret);
  ASSERT_TRUE(who);
  EXPECT_EQ(who->user, "alice");
  EXPECT_FALSE(who->is_admin());
  EXPECT_FALSE(tokens.authenticate(sha256_hex(secret))) << "the stored hash is not a credential";
  EXPECT_FALSE(tokens.authenticate(""));
  EXPECT_FALSE(tokens.authenticate(secret + "x"));
}

TEST(TokenRegistry, ReplacingATokenChangesWhatItsSecretAuthenticatesAs) {
  TokenRegistry tokens;
  const std::string secret = generate_token_secret();
  tokens.add(TokenRecord{sha256_hex(secret), "alice", Role::admin, {}});
  ASSERT_TRUE(tokens.authenticate(secret));
  EXPECT_TRUE(tokens.authenticate(secret)->is_admin()) << "a secret authenticates again once verified";
  tokens.add(TokenRecord{sha256_hex(secret), "alice", Role::user, {}});
  ASSERT_TRUE(tokens.authenticate(secret));
  EXPECT_FALSE(tokens.authenticate(secret)->is_admin()) << "the replaced record's role must not outlive it";
}

TEST(TokenRegistry, AVerifiedSecretDoesNotAdmitOthersOfItsLength) {
  TokenRegistry tokens;
  const std::string secret = generate_token_secret();
  tokens.add(TokenRecord{sha256_hex(secret), "alice", Role::user, {}});
  ASSERT_TRUE(tokens.authenticate(secret));
  std::string near = secret;
  near.back() = near.back() == 'a' ? 'b' : 'a';
  EXPECT_FALSE(tokens.authenticate(near));
  EXPECT_FALSE(tokens.authenticate(generate_token_secret()));
  EXPECT_TRUE(tokens.authenticate(secret));
}

TEST(TokenRegistry, ParsesBearerHeaders) {
  TokenRegistry tokens;
  tokens.add(TokenRecord{sha256_hex("s3cret"), "root", Role::admin, {}});
  ASSERT_TRUE(tokens.authenticate_header("Bearer s3cret"));
  EXPECT_TRUE(tokens.authenticate_header("Bearer s3cret")->is_admin());
  EXPECT_FALSE(tokens.authenticate_header("s3cret"));
  EXPECT_FALSE(tokens.authenticate_header("Basic s3cret"));
  EXPECT_FALSE(tokens.authenticate_header("Bearer "));
  EXPECT_FALSE(tokens.authenticate_header("Bearer  s3cret"));
  EXPECT_FALSE(tokens.authenticate_header("Bearer " + std::string(300, 'a'))) << "oversized secrets are not hashed";
}

}  // namespace
}  // namespace trainyard
