#pragma once
// /v1/tokens and /v1/whoami: create, list (never a secret) and revoke tokens, rotate the agents'
// join token.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "proto/time.h"
#include "store/store.h"

namespace trainyard::daemon {

struct ApiCall;
class Auditor;
class StoreWorker;
class TokenRegistry;

// The longest lifetime a token may be given ("ttl_s"): ten years.
inline constexpr std::int64_t kMaxTokenTtlS = 10LL * 365 * 24 * 3600;

class TokensApi {
 public:
  TokensApi(TokenRegistry& tokens, StoreWorker& store, Auditor& audit, const TimeSource& clock,
            std::filesystem::path join_token_file)
      : tokens_(tokens), store_(store), audit_(audit), clock_(clock), join_token_file_(std::move(join_token_file)) {}

  void create_token(ApiCall call);
  void list_tokens(ApiCall call);
  void revoke_token(ApiCall call);
  void rotate_join_token(ApiCall call);
  void whoami(ApiCall call);

 private:
  // A token revoked in memory whose revocation the store refused: the caller was told to revoke it
  // again, and nothing else names it any more.
  std::optional<store::TokenRecord> unstored_revocation(const std::string& id) const;

  TokenRegistry& tokens_;
  StoreWorker& store_;
  Auditor& audit_;
  const TimeSource& clock_;
  std::filesystem::path join_token_file_;  // the daemon's join.token, rewritten when it is rotated
  std::map<std::string, store::TokenRecord> unstored_revocations_;  // by id
};

}  // namespace trainyard::daemon
