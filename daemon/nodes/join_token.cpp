#include "daemon/nodes/join_token.h"

#include <spdlog/spdlog.h>

#include "daemon/nodes/private_files.h"

namespace trainyard::daemon {

bool is_join_token(const store::TokenRecord& token) {
  return token.role == store::Role::agent && !Principal{token.user, token.role}.bound_node();
}

void rotate_join_token(TokenRegistry& tokens, StoreWorker& store, const std::filesystem::path& file, TimePoint now,
                       std::function<void(Result<std::string> secret)> done, AuditOf audit) {
  std::string secret = generate_token_secret();
  const store::TokenRecord fresh = new_token_record(secret, kJoinTokenUser, store::Role::agent, now);
  store::Change change;
  change.tokens.push_back(fresh);
  for (const store::TokenRecord& token : tokens.list()) {
    if (is_join_token(token)) change.revoked_tokens.push_back(token.hash);
  }
  if (audit) change.events.push_back(audit("join"));
  auto rotated = [&tokens, file, fresh, old = change.revoked_tokens, secret = std::move(secret),
                  done = std::move(done)](const Result<void>& written, store::Change&) {
    if (!written) return done(Error::unavailable("the new join token could not be stored; the old one stays valid"));
    tokens.add(fresh);
    for (const std::string& hash : old) tokens.remove(hash);
    try {
      write_file_atomically(file, secret + "\n", 0600);
    } catch (const std::exception& e) {
      spdlog::error("event=join_token_file_not_written path={} error=\"{}\"", file.string(), e.what());
    }
    spdlog::warn("event=join_token_rotated id={} replaced={}", fresh.id, old.size());
    done(secret);
  };
  store.write(std::move(change), std::move(rotated));
}

}  // namespace trainyard::daemon
