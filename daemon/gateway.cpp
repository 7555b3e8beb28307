#include "daemon/gateway.h"

#include <spdlog/spdlog.h>

#include "net/http_server.h"

namespace trainyard {
namespace {

class AgentSession : public net::WebSocketSession,
                     public AgentChannel,
                     public std::enable_shared_from_this<AgentSession> {
 public:
  AgentSession(JobManager& jobs, std::shared_ptr<net::WebSocketPeer> peer, std::string remote)
      : jobs_(jobs), peer_(std::move(peer)), remote_(std::move(remote)) {}

  void on_message(std::string text) override {
    AgentMessage message;
    try {
      message = parse_agent_message(text);
    } catch (const InvalidInput& e) {
      spdlog::warn("event=bad_agent_message node={} remote={} error=\"{}\"", node_, remote_, e.what());
      if (node_.empty()) refuse(std::string("malformed message: ") + e.what());
      return;
    }
    if (node_.empty()) {
      const auto* hello = std::get_if<HelloMsg>(&message);
      if (!hello) return refuse("the first message must be a hello");
      const std::string refusal = jobs_.agent_hello(*hello, shared_from_this());
      if (!refusal.empty()) {
        spdlog::warn("event=agent_refused node={} remote={} reason=\"{}\"", hello->name, remote_, refusal);
        return refuse(refusal);
      }
      node_ = hello->name;
      return;
    }
    if (std::holds_alternative<HelloMsg>(message)) {
      spdlog::warn("event=duplicate_hello node={}", node_);
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

 private:
  void refuse(const std::string& reason) {
    send(RefusedMsg{reason});
    disconnect(reason);
  }

  JobManager& jobs_;
  std::shared_ptr<net::WebSocketPeer> peer_;
  std::string remote_;
  std::string node_;  // set once the hello is accepted
};

}  // namespace

net::WebSocketRoute AgentGateway::route() {
  net::WebSocketRoute route;
  route.path = kAgentPath;
  route.authorize = [this](const net::HttpRequest& req) -> std::optional<net::HttpResponse> {
    const auto who = tokens_.authenticate_header(req.header("authorization"));
    if (!who || (who->role != Role::agent && who->role != Role::admin)) {
      spdlog::warn("event=agent_join_refused remote={} reason=bad_join_token", req.remote);
      return net::error_response(401, "unauthorized", "join token missing or not valid for agents");
    }
    return std::nullopt;
  };
  route.open = [this](const net::HttpRequest& req, std::shared_ptr<net::WebSocketPeer> peer) {
    return std::make_shared<AgentSession>(jobs_, std::move(peer), req.remote);
  };
  return route;
}

}  // namespace trainyard
