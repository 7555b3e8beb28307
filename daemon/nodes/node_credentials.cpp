#include "daemon/nodes/node_credentials.h"

#include <spdlog/spdlog.h>

namespace trainyard::daemon {

Result<void> check_node_hello(const TokenRegistry& tokens, const Principal& who, const std::string& node) {
  if (who.role != store::Role::agent) return Error::forbidden("only agent tokens may connect agents");
  if (const auto bound = who.bound_node()) {
    if (*bound == node) return {};
    return Error::forbidden("this credential belongs to node " + *bound + ", not to node " + node);
  }
  if (tokens.node_credential(node)) {
    return Error::forbidden("node " + node +
                            " already has its own credential; the join token cannot register it again (an admin "
                            "can forget the node's credential to replace the node: DELETE /v1/nodes/" +
                            node + "/credential)");
  }
  return {};
}

Result<void> check_stop_report(const Principal& who, const std::string& node) {
  const auto bound = who.role == store::Role::agent ? who.bound_node() : std::nullopt;
  if (!bound) return Error::forbidden("only node " + node + "'s own credential may report its attempts stopped");
  if (*bound != node) return Error::forbidden("this credential belongs to node " + *bound + ", not to node " + node);
  return {};
}

void issue_node_credential(TokenRegistry& tokens, StoreWorker& store, TimePoint now, const std::string& node,
                           std::function<void(Result<std::string> secret)> done) {
  std::string secret = generate_token_secret();
  const store::TokenRecord record = new_token_record(secret, node_token_user(node), store::Role::agent, now);
  tokens.add(record);
  store::Change change;
  change.tokens.push_back(record);
  store.write(std::move(change), [&tokens, record, node, secret = std::move(secret), done = std::move(done)](
                                     const Result<void>& written, store::Change&) {
    if (!written) {
      tokens.remove(record.hash);
      spdlog::error("event=node_credential_not_stored node={}", node);
      return done(Error::unavailable("the node's credential could not be stored"));
    }
    spdlog::info("event=node_credential_issued node={}", node);
    done(secret);
  });
}

void forget_node_credential(TokenRegistry& tokens, StoreWorker& store, const std::string& node, const std::string& by,
                            std::function<void(Result<void> forgotten)> done, AuditOf audit) {
  const auto hash = tokens.node_credential(node);
  if (!hash) return done(Error::not_found("node " + node + " has no credential"));
  store::Change change;
  change.revoked_tokens.push_back(*hash);
  if (audit) change.events.push_back(audit(node));
  auto forgotten = [&tokens, hash = *hash, node, by, done = std::move(done)](const Result<void>& written, store::Change&) {
    if (!written) return done(Error::unavailable("the forgetting of node " + node + "'s credential could not be stored; nothing was changed"));
    tokens.remove(hash);
    spdlog::warn("event=node_credential_forgotten node={} by=\"{}\"", node, by);
    done({});
  };
  store.write(std::move(change), std::move(forgotten));
}

}  // namespace trainyard::daemon
