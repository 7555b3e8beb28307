// Hold, release, requeue and PATCH of a job (issue 17 item 3). Whoever may cancel a job may use
// these on it; an admin's hold is released only by an admin, and an owner may only lower a job's
// priority and shorten its time limit (as Slurm's scontrol lets users), an admin changes anything.
#include "daemon/api.h"
#include "daemon/api/call.h"
#include "daemon/api/job_access.h"
#include "proto/text.h"

namespace trainyard::daemon {
namespace {

bool acts_as_admin(const Principal& who) { return who.may(Action::cancel_any_job); }

// The fields PATCH may change, merged into the job's spec and validated as a submission.
JobSpec patched_spec(const JobSpec& spec, const Json& patch, bool admin) {
  if (!patch.is_object()) throw InvalidInput("", "the body must be a JSON object");
  if (patch.empty()) throw InvalidInput("", "names nothing to change (priority, timeout_s, nodes)");
  Json merged = to_json(spec);
  for (const auto& [key, value] : patch.items()) {
    if (key != "priority" && key != "timeout_s" && key != "nodes") {
      throw InvalidInput(key, "cannot be changed; PATCH takes priority, timeout_s and nodes");
    }
    merged[key] = value;
  }
  JobSpec updated = parse_job_spec(merged);
  if (admin) return updated;
  if (updated.priority > spec.priority) {
    throw InvalidInput("priority", "a job's owner may only lower its priority (now " + std::to_string(spec.priority) + ")");
  }
  if (spec.timeout_s && updated.timeout_s > spec.timeout_s) {
    throw InvalidInput("timeout_s", "a job's owner may only shorten its time limit (now " + std::to_string(*spec.timeout_s) + ")");
  }
  return updated;
}

// The manager's answer as the API's: the job, or 409 / 403 saying why not.
std::function<void(JobManager::ControlOutcome)> answer(ApiCall call, const Job& job, Json (Api::*render)(const Job&) const,
                                                       const Api* api) {
  return [call, job, render, api](JobManager::ControlOutcome outcome) {
    const std::string name = "job " + std::to_string(job.id);
    switch (outcome.result) {
      case JobManager::ControlResult::done: return call.reply(200, (api->*render)(*outcome.job));
      case JobManager::ControlResult::not_active:
        return call.fail(409, "conflict", name + " already ended as " + to_string(job.state));
      case JobManager::ControlResult::wrong_state: return call.fail(409, "conflict", name + " " + outcome.why);
      case JobManager::ControlResult::forbidden: return call.fail(403, "forbidden", name + " " + outcome.why);
    }
  };
}

}  // namespace

void Api::hold_job(ApiCall call) {
  with_job(call, call.id(), [this](ApiCall c, Job job) {
    if (!can_cancel(c.who, job)) return c.forbid("hold job " + std::to_string(job.id));
    jobs_.hold(job.id, acts_as_admin(c.who) ? Hold::admin : Hold::owner, answer(c, job, &Api::job_json, this),
               audit_of(c, "job.held", {{"job_user", job.user}}));
  });
}

void Api::release_job(ApiCall call) {
  with_job(call, call.id(), [this](ApiCall c, Job job) {
    if (!can_cancel(c.who, job)) return c.forbid("release job " + std::to_string(job.id));
    jobs_.release(job.id, acts_as_admin(c.who) ? Hold::admin : Hold::owner, answer(c, job, &Api::job_json, this),
                  audit_of(c, "job.released", {{"job_user", job.user}}));
  });
}

void Api::requeue_job(ApiCall call) {
  with_job(call, call.id(), [this](ApiCall c, Job job) {
    if (!can_cancel(c.who, job)) return c.forbid("requeue job " + std::to_string(job.id));
    jobs_.requeue_running(job.id, answer(c, job, &Api::job_json, this), audit_of(c, "job.requeued", {{"job_user", job.user}}));
  });
}

void Api::update_job(ApiCall call) {
  Json patch;
  try {
    patch = parse_json_text(call.request.body);
  } catch (const InvalidInput& e) {
    return call.invalid_body(e);
  }
  with_job(call, call.id(), [this, patch](ApiCall c, Job job) {
    if (!can_cancel(c.who, job)) return c.forbid("change job " + std::to_string(job.id));
    try {
      JobSpec spec = patched_spec(job.spec, patch, acts_as_admin(c.who));
      jobs_.update(job.id, std::move(spec), answer(c, job, &Api::job_json, this),
                   audit_of(c, "job.updated", {{"job_user", job.user}, {"changed", patch}}));
    } catch (const InvalidInput& e) {
      c.invalid(e);
    }
  });
}

}  // namespace trainyard::daemon
