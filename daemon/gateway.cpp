#include "daemon/gateway.h"

#include <spdlog/spdlog.h>

#include <functional>
#include <vector>

#include "daemon/nodes/node_credentials.h"
#include "net/http_server.h"
#include "net/tls.h"

namespace trainyard::daemon {

class AgentSession : public net::WebSocketSession,
                     public AgentChannel,
                     public std::enable_shared_from_this<AgentSession> {
 public:
  // `certificate`: what the agent's client certificate must name, under mutual TLS. `leave`: told
  // once, as the connection closes.
  using Leave = std::function<void(const AgentSession*)>;
  AgentSession(JobManager& jobs, TokenRegistry& tokens, StoreWorker& store, const TimeSource& clock, Principal who,
               std::shared_ptr<net::WebSocketPeer> peer, std::string remote,
               std::optional<net::PeerCertificate> certificate, const NodeClaimLimits& claim_limits, Leave leave)
      : jobs_(jobs),
        tokens_(tokens),
        store_(store),
        clock_(clock),
        who_(std::move(who)),
        peer_(std::move(peer)),
        remote_(std::move(remote)),
        certificate_(std::move(certificate)),
        claim_limits_(claim_limits),
        leave_(std::move(leave)) {}

  void on_message(std::string text) override {
    AgentMessage message;
    try {
      message = parse_agent_message(text);
    } catch (const InvalidInput& e) {
      // Our agents send only messages that parse: one that does not is forged or broken, at any stage.
      spdlog::warn("event=bad_agent_message node={} remote={} error=\"{}\"", node_, remote_, e.what());
      return refuse(std::string("malformed message: ") + e.what());
    }
    // Nothing said after a refusal or a stop report counts (not even another hello); the agent waits
    // for its welcome before it says more.
    if (finished_ || issuing_) return;
    if (node_.empty()) {
      if (const auto* report = std::get_if<AttemptsStoppedMsg>(&message)) return on_stop_report(*report);
      const auto* hello = std::get_if<HelloMsg>(&message);
      if (!hello) return refuse("the first message must be a hello or attempts_stopped");
      return on_hello(*hello);
    }
    if (std::holds_alternative<HelloMsg>(message)) {
      spdlog::warn("event=duplicate_hello node={}", node_);
      return;
    }
    if (std::holds_alternative<AttemptsStoppedMsg>(message)) {
      // The keeper's own connection says it; an agent's link never does.
      spdlog::warn("event=stop_report_on_agent_link node={} remote={}", node_, remote_);
      return;
    }
    // One message must never take the gateway, and every node's connection, down with it.
    try {
      jobs_.agent_message(node_, this, message);
    } catch (const std::exception& e) {
      spdlog::error("event=agent_message_failed node={} remote={} error=\"{}\"", node_, remote_, e.what());
    }
  }

  void on_closed(const std::string& reason) override {
    closed_ = true;
    leave_(this);
    if (!node_.empty()) {
      spdlog::info("event=agent_connection_closed node={} reason=\"{}\"", node_, reason);
      jobs_.agent_gone(node_, this);
    }
    peer_.reset();
  }

  void send(const DaemonMessage& message) override {
    if (peer_) peer_->send(encode(message));
  }

  void disconnect(const std::string& reason) override {
    if (peer_) peer_->close(reason);
  }

  // Whether revoking `token` ends this connection: it is the credential of the node this connection
  // speaks for (however the connection was opened), or it opened a connection that has not joined
  // yet. Not the join token of a node that joined since: that node holds its own credential.
  bool ends_with(const store::TokenRecord& token) const {
    if (closed_) return false;
    if (who_.token_id == token.id && node_.empty()) return true;
    const auto node = Principal{token.user, token.role}.bound_node();
    return node && *node == node_;
  }

 private:
  void on_hello(const HelloMsg& hello) {
    if (const Result<void> named = check_certificate_names(hello.name); !named) {
      spdlog::warn("event=agent_refused node={} remote={} reason=\"{}\"", hello.name, remote_, named.error().message);
      return refuse(named.error().message);
    }
    if (const Result<void> believed = check_node_claims(hello, remote_, claim_limits_); !believed) {
      spdlog::warn("event=agent_refused node={} remote={} reason=\"{}\"", hello.name, remote_, believed.error().message);
      return refuse(believed.error().message);
    }
    if (const Result<void> allowed = check_node_hello(tokens_, who_, hello.name); !allowed) {
      spdlog::warn("event=agent_refused node={} remote={} token_user={} reason=\"{}\"", hello.name, remote_, who_.user,
                   allowed.error().message);
      return refuse(allowed.error().message);
    }
    if (who_.bound_node()) return accept(hello, "");
    // The join token, for a name without a credential: the node gets its own before it is welcomed.
    issuing_ = true;
    issue_node_credential(tokens_, store_, clock_.system_now(), hello.name,
                          [self = shared_from_this(), hello](const Result<std::string>& secret) {
                            self->issuing_ = false;
                            if (!secret) return self->disconnect(secret.error().message);
                            self->accept(hello, *secret);
                          });
  }

  // A dead agent's fence keeper, with the node's own credential (and, under mutual TLS, a
  // certificate issued to the node), says the attempts it names stopped; the only message of its
  // connection.
  void on_stop_report(const AttemptsStoppedMsg& report) {
    Result<void> taken = check_certificate_names(report.node);
    if (taken) taken = check_stop_report(who_, report.node);
    if (taken) taken = take_stop_report(report);
    if (!taken) {
      spdlog::warn("event=stop_report_refused node={} remote={} token_user={} reason=\"{}\"", report.node, remote_, who_.user,
                   taken.error().message);
      return refuse(taken.error().message);
    }
    finished_ = true;
    send(StopNotedMsg{});
    disconnect("stop noted");
  }

  // As any agent message: one must never take the gateway, and every node's connection, down with it.
  Result<void> take_stop_report(const AttemptsStoppedMsg& report) {
    try {
      return jobs_.attempts_stopped(report);
    } catch (const std::exception& e) {
      spdlog::error("event=stop_report_failed node={} remote={} error=\"{}\"", report.node, remote_, e.what());
      return Error::unavailable(std::string("the report could not be taken: ") + e.what());
    }
  }

  Result<void> check_certificate_names(const std::string& node) const {
    if (!certificate_ || net::certificate_names(*certificate_, node)) return {};
    return Error::forbidden("the client certificate (" + net::certificate_subject(*certificate_) + ") is not issued to node " + node);
  }

  // `credential`: the node's new secret, for the welcome. It is withdrawn when it cannot be
  // delivered, so the name is not locked to a secret nobody holds.
  void accept(const HelloMsg& hello, const std::string& credential) {
    const Result<void> accepted = closed_ ? Error::unavailable("the connection closed before the welcome")
                                          : jobs_.agent_hello(hello, shared_from_this(), credential);
    if (accepted) {
      node_ = hello.name;
      return;
    }
    const std::string& refusal = accepted.error().message;
    spdlog::warn("event=agent_refused node={} remote={} reason=\"{}\"", hello.name, remote_, refusal);
    if (!credential.empty()) {
      forget_node_credential(tokens_, store_, hello.name, "its welcome was never delivered",
                             [](const Result<void>&) {});
    }
    refuse(refusal);
  }

  void refuse(const std::string& reason) {
    finished_ = true;
    send(RefusedMsg{reason});
    disconnect(reason);
  }

  JobManager& jobs_;
  TokenRegistry& tokens_;
  StoreWorker& store_;
  const TimeSource& clock_;
  const Principal who_;  // whose token opened the connection
  std::shared_ptr<net::WebSocketPeer> peer_;
  std::string remote_;
  const std::optional<net::PeerCertificate> certificate_;
  const NodeClaimLimits& claim_limits_;
  const Leave leave_;
  std::string node_;      // set once the hello is accepted
  bool issuing_ = false;  // the node's credential is being stored; the hello waits for it
  bool finished_ = false;  // refused, or a stop report taken: nothing more said counts
  bool closed_ = false;
};

namespace {

// Agents only: the join token or a node credential. An admin's token is no way to become a node.
std::optional<Principal> agent_principal(TokenRegistry& tokens, const net::HttpRequest& req, TimePoint now) {
  auto who = tokens.authenticate_header(req.header("authorization"), now);
  if (!who || !who->may(Action::use_gateway)) return std::nullopt;
  return who;
}

}  // namespace

AgentGateway::AgentGateway(JobManager& jobs, TokenRegistry& tokens, StoreWorker& store, const TimeSource& clock,
                           bool require_client_certificate)
    : jobs_(jobs), tokens_(tokens), store_(store), clock_(clock), require_client_certificate_(require_client_certificate) {
  tokens_.on_removed([this](const store::TokenRecord& token) { token_revoked(token); });
}

void AgentGateway::token_revoked(const store::TokenRecord& token) {
  // Collected first: a session that closes as it is told leaves `sessions_`.
  std::vector<std::shared_ptr<AgentSession>> ending;
  for (const auto& [_, weak] : sessions_) {
    if (auto session = weak.lock(); session && session->ends_with(token)) ending.push_back(std::move(session));
  }
  for (const auto& session : ending) {
    spdlog::warn("event=agent_token_revoked token={} user={}", token.id, token.user);
    session->disconnect("its token " + token.id + " was revoked");
  }
}

net::WebSocketRoute AgentGateway::route() {
  net::WebSocketRoute route;
  route.path = kAgentPath;
  route.authorize = [this](const net::HttpRequest& req) -> std::optional<net::HttpResponse> {
    if (require_client_certificate_) {
      if (const Result<void> usable = net::check_client_certificate(req.peer_certificate); !usable) {
        spdlog::warn("event=agent_join_refused remote={} reason=\"{}\"", req.remote, usable.error().message);
        return net::error_response(403, "client_certificate_refused", usable.error().message);
      }
    }
    if (agent_principal(tokens_, req, clock_.system_now())) return std::nullopt;
    spdlog::warn("event=agent_join_refused remote={} reason=not_an_agent_token", req.remote);
    return net::error_response(401, "unauthorized", "join token or node credential missing or not valid for agents");
  };
  route.open = [this](const net::HttpRequest& req, std::shared_ptr<net::WebSocketPeer> peer) {
    // Authorized just before; a token revoked in between leaves a session that admits no hello.
    Principal who = agent_principal(tokens_, req, clock_.system_now()).value_or(Principal{"", store::Role::user});
    auto session =
        std::make_shared<AgentSession>(jobs_, tokens_, store_, clock_, std::move(who), std::move(peer), req.remote,
                                       require_client_certificate_ ? req.peer_certificate : std::nullopt,
                                       claim_limits_, [this](const AgentSession* closed) { sessions_.erase(closed); });
    sessions_.emplace(session.get(), session);
    return session;
  };
  return route;
}

}  // namespace trainyard::daemon
