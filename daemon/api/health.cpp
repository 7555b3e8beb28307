// Health checks on demand and the canaries' history.
#include <algorithm>
#include <cstdint>

#include "daemon/api/auditor.h"
#include "daemon/api/call.h"
#include "daemon/api/health.h"
#include "daemon/api/job_views.h"
#include "daemon/api/paging.h"
#include "daemon/api/query.h"
#include "daemon/base/store_worker.h"
#include "daemon/canary.h"
#include "daemon/job_manager.h"

namespace trainyard::daemon {

void HealthApi::start_health_check(ApiCall call) {
  HealthCheckRequest request;
  request.kind = HealthCheckKind::on_demand;
  request.requested_by = call.who.user;
  try {
    const Json body = parse_json_text(call.request.body);
    ObjectReader r(body, "");
    request.nodes = r.string_list("nodes", 1024, 64);
    std::vector<std::string> suites = {"accelerator", "collective"};
    if (r.has("suites")) suites = r.string_list("suites", 2, 32);
    r.finish();
    if (request.nodes.empty()) throw InvalidInput("nodes", "must name at least one node");
    if (suites.empty()) throw InvalidInput("suites", "must name at least one suite");
    request.accelerator = request.collective = false;
    for (std::size_t i = 0; i < suites.size(); ++i) {
      const auto suite = parse_health_suite(suites[i]);
      if (!suite) throw InvalidInput("suites[" + std::to_string(i) + "]", "must be \"accelerator\" or \"collective\"");
      (*suite == HealthSuite::accelerator ? request.accelerator : request.collective) = true;
    }
    for (std::size_t i = 0; i < request.nodes.size(); ++i) {
      const std::string field = "nodes[" + std::to_string(i) + "]";
      const std::string& name = request.nodes[i];
      if (std::count(request.nodes.begin(), request.nodes.end(), name) > 1) throw InvalidInput(field, "names " + name + " twice");
      const auto view = jobs_.node(name);
      if (!view) throw InvalidInput(field, "node " + name + " is not registered");
      if (!view->node.connected) throw InvalidInput(field, "node " + name + " is not connected");
      if (request.accelerator && !view->attempts.empty()) {
        throw InvalidInput(field, "node " + name + " is running attempts; the accelerator suite needs idle nodes (run "
                                  "only the collective suite, or drain it first)");
      }
    }
    if (request.collective && !request.accelerator && request.nodes.size() < 2) {
      throw InvalidInput("nodes", "the collective suite needs at least 2 nodes");
    }
  } catch (const InvalidInput& e) {
    return call.invalid_body(e);
  }
  const Json audited = {{"nodes", request.nodes}, {"accelerator", request.accelerator}, {"collective", request.collective}};
  const std::int64_t id = jobs_.start_health_check(std::move(request));
  audit_.write(call, {"healthcheck.started", call.route(), std::to_string(id), audited});
  const HealthCheckResult* result = jobs_.health().find(id);
  net::HttpResponse resp{202, "application/json", json_text(to_json(*result)), {{"Location", "/v1/healthchecks/" + std::to_string(id)}}};
  (*call.respond)(resp);
}

void HealthApi::get_health_check(ApiCall call) {
  const std::int64_t id = call.id();
  if (const HealthCheckResult* result = jobs_.health().find(id)) return call.reply(200, to_json(*result));
  store_.read(
      [call, id](store::Store& store) {
        return std::function<void()>([call, id, row = store.health_check(id)] {
          if (!row) return call.fail(Error::not_found("health check " + std::to_string(id) + " does not exist"));
          call.reply(200, row->record);
        });
      },
      [call](const Error& error) { call.fail(error.during("could not read the health check")); });
}

void HealthApi::list_health_checks(ApiCall call) {
  const PageRequest page = page_request(call.request, "healthchecks", 10);
  const int limit = static_cast<int>(*page.limit);
  const std::int64_t before = page.after ? cursor_number(*page.after) : INT64_MAX;
  store_.read(
      [call, limit, before](store::Store& store) {
        std::vector<store::HealthCheckRow> found = store.recent_health_checks(before, limit + 1);
        Json next = nullptr;
        if (std::ssize(found) > limit) {
          found.pop_back();
          next = page_cursor(call.request, "healthchecks", std::to_string(found.back().id));
        }
        Json checks = Json::array();
        for (store::HealthCheckRow& row : found) checks.push_back(std::move(row.record));
        return std::function<void()>([call, body = Json{{"checks", std::move(checks)}, {"next", std::move(next)}}] {
          call.reply(200, body);
        });
      },
      [call](const Error& error) { call.fail(error.during("could not read health checks")); });
}

void HealthApi::list_canaries(ApiCall call) {
  store::JobQuery query;
  query.user = kCanaryUser;
  const PageRequest page = page_request(call.request, "canaries", 50);
  const int limit = static_cast<int>(*page.limit);
  query.limit = limit + 1;
  if (page.after) query.before_id = cursor_number(*page.after);
  store_.read(
      [this, call, query, limit](store::Store& store) {
        return std::function<void()>([this, call, limit, found = store.jobs(query)]() mutable {
          Json next = nullptr;
          if (std::ssize(found) > limit) {
            found.pop_back();
            next = page_cursor(call.request, "canaries", std::to_string(found.back().id));
          }
          Json list = Json::array();
          for (const auto& stored : found) {
            const Job* active = jobs_.active_job(stored.id);
            list.push_back(views_.job_json(active ? *active : stored, call.who));
          }
          const std::optional<TimePoint> next_run = jobs_.next_canary_at();
          call.reply(200, {{"canaries", list}, {"next", next}, {"next_run_at", next_run ? Json(format_time(*next_run)) : Json(nullptr)}});
        });
      },
      [call](const Error& error) { call.fail(error.during("could not read canaries")); });
}

void HealthApi::run_canary(ApiCall call) {
  jobs_.run_canary(
      [this, call](Result<JobManager::Submitted> accepted) {
        if (!accepted) return call.fail(accepted.error());
        call.reply(201, views_.job_json(accepted->job, call.who));
      },
      audit_.of(call, "canary.run", Json::object()));
}

}  // namespace trainyard::daemon
