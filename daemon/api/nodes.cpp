// Nodes: the fleet as each role may see it, and operating it (drain, undrain, faults, health
// history, forgetting a node's credential).
#include <spdlog/spdlog.h>

#include <cstdint>

#include "daemon/api/auditor.h"
#include "daemon/api/call.h"
#include "daemon/api/job_access.h"
#include "daemon/api/nodes.h"
#include "daemon/api/paging.h"
#include "daemon/api/query.h"
#include "daemon/base/store_worker.h"
#include "daemon/job_manager.h"
#include "daemon/nodes/node_credentials.h"
#include "proto/faults.h"
#include "proto/state_list.h"

namespace trainyard::daemon {

Json NodesApi::node_json(const NodeView& view, const Principal& who) const {
  Json j = to_json(view.node);
  // Free means usable now: a node that takes no work (unhealthy, drained, down, disconnected) has
  // none, whatever its attempts leave idle.
  const bool usable = view.node.connected && accepts_work(view.node.state);
  j["free_cores"] = usable ? view.free_cores : 0;
  j["used_cores"] = view.node.cores - view.free_cores;
  // A user sees where their own work runs, not the data plane's address nor whose else runs there.
  const bool sees_all = who.may(Action::read_all_jobs);
  if (!sees_all) j.erase("data_addr");
  std::vector<AttemptId> shown;
  Json job_refs = Json::array();
  for (const AttemptId id : view.attempts) {
    const auto attempt = jobs_.active_attempt(id);
    const Job* job = attempt ? jobs_.active_job(attempt->job_id) : nullptr;
    if (!sees_all && !(job && can_see(who, *job))) continue;
    shown.push_back(id);
    if (job) job_refs.push_back(job_ref_text(*job));
  }
  j["attempts"] = shown;
  j["jobs"] = std::move(job_refs);
  if (!sees_all) j["other_attempts"] = view.attempts.size() - shown.size();
  return j;
}

namespace {

NodeFilter parse_node_filter(const net::HttpRequest& req) {
  NodeFilter filter;
  if (auto it = req.query.find("state"); it != req.query.end()) filter.states = parse_node_states("state", it->second);
  if (auto it = req.query.find("label"); it != req.query.end()) {
    const auto equals = it->second.find('=');
    if (equals == 0 || equals == std::string::npos) {
      throw InvalidInput("label", "must be KEY=VALUE, got \"" + it->second + "\"");
    }
    filter.label = {it->second.substr(0, equals), it->second.substr(equals + 1)};
  }
  if (auto it = req.query.find("name_prefix"); it != req.query.end()) filter.name_prefix = it->second;
  return filter;
}

}  // namespace

// Without a limit the whole (filtered) fleet, as the dashboard and the CLI read it.
void NodesApi::list_nodes(ApiCall call) {
  const NodeFilter filter = parse_node_filter(call.request);
  const PageRequest page = page_request(call.request, "nodes", std::nullopt);
  const NodePage found = jobs_.node_page(filter, page.after.value_or(""), page.limit.value_or(SIZE_MAX));
  Json list = Json::array();
  for (const auto& view : found.nodes) list.push_back(node_json(view, call.who));
  const Json next = found.more ? Json(page_cursor(call.request, "nodes", found.nodes.back().node.name)) : Json(nullptr);
  call.reply(200, {{"nodes", list}, {"next", next}});
}

void NodesApi::get_node(ApiCall call) {
  const std::string& name = call.param("name");
  auto view = jobs_.node(name);
  if (!view) return call.fail(Error::not_found("node " + name + " is not registered"));
  call.reply(200, node_json(*view, call.who));
}

void NodesApi::set_node_faults(ApiCall call) { change_node_faults(std::move(call), false); }

void NodesApi::clear_node_faults(ApiCall call) { change_node_faults(std::move(call), true); }

void NodesApi::change_node_faults(ApiCall call, bool clear) {
  const std::string& name = call.param("name");
  const auto view = jobs_.node(name);
  if (!view) return call.fail(Error::not_found("node " + name + " is not registered"));
  FaultPlan plan;
  try {
    if (!clear) {
      const Json body = parse_json_text(call.request.body);
      ObjectReader r(body, "");
      const auto specs = r.string_list("faults", 4096, 256);
      r.finish();
      for (std::size_t i = 0; i < specs.size(); ++i) {
        try {
          apply_fault_spec(plan, specs[i], view->node.cores);
        } catch (const InvalidInput& e) {
          throw InvalidInput("faults[" + std::to_string(i) + "]", e.message());
        }
      }
    }
  } catch (const InvalidInput& e) {
    return call.invalid_body(e);
  }
  // The canonical form: what the node will list once its agent has applied them.
  std::vector<std::string> specs = fault_specs(plan);
  if (!jobs_.set_faults(name, specs)) {
    return call.fail(Error::conflict("node " + name + " is not connected; faults are applied by its agent"));
  }
  spdlog::info("event=faults_requested node={} by={} faults=\"{}\"", name, call.who.user, join_node_names(specs));
  audit_.write(call, {clear ? "node.faults_cleared" : "node.faults_set", call.route(), name, {{"faults", specs}}});
  call.reply(202, {{"node", name},
                   {"faults", specs},
                   {"message", "sent to the agent; GET /v1/nodes/" + name + " lists the faults once it applied them"}});
}

void NodesApi::drain_node(ApiCall call) {
  const std::string& name = call.param("name");
  if (!jobs_.node(name)) return call.fail(Error::not_found("node " + name + " is not registered"));
  std::string reason = "drained by " + call.who.user;
  bool stop_attempts = false;
  try {
    if (!call.request.body.empty()) {
      const Json body = parse_json_text(call.request.body);
      ObjectReader r(body, "");
      if (auto given = r.opt_string("reason", 1, 1024)) reason = *given + " (drained by " + call.who.user + ")";
      stop_attempts = r.opt_boolean("stop_attempts").value_or(false);
      r.finish();
    }
  } catch (const InvalidInput& e) {
    return call.invalid_body(e);
  }
  // The answer is the node as GET /v1/nodes/{name} shows it, once changed.
  auto answer = [this, name, who = call.who](const Node& node) {
    const auto changed = jobs_.node(name);
    return changed ? node_json(*changed, who) : to_json(node);
  };
  jobs_.drain(
      name, reason, stop_attempts,
      [call, answer](const Result<Node>& drained) {
        if (!drained) return call.fail(drained.error());
        call.reply(200, answer(*drained));
      },
      audit_.of(call, "node.drained", {{"reason", reason}, {"stop_attempts", stop_attempts}}));
}

// A node whose credential is lost (a reinstalled machine) can join again with the join token.
void NodesApi::forget_node_credential(ApiCall call) {
  const std::string& name = call.param("name");
  const auto view = jobs_.node(name);
  if (view && view->node.connected) {
    return call.fail(
        Error::conflict("node " + name + " is connected; stop its agent before forgetting its credential"));
  }
  const auto done = [call, name](const Result<void>& forgotten) {
    if (!forgotten) return call.fail(forgotten.error());
    call.reply(200, {{"node", name}, {"credential", "forgotten"}});
  };
  trainyard::daemon::forget_node_credential(tokens_, store_, name, call.who.user, done,
                                            audit_.of(call, "node.credential_forgotten", Json::object()));
}

void NodesApi::undrain_node(ApiCall call) {
  const std::string& name = call.param("name");
  const auto view = jobs_.node(name);
  if (!view) return call.fail(Error::not_found("node " + name + " is not registered"));
  const NodeState state = view->node.state;
  if (state == NodeState::healthy) return call.fail(Error::conflict("node " + name + " is already HEALTHY"));
  if (state == NodeState::down)
    return call.fail(Error::conflict("node " + name + " is DOWN; it returns when its agent reconnects"));
  if (state != NodeState::drained && (!view->attempts.empty() || !view->node.connected)) {
    return call.fail(Error::conflict("node " + name + " is " + to_string(state) +
                                     " and returns to service only by passing its health check, which needs it "
                                     "connected and idle"));
  }
  // The answer is the node as GET /v1/nodes/{name} shows it, once changed.
  auto answer = [this, name, who = call.who](const Node& node) {
    const auto changed = jobs_.node(name);
    return changed ? node_json(*changed, who) : to_json(node);
  };
  // The audit record names no health check: node.undrained, in the same change, does.
  jobs_.undrain(
      name, call.who.user,
      [call, answer](const Result<JobManager::Undrained>& undrained) {
        if (!undrained) return call.fail(undrained.error());
        Json body = answer(undrained->node);
        if (undrained->health_check) body["health_check_id"] = *undrained->health_check;
        call.reply(200, body);
      },
      audit_.of(call, "node.undrained", Json::object()));
}

void NodesApi::node_health(ApiCall call) {
  const std::string& name = call.param("name");
  const PageRequest page = page_request(call.request, "node_health:" + name, 50);
  const int limit = static_cast<int>(*page.limit);
  const std::int64_t before = page.after ? cursor_number(*page.after) : INT64_MAX;
  if (!jobs_.node(name)) return call.fail(Error::not_found("node " + name + " is not registered"));
  store_.read(
      [call, name, limit, before](store::Store& store) {
        auto found = store.node_health(name, before, limit + 1);
        Json next = nullptr;
        if (std::ssize(found) > limit) {
          found.pop_back();
          next = page_cursor(call.request, "node_health:" + name, std::to_string(found.back().check_id));
        }
        Json list = Json::array();
        for (const auto& row : found) {
          Json j = row.record;
          j["at"] = format_time(row.at);
          list.push_back(std::move(j));
        }
        return std::function<void()>([call, name, list, next] {
          call.reply(200, {{"node", name}, {"checks", list}, {"next", next}});
        });
      },
      [call](const Error& error) { call.fail(error.during("could not read health history")); });
}

}  // namespace trainyard::daemon
