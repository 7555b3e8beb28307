#include "store/store.h"

#include "proto/text.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace trainyard::store {

std::string record_text(const Json& record) { return json_text(record); }

std::string job_record(const Job& job) { return record_text(to_json(job)); }

std::string to_string(Role r) {
  switch (r) {
    case Role::admin: return "admin";
    case Role::operator_: return "operator";
    case Role::user: return "user";
    case Role::viewer: return "viewer";
    case Role::agent: return "agent";
  }
  return "user";
}

std::string to_string(Severity s) {
  switch (s) {
    case Severity::info: return "info";
    case Severity::warning: return "warning";
    case Severity::error: return "error";
  }
  return "info";
}

std::optional<Severity> parse_severity(std::string_view s) {
  for (Severity v : {Severity::info, Severity::warning, Severity::error}) {
    if (to_string(v) == s) return v;
  }
  return std::nullopt;
}

std::string to_string(DeliveryState s) {
  switch (s) {
    case DeliveryState::pending: return "pending";
    case DeliveryState::delivered: return "delivered";
    case DeliveryState::dead: return "dead";
    case DeliveryState::retrying: return "retrying";
  }
  return "pending";
}

std::optional<DeliveryState> parse_delivery_state(std::string_view s) {
  for (DeliveryState v : {DeliveryState::pending, DeliveryState::delivered, DeliveryState::dead, DeliveryState::retrying}) {
    if (to_string(v) == s) return v;
  }
  return std::nullopt;
}

std::optional<Role> parse_role(std::string_view s) {
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (Role r : {Role::admin, Role::operator_, Role::user, Role::viewer, Role::agent}) {
    if (to_string(r) == lower) return r;
  }
  return std::nullopt;
}

std::vector<Job> jobs_depended_on(Store& store, const std::vector<JobId>& ids) {
  std::vector<Job> found;
  for (JobId id : ids) {
    std::optional<Job> job = store.job(id);
    if (!job) continue;
    if (!job->array_task || job->array_task->array_job != id) {
      found.push_back(std::move(*job));
      continue;
    }
    // An array's tasks have the ids from its own up, in index order.
    JobQuery tasks;
    tasks.before_id = id + job->array_task->count;
    tasks.limit = job->array_task->count;
    for (Job& task : store.jobs(tasks)) {
      if (task.array_task && task.array_task->array_job == id) found.push_back(std::move(task));
    }
  }
  return found;
}

std::optional<bool> Store::was_committed(const std::string& transaction) {
  throw std::logic_error("a store that never throws CommitInDoubt was asked about transaction " + transaction);
}

}  // namespace trainyard::store
