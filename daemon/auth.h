#pragma once
// Bearer tokens (DESIGN.md "Security"): secrets are random, shown once, and stored only as their
// SHA-256. Roles: admin (everything), user (own jobs), agent (the gateway only: the join token, and
// each node's own credential, whose user is node_token_user(node); see node_credentials.h).
#include <optional>
#include <string>
#include <unordered_map>

#include "store/store.h"

namespace trainyard {

struct Principal {
  std::string user;
  Role role = Role::user;
  bool is_admin() const { return role == Role::admin; }
  // The node a node credential is bound to; nullopt for every other token, the join token included.
  std::optional<std::string> bound_node() const;
};

// The token user of a node's own credential: "node:" + its name (user names cannot hold a colon).
std::string node_token_user(std::string_view node);

// `bytes` random bytes from the OpenSSL CSPRNG, as hex.
std::string random_hex(std::size_t bytes);
// A new random token secret: "ty_" + 64 hex characters.
std::string generate_token_secret();
std::string sha256_hex(std::string_view data);

// Known tokens, by hash. Tokens are few, so all of them live in memory; the store is the record.
// I/O thread only.
class TokenRegistry {
 public:
  // Adds a token or replaces the one with the same hash.
  void add(const TokenRecord& record);
  void remove(const std::string& hash);
  // The hash of `node`'s own credential, if it has one.
  std::optional<std::string> node_credential(const std::string& node) const;
  std::optional<Principal> authenticate(std::string_view secret) const;
  // Parses an "Authorization: Bearer <secret>" header value.
  std::optional<Principal> authenticate_header(std::string_view header_value) const;

 private:
  struct Verified {
    std::string secret;
    Principal who;
  };

  std::unordered_map<std::string, TokenRecord> by_hash_;
  std::unordered_map<std::string, std::string> node_credentials_;  // node -> hash of its credential
  // Secrets that already hashed to a known token, by std::hash of the secret: a client sends the
  // same secret with every request, and hashing it each time was a visible share of a
  // submission's CPU. Only verified secrets enter, so there are at most as many as tokens; `add`
  // clears it, so a replaced token's old role is never served from here.
  mutable std::unordered_map<std::size_t, Verified> verified_;
};

}  // namespace trainyard
