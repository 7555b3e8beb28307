#pragma once
// Bearer tokens (docs/DESIGN.md "Security"): secrets are random, shown once, and stored only as their
// SHA-256. Each token has a public id, an owner, a role (daemon/base/roles.h says what each may do), an
// optional expiry and a last-used time. Agents hold agent tokens: the join token, and each node's
// own credential, whose user is node_token_user(node); see node_credentials.h.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "daemon/base/roles.h"
#include "proto/sha256.h"
#include "store/store.h"

namespace trainyard::daemon {

struct Principal {
  std::string user;
  store::Role role = store::Role::user;
  std::string token_id;  // the token it authenticated with
  bool may(Action action) const { return allows(role, action); }
  // The node a node credential is bound to; nullopt for every other token, the join token included.
  std::optional<std::string> bound_node() const;
};

// The token user of a node's own credential: "node:" + its name (user names cannot hold a colon).
std::string node_token_user(std::string_view node);

// `bytes` random bytes from the OpenSSL CSPRNG, as hex.
std::string random_hex(std::size_t bytes);
// A new random token secret: "ty_" + 64 hex characters.
std::string generate_token_secret();
// A new token's record: its secret's hash and a fresh public id ("tok_" + 16 hex characters).
store::TokenRecord new_token_record(std::string_view secret, std::string user, store::Role role, TimePoint now);

// How often a token's last use reaches the store at most: a client sends its token with every
// request, and a write per request would cost more than the request.
inline constexpr std::chrono::seconds kTokenUsePersistInterval{60};

// Known tokens, by hash. Tokens are few, so all of them live in memory; the store is the record.
// I/O thread only.
class TokenRegistry {
 public:
  // Adds a token or replaces the one with the same hash.
  void add(const store::TokenRecord& record);
  // Forgets a token at once: its secret authenticates no more, and `on_removed` hears of it.
  void remove(const std::string& hash);
  std::optional<store::TokenRecord> find_by_id(const std::string& id) const;
  // Every token, with its last use as known in memory, oldest first (by created_at, then id).
  std::vector<store::TokenRecord> list() const;
  // The hash of `node`'s own credential, if it has one.
  std::optional<std::string> node_credential(const std::string& node) const;
  // Who `secret` is at `now`, noting the use; nullopt for an unknown or expired secret.
  std::optional<Principal> authenticate(std::string_view secret, TimePoint now);
  // Parses an "Authorization: Bearer <secret>" header value.
  std::optional<Principal> authenticate_header(std::string_view header_value, TimePoint now);
  // The last uses to write to the store: of each token, its newest use not yet written, once per
  // kTokenUsePersistInterval at most (measured on the monotonic clock: a step of the wall clock
  // neither floods the store nor holds uses back). Marks them written.
  std::vector<std::pair<std::string, TimePoint>> take_uses_to_persist(MonoTime now);
  // The one listener called with each removed token (the gateway, to close the connections it ends).
  void on_removed(std::function<void(const store::TokenRecord&)> listener) { on_removed_ = std::move(listener); }

 private:
  struct Verified {
    std::string secret;
    std::string hash;
  };
  // Forgets a token without telling `on_removed_` (add replaces a token this way).
  std::optional<store::TokenRecord> erase(const std::string& hash);
  struct WrittenUse {
    TimePoint used_at;
    MonoTime written_at;
  };

  std::unordered_map<std::string, store::TokenRecord> by_hash_;
  std::unordered_map<std::string, WrittenUse> written_uses_;  // by hash
  std::unordered_map<std::string, std::string> node_credentials_;  // node -> hash of its credential
  // Secrets that already hashed to a known token, by std::hash of the secret: a client sends the
  // same secret with every request, and hashing it each time was a visible share of a
  // submission's CPU. Only verified secrets enter, so there are at most as many as tokens; `add`
  // and `remove` clear it, so neither a replaced token's old role nor a revoked token is served
  // from here. Expiry is checked on every request, cached or not.
  std::unordered_map<std::size_t, Verified> verified_;
  std::function<void(const store::TokenRecord&)> on_removed_;
};

}  // namespace trainyard::daemon
