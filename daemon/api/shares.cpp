// Shares: the fair-share table, and creating or changing a share.
#include "daemon/api/shares.h"
#include "daemon/api/auditor.h"
#include "daemon/api/call.h"
#include "daemon/job_manager.h"
#include "daemon/share_access.h"
#include "scheduler/types.h"

namespace trainyard::daemon {
namespace {

// Pending jobs held by their owner or an admin, by share: outside the scheduler, so not in its
// pending_jobs, yet pending to whoever counts the queue.
std::map<std::string, int> held_jobs_by_share(const std::map<JobId, Job>& active) {
  std::map<std::string, int> held;
  for (const auto& [id, job] : active) {
    if (job.state == JobState::pending && job.held != Hold::none) ++held[job.spec.share];
  }
  return held;
}

}  // namespace

void SharesApi::list_shares(ApiCall call) {
  Json list = Json::array();
  const std::map<std::string, int> held = held_jobs_by_share(jobs_.active_jobs());
  for (const auto& row : jobs_.scheduler().shares(clock_.system_now())) {
    Json j = {{"name", row.name},
              {"weight", row.weight},
              {"usage_core_s", row.usage},
              {"expected_usage_core_s", row.expected_usage},
              {"normalized_usage", row.normalized_usage},
              {"fair_share_factor", row.fair_share_factor},
              {"running_cores", row.running_cores},
              {"pending_jobs", row.pending_jobs},
              {"held_jobs", held.contains(row.name) ? held.at(row.name) : 0}};
    if (row.max_running_cores) j["max_running_cores"] = *row.max_running_cores;
    if (auto limit = jobs_.share_storage_limit_mb(row.name)) j["storage_limit_mb"] = *limit;
    const StorageBytes bytes = jobs_.storage().of_share(row.name);
    j["storage_checkpoint_bytes"] = bytes.checkpoint_bytes;
    j["storage_log_bytes"] = bytes.log_bytes;
    j["storage_work_bytes"] = bytes.work_bytes;
    if (call.who.may(Action::manage_shares)) {
      const auto* members = jobs_.share_members(row.name);
      j["members"] = members ? Json(*members) : Json(nullptr);
    }
    list.push_back(j);
  }
  call.reply(200, {{"shares", list}});
}

void SharesApi::put_share(ApiCall call) {
  const std::string& name = call.param("name");
  scheduler::ShareSettings settings;
  std::optional<std::vector<std::string>> members;
  try {
    check_name("name", name);
    const Json body = parse_json_text(call.request.body);
    ObjectReader r(body, "");
    settings.weight = r.number("weight", 1e-6, 1e6);
    if (auto cap = r.opt_integer("max_running_cores", 1, 1 << 30)) settings.max_running_cores = static_cast<int>(*cap);
    settings.storage_limit_mb = r.opt_integer("storage_limit_mb", 1, kMaxStorageLimitMb);
    if (r.has("members")) {
      members = r.string_list("members", 10'000, 64);
      for (std::size_t i = 0; i < members->size(); ++i) check_name("members[" + std::to_string(i) + "]", (*members)[i]);
    }
    r.finish();
    scheduler::validate(settings);
  } catch (const InvalidInput& e) {
    return call.invalid_body(e);
  }
  if (auto allowed = check_share_put(name, members); !allowed) return call.fail(allowed.error());
  Json j = {{"name", name}, {"weight", settings.weight}, {"members", members ? Json(*members) : Json(nullptr)}};
  if (settings.max_running_cores) j["max_running_cores"] = *settings.max_running_cores;
  if (settings.storage_limit_mb) j["storage_limit_mb"] = *settings.storage_limit_mb;
  jobs_.set_share(
      name, settings, members,
      [call, j](const Result<void>& stored) {
        if (!stored) return call.fail(stored.error());
        call.reply(200, j);
      },
      audit_.of(call, "share.changed", j));
}

void SharesApi::delete_share(ApiCall call) {
  const std::string& name = call.param("name");
  try {
    check_name("name", name);
  } catch (const InvalidInput& e) {
    return call.invalid(e);
  }
  if (auto allowed = check_share_delete(name); !allowed) return call.fail(allowed.error());
  jobs_.delete_share(
      name,
      [call, name](const Result<void>& deleted) {
        if (!deleted) return call.fail(deleted.error());
        call.reply(200, {{"name", name}, {"deleted", true}});
      },
      audit_.of(call, "share.deleted", {{"name", name}}));
}

}  // namespace trainyard::daemon
