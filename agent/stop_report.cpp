#include "agent/stop_report.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "agent/agent_deps.h"
#include "agent/node_credential.h"
#include "net/server_list.h"
#include "proto/backoff.h"
#include "proto/errors.h"
#include "proto/messages.h"

namespace trainyard::agent {
namespace {

using SteadyClock = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct Answer {
  enum class Kind { noted, refused, none } kind = Kind::none;
  std::string reason;  // refused: the daemon's; none: why the connection ended without one
};

Answer read_answer(const std::string& text) {
  try {
    const DaemonMessage answer = parse_daemon_message(text);
    if (std::holds_alternative<StopNotedMsg>(answer)) return {Answer::Kind::noted, ""};
    if (const auto* refused = std::get_if<RefusedMsg>(&answer)) return {Answer::Kind::refused, refused->reason};
    return {Answer::Kind::none, "the daemon answered something other than stop_noted"};
  } catch (const InvalidInput& e) {
    return {Answer::Kind::none, std::string("a malformed answer: ") + e.what()};
  }
}

// One connection: the report, then the daemon's answer, or why there was none by `until`.
Answer try_once(DaemonLinks& links, boost::asio::io_context& io, const std::string& server, const std::string& credential,
                const std::string& report, SteadyClock::time_point until) {
  // The handlers may run after this call returns (the link's close), so they hold it weakly.
  struct State {
    std::shared_ptr<net::WebSocketPeer> link;
    std::optional<Answer> answer;
    bool closed = false;
  };
  auto state = std::make_shared<State>();
  const std::weak_ptr<State> weak = state;
  net::WebSocketClientHandlers handlers;
  handlers.on_open = [weak, report] {
    if (auto s = weak.lock()) s->link->send(report);
  };
  handlers.on_message = [weak](std::string text) {
    auto s = weak.lock();
    if (!s) return;
    if (!s->answer) s->answer = read_answer(text);
    s->link->close("answered");
  };
  handlers.on_closed = [weak](const std::string& reason) {
    auto s = weak.lock();
    if (!s) return;
    if (!s->answer) s->answer = Answer{Answer::Kind::none, reason};
    s->closed = true;
  };
  io.restart();
  state->link = links.connect(server, credential, std::move(handlers));
  while (!state->closed && SteadyClock::now() < until) io.run_one_until(until);
  if (!state->closed) state->link->abort("no answer in time");
  return state->answer.value_or(Answer{Answer::Kind::none, "no answer in time"});
}

}  // namespace

bool report_attempts_stopped(const StopReportTarget& target, const std::string& node,
                             const std::vector<AttemptId>& attempts, std::chrono::milliseconds within) {
  const std::string credential = load_node_credential(target.credential_file);
  if (credential.empty()) {
    spdlog::warn("event=fence_keeper_report_skipped node={} reason=\"no node credential at {}\"", node, target.credential_file);
    return false;
  }
  net::TlsContext tls;
  try {
    if (target.servers.front().starts_with("https://")) tls = net::make_client_tls_context(target.tls);
  } catch (const InvalidInput& e) {
    spdlog::error("event=fence_keeper_report_failed node={} error=\"{}\"", node, e.what());
    return false;
  }
  boost::asio::io_context io(1);
  WebSocketDaemonLinks links(io, tls);
  net::Failover failover(target.servers);
  const std::string report = encode(AgentMessage{AttemptsStoppedMsg{kProtocolVersion, node, attempts}});
  const auto until = SteadyClock::now() + within;
  Backoff backoff({50ms, std::chrono::milliseconds(1000)});
  std::string last_failure = "no time to try";
  while (SteadyClock::now() < until) {
    const std::string server = failover.current();
    const Answer answer = try_once(links, io, server, credential, report, until);
    if (answer.kind == Answer::Kind::noted) {
      spdlog::info("event=fence_keeper_reported node={} server={} attempts={}", node, server, fmt::join(attempts, ","));
      return true;
    }
    if (answer.kind == Answer::Kind::refused) {
      spdlog::error("event=fence_keeper_report_refused node={} server={} reason=\"{}\"", node, server, answer.reason);
      return false;
    }
    last_failure = server + ": " + answer.reason;
    const net::FailoverStep step = failover.failed(net::outcome_of_link_close(answer.reason));
    if (step.kind == net::FailoverStep::Kind::refused) {
      spdlog::error("event=fence_keeper_report_refused node={} reason=\"{}\"", node, step.message);
      return false;
    }
    std::this_thread::sleep_for(
        std::min<SteadyClock::duration>(backoff.after_failure(), std::max<SteadyClock::duration>(until - SteadyClock::now(), 0ms)));
  }
  spdlog::warn("event=fence_keeper_report_failed node={} within_ms={} last=\"{}\" effect=\"the daemon waits out the "
               "kill grace instead\"",
               node, within.count(), last_failure);
  return false;
}

}  // namespace trainyard::agent
