// Hold, release, requeue and PATCH of a job. Whoever may cancel a job may use
// these on it; an admin's hold is released only by an admin, and an owner may only lower a job's
// priority and shorten its time limit (as Slurm's scontrol lets users), an admin changes anything.
#include <memory>
#include <optional>

#include "daemon/api/auditor.h"
#include "daemon/api/call.h"
#include "daemon/api/job_access.h"
#include "daemon/api/job_control.h"
#include "daemon/api/job_views.h"
#include "daemon/job_manager.h"
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
  // A limit removed (null) is the longest limit of all, so it is refused too.
  if (spec.timeout_s && (!updated.timeout_s || *updated.timeout_s > *spec.timeout_s)) {
    throw InvalidInput("timeout_s", "a job's owner may only shorten its time limit (now " + std::to_string(*spec.timeout_s) + ")");
  }
  return updated;
}

// Why the manager refused, as the API's error: 409, 403 for an admin's hold, 503 when not stored.
Error refusal(const Job& job, const JobManager::ControlOutcome& outcome) {
  const std::string name = "job " + job_ref_text(job);
  switch (outcome.result) {
    case JobManager::ControlResult::forbidden:
      return Error::forbidden(name + " " + outcome.why);
    case JobManager::ControlResult::not_active:
      return Error::conflict(name + " already ended as " + to_string(job.state));
    case JobManager::ControlResult::invalid:
      return Error::invalid_input(outcome.field, name + ": " + outcome.why);
    case JobManager::ControlResult::not_stored:
      return Error::unavailable(outcome.why);
    case JobManager::ControlResult::wrong_state:
    case JobManager::ControlResult::done:
      break;
  }
  return Error::conflict(name + " " + outcome.why);
}

// The manager's answer as the API's: the job, or the refusal.
JobManager::ControlDone answer(ApiCall call, const Job& job, std::function<Json(const Job&)> render) {
  return [call, job, render = std::move(render)](JobManager::ControlOutcome outcome) {
    if (outcome.result == JobManager::ControlResult::done) return call.reply(200, render(*outcome.job));
    if (outcome.result == JobManager::ControlResult::invalid) return call.fail(Error::invalid_input(outcome.field, outcome.why));
    call.fail(refusal(job, outcome));
  };
}

// "12" naming array job 12 (not "12_0", its first task): the whole array.
bool names_whole_array(const ApiCall& call, const Job& job) {
  return job.array_task && job.array_task->array_job == job.id && call.param("id").find('_') == std::string::npos;
}

// Which of the tasks' refusals answers for an array none of whose tasks changed: the store's
// failure first (nothing was wrong with the request), then the caller's mistake, then the first.
int precedence(const Error& refused) {
  if (refused.code == ErrorCode::unavailable) return 2;
  return refused.code == ErrorCode::invalid_input ? 1 : 0;
}

// What a control of a whole array asks of one task. It may throw InvalidInput (a PATCH the task
// cannot take), which is that task's refusal.
using TaskControl = std::function<void(const Job& task, JobManager::ControlDone done)>;

// An array's own id acts on each of its active tasks, as a cancel of the array does; the manager
// decides which it applies to (a hold takes the pending tasks, a requeue the running ones). Each
// task's change is its own transition; the call is answered once every task has answered: with the
// array's first task, `array.<verb>_tasks` (how many changed) and `array.unchanged_tasks`, or, when
// none changed, with a refusal: a 503 when a change could not be stored, else the first 400 (the
// caller's mistake), else the first task's 409/403.
void control_array(ApiCall call, const JobManager& jobs, const Job& root, const std::string& verb,
                   std::function<Json(const Job&)> render, const TaskControl& act) {
  std::vector<Job> tasks;
  for (JobId id = root.id; id < root.id + root.array_task->count; ++id) {
    if (const Job* task = jobs.active_job(id)) tasks.push_back(*task);
  }
  if (tasks.empty())
    return call.fail(Error::conflict("every task of array " + std::to_string(root.id) + " already ended"));
  struct Tally {
    std::size_t left = 0;
    std::size_t changed = 0;
    std::optional<Error> refused;
  };
  auto tally = std::make_shared<Tally>(Tally{tasks.size(), 0, std::nullopt});
  const auto count = [call, tally, &jobs, root, verb, render, total = tasks.size()](std::optional<Error> refused) {
    if (!refused) {
      ++tally->changed;
    } else if (!tally->refused || precedence(*refused) > precedence(*tally->refused)) {
      tally->refused = std::move(refused);
    }
    if (--tally->left > 0) return;
    if (tally->changed == 0) return call.fail(*tally->refused);
    const Job* first = jobs.active_job(root.id);
    Json body = render(first ? *first : root);
    body["array"][verb + "_tasks"] = tally->changed;
    body["array"]["unchanged_tasks"] = total - tally->changed;
    call.reply(200, body);
  };
  for (const Job& task : tasks) {
    try {
      act(task, [task, count](JobManager::ControlOutcome outcome) {
        count(outcome.result == JobManager::ControlResult::done ? std::nullopt : std::optional(refusal(task, outcome)));
      });
    } catch (const InvalidInput& e) {
      count(Error::invalid_input(e.field(), "job " + job_ref_text(task) + ": " + e.message()));
    }
  }
}

// The call's job, or each active task of the array it names.
void control(ApiCall call, const Job& job, const JobManager& jobs, const std::string& verb,
             std::function<Json(const Job&)> render, const TaskControl& act) {
  if (names_whole_array(call, job)) return control_array(call, jobs, job, verb, std::move(render), act);
  act(job, answer(call, job, std::move(render)));
}

}  // namespace

// Each handler acts on the job or task the path names ("12", "12_3"), or on every task of an array
// named by its own id.

void JobControlApi::hold_job(ApiCall call) { set_hold(std::move(call), true); }

void JobControlApi::release_job(ApiCall call) { set_hold(std::move(call), false); }

void JobControlApi::set_hold(ApiCall call, bool held) {
  views_.with_job(call, [this, held](ApiCall c, Job job) {
    if (!can_cancel(c.who, job)) return c.forbid((held ? "hold job " : "release job ") + job_ref_text(job));
    const Hold by = acts_as_admin(c.who) ? Hold::admin : Hold::owner;
    const TaskControl act = [this, c, by, held](const Job& task, JobManager::ControlDone done) {
      AuditOf audit = audit_.of(c, held ? "job.held" : "job.released", {{"job_user", task.user}});
      if (held) return jobs_.hold(task.id, by, std::move(done), std::move(audit));
      jobs_.release(task.id, by, std::move(done), std::move(audit));
    };
    control(
        c, job, jobs_, held ? "held" : "released", [this, c](const Job& j) { return views_.job_json(j, c.who); }, act);
  });
}

void JobControlApi::requeue_job(ApiCall call) {
  views_.with_job(call, [this](ApiCall c, Job job) {
    if (!can_cancel(c.who, job)) return c.forbid("requeue job " + job_ref_text(job));
    const TaskControl requeue = [this, c](const Job& task, JobManager::ControlDone done) {
      jobs_.requeue_running(task.id, std::move(done), audit_.of(c, "job.requeued", {{"job_user", task.user}}));
    };
    control(
        c, job, jobs_, "requeued", [this, c](const Job& j) { return views_.job_json(j, c.who); }, requeue);
  });
}

void JobControlApi::update_job(ApiCall call) {
  Json patch;
  try {
    patch = parse_json_text(call.request.body);
  } catch (const InvalidInput& e) {
    return call.invalid_body(e);
  }
  views_.with_job(call, [this, patch](ApiCall c, Job job) {
    if (!can_cancel(c.who, job)) return c.forbid("change job " + job_ref_text(job));
    const bool admin = acts_as_admin(c.who);
    // Each task is checked against its own spec: tasks changed one by one may differ.
    const TaskControl update = [this, c, patch, admin](const Job& task, JobManager::ControlDone done) {
      jobs_.update(task.id, patched_spec(task.spec, patch, admin), std::move(done),
                   audit_.of(c, "job.updated", {{"job_user", task.user}, {"changed", patch}}));
    };
    try {
      control(
          c, job, jobs_, "updated", [this, c](const Job& j) { return views_.job_json(j, c.who); }, update);
    } catch (const InvalidInput& e) {
      c.invalid(e);
    }
  });
}

}  // namespace trainyard::daemon
