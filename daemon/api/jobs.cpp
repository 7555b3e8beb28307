// Jobs: submit, list, read, cancel, and what a job left behind (attempts, logs, checkpoints,
// metrics). Another user's job answers exactly as a missing one does.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <map>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "checkpoint/checkpoint.h"
#include "daemon/api/auditor.h"
#include "daemon/api/call.h"
#include "daemon/api/job_access.h"
#include "daemon/api/job_list.h"
#include "daemon/api/job_views.h"
#include "daemon/api/jobs.h"
#include "daemon/api/paging.h"
#include "daemon/api/query.h"
#include "daemon/base/store_worker.h"
#include "daemon/file_worker.h"
#include "daemon/telemetry/goodput.h"
#include "daemon/telemetry/job_accounting.h"
#include "daemon/job_checkpoints.h"
#include "daemon/job_manager.h"
#include "daemon/telemetry/metric_series.h"
#include "daemon/request_limits.h"
#include "daemon/share_access.h"
#include "proto/flag_parser.h"
#include "proto/provenance.h"
#include "proto/state_list.h"
#include "proto/time_window.h"
#include "scheduler/types.h"

namespace trainyard::daemon {
namespace {

// The text of a JSON object with `fields` (an object) added, without parsing the text again.
std::string with_fields(std::string object_text, const Json& fields) {
  if (fields.empty()) return object_text;
  const std::string extra = json_text(fields);
  object_text.back() = ',';  // was the closing brace
  object_text.append(extra, 1);
  return object_text;
}

Json checkpoint_json(const CheckpointStatus& s) {
  return {{"step", s.step},
          {"path", s.path},
          {"recorded_by_attempt", s.recorded_by ? Json(*s.recorded_by) : Json(nullptr)},
          {"valid", s.valid},
          {"problem", s.problem}};
}

}  // namespace

JobsApi::JobsApi(JobManager& jobs, StoreWorker& store, FileWorker& files, const JobViews& views, Auditor& audit,
                 const TimeSource& clock, std::string checkpoint_root, Limits limits)
    : jobs_(jobs),
      store_(store),
      files_(files),
      views_(views),
      audit_(audit),
      clock_(clock),
      checkpoint_root_(std::move(checkpoint_root)),
      limits_(limits) {}

void JobsApi::submit_job(ApiCall call) {
  JobSpec spec;
  try {
    spec = parse_job_spec(parse_json_text(call.request.body));
  } catch (const InvalidInput& e) {
    return call.invalid_body(e);
  }
  if (auto allowed = check_priority_ceiling(call.who, spec.priority, limits_.max_user_priority); !allowed) {
    return call.fail(allowed.error());
  }
  const std::string& share = spec.share;
  if (auto allowed = check_submit_share(call.who, share, jobs_.share_created(share), jobs_.share_members(share));
      !allowed) {
    return call.fail(allowed.error());
  }
  // An array adds all its tasks to the user's pending jobs at once.
  const std::size_t tasks = spec.array ? parse_array_spec(*spec.array, kMaxArrayIndex + 1).indices.size() : 1;
  if (auto allowed = check_pending_cap(call.who, limits_.max_pending_per_user,
                                       [&] { return jobs_.pending_count(call.who.user) + tasks - 1; });
      !allowed) {
    return call.fail(allowed.error());
  }
  const std::vector<JobId> unknown = jobs_.unknown_dependencies(spec);
  // Whose each job depended on is, for a caller who may not see every job (hidden_dependencies).
  std::unordered_map<JobId, std::string> owners;
  std::vector<JobId> owners_to_read;
  if (!call.who.may(Action::read_all_jobs)) {
    for (const Dependency& d : spec.depends_on) {
      if (const Job* active = jobs_.active_job(d.job)) {
        owners[d.job] = active->user;
      } else {
        owners_to_read.push_back(d.job);
      }
    }
  }
  if (unknown.empty() && owners_to_read.empty()) {
    std::unordered_set<JobId> hidden = hidden_dependencies(call.who, spec, owners);
    return accept_job(call, std::move(spec), std::move(hidden));
  }
  // Jobs it depends on that ended before this daemon started are read from the store first, and so
  // are the owners of those that are not active.
  store_.read(
      [this, call, unknown, owners_to_read, owners = std::move(owners), spec = std::move(spec)](store::Store& store) mutable {
        std::vector<Job> found = store::jobs_depended_on(store, unknown);
        for (JobId id : owners_to_read) {
          if (std::optional<Job> job = store.job(id)) owners[id] = job->user;
        }
        return std::function<void()>(
            [this, call, spec = std::move(spec), found = std::move(found), owners = std::move(owners)]() mutable {
              jobs_.remember_jobs(found);
              std::unordered_set<JobId> hidden = hidden_dependencies(call.who, spec, owners);
              accept_job(call, std::move(spec), std::move(hidden));
            });
      },
      [call](const Error& error) { call.fail(error.during("could not read the jobs depended on")); });
}

void JobsApi::accept_job(ApiCall call, JobSpec spec, const std::unordered_set<JobId>& hidden_dependencies) {
  const std::string user = call.who.user;
  const Json audited = {{"name", spec.name}, {"share", spec.share}};
  jobs_.submit(
      std::move(spec), user,
      [this, call](Result<JobManager::Submitted> accepted) {
        if (!accepted) return call.fail(accepted.error());
        const Job& job = accepted->job;
        // The stored text plus the live fields, rather than rendering the job again on this
        // thread (the store worker rendered it): the live fields come last, not in key order.
        (*call.respond)(net::HttpResponse{201,
                                          "application/json",
                                          with_fields(std::move(accepted->record), views_.live_fields(job)),
                                          {{"Location", "/v1/jobs/" + std::to_string(job.id)}}});
      },
      audit_.of(call, "job.submitted", audited), hidden_dependencies);
}

void JobsApi::list_jobs(ApiCall call) {
  JobPageQuery page_query;
  store::JobQuery& query = page_query.filter;
  const auto& q = call.request.query;
  const TimePoint now = clock_.system_now();
  if (auto it = q.find("state"); it != q.end()) query.states = parse_job_states("state", it->second);
  if (auto it = q.find("share"); it != q.end()) query.share = it->second;
  if (auto it = q.find("user"); it != q.end()) query.user = it->second;
  if (auto it = q.find("since"); it != q.end()) query.submitted_since = parse_time_bound(it->second, now, "since");
  if (auto it = q.find("until"); it != q.end()) query.submitted_until = parse_time_bound(it->second, now, "until");
  const PageRequest page = page_request(call.request, "jobs", 100);
  page_query.limit = static_cast<int>(*page.limit);
  query.before_id = query_int(call.request, "before");
  if (page.after) query.before_id = std::min(query.before_id.value_or(INT64_MAX), cursor_number(*page.after));
  page_query.array = query_int(call.request, "array");
  query.after_id = query_int(call.request, "after");
  if (!call.who.may(Action::read_all_jobs)) {
    if (query.user && *query.user != call.who.user) {
      return call.fail(
          Error::forbidden("role " + to_string(call.who.role) + " may not list other users' jobs", "user"));
    }
    query.user = call.who.user;
  }
  store_.read(
      [this, call, page_query](store::Store& store) {
        return std::function<void()>(
            [this, call, fold_arrays = !page_query.array, page = read_job_page(store, page_query)]() mutable {
              call.reply(200, job_list_body(call, std::move(page), fold_arrays));
            });
      },
      [this, call, page_query](const Error& error) {
        // While the store cannot be read (a database restart), the live jobs are listed from memory,
        // and the answer says what is left out.
        Json body = job_list_body(call, live_job_page(jobs_.active_jobs(), page_query), false);
        body["store_unreadable"] = "only live jobs are listed, without arrays folded or ended jobs: " + error.message;
        call.reply(200, body);
      });
}

Json JobsApi::job_list_body(const ApiCall& call, JobPage page, bool fold_arrays) const {
  const TimePoint now = clock_.system_now();
  // Live jobs and running attempts are fresher in memory than in the store.
  for (auto& [job_id, of_job] : page.attempts) {
    for (auto& a : of_job) {
      if (auto running = jobs_.active_attempt(a.id)) a = *running;
    }
  }
  const auto fresh = [this](const Job& stored) {
    const Job* active = jobs_.active_job(stored.id);
    return active ? *active : stored;
  };
  Json list = Json::array();
  for (const JobListRow& row : job_list_rows(page, fold_arrays, fresh)) {
    if (row.array_tasks) {
      Json item = views_.array_row(row.job, task_states(*row.array_tasks), call.who);
      item["accounting"] = to_json(array_accounting(*row.array_tasks, page.attempts, now));
      list.push_back(std::move(item));
      continue;
    }
    Json item = views_.job_json(row.job, call.who);
    item["accounting"] = to_json(job_accounting(row.job, page.attempts[row.job.id], now));
    list.push_back(std::move(item));
  }
  const Json next =
      page.next_before ? Json(page_cursor(call.request, "jobs", std::to_string(*page.next_before))) : Json(nullptr);
  return {{"jobs", list}, {"next", next}};
}

void JobsApi::get_job(ApiCall call) {
  const bool one_task = call.param("id").find('_') != std::string::npos;
  views_.with_job(call, [this, one_task](ApiCall c, Job job) {
    // Asked by an array's own id (not ID_N): the whole array too, its tasks by state.
    const bool whole_array = !one_task && job.array_task && job.array_task->array_job == job.id;
    store_.read(
        [this, c, job, whole_array](store::Store& store) {
          std::optional<std::map<std::string, int>> tasks;
          if (whole_array) tasks = task_states(array_tasks(store, *job.array_task));
          return std::function<void()>([this, c, job, tasks, attempts = store.attempts_of(job.id)]() mutable {
            // Running attempts are fresher in memory than in the store.
            for (auto& a : attempts) {
              if (auto active = jobs_.active_attempt(a.id)) a = *active;
            }
            const Job* active = jobs_.active_job(job.id);
            Json body = views_.job_json(active ? *active : job, c.who);
            body["goodput"] = to_json(job_goodput(attempts, clock_.system_now()));
            body["storage"] = views_.storage_json(job);
            if (tasks) body["array_tasks"] = {{"state", array_state(*tasks)}, {"counts", *tasks}};
            c.reply(200, body);
          });
        },
        [this, c, job](const Error& error) {
          // A live or just-ended job is answered from memory while the store cannot be read (a
          // database restart): its state is the daemon's own, and what only the store holds is said
          // to be missing.
          const Job* known = jobs_.active_job(job.id);
          if (!known) known = jobs_.recently_ended(job.id);
          if (!known) return c.fail(error.during("could not read attempts"));
          Json body = views_.job_json(*known, c.who);
          body["storage"] = views_.storage_json(job);
          body["store_unreadable"] = "goodput and earlier attempts not shown: " + error.message;
          c.reply(200, body);
        });
  });
}

void JobsApi::cancel_job(ApiCall call) {
  const bool one_task = call.param("id").find('_') != std::string::npos;
  views_.with_job(call, [this, one_task](ApiCall c, Job job) {
    if (!can_cancel(c.who, job)) return c.forbid("cancel job " + job_ref_text(job));
    if (!one_task && job.array_task && job.array_task->array_job == job.id) return cancel_array(c, job);
    jobs_.cancel(
        job.id,
        [this, c, job](JobManager::CancelResult result, std::optional<Job> updated) {
          if (result == JobManager::CancelResult::not_active) {
            return c.fail(Error::conflict("job " + job_ref_text(job) + " already ended as " + to_string(job.state)));
          }
          if (result == JobManager::CancelResult::not_stored) {
            return c.fail(Error::unavailable("the cancel of job " + job_ref_text(job) + " could not be stored; nothing was changed"));
          }
          c.reply(200, views_.job_json(*updated, c.who));
        },
        audit_.of(c, "job.cancelled", {{"job_user", job.user}}));
  });
}

void JobsApi::cancel_array(ApiCall call, const Job& root) {
  std::vector<JobId> active;
  for (JobId id = root.id; id < root.id + root.array_task->count; ++id) {
    if (jobs_.active_job(id)) active.push_back(id);
  }
  if (active.empty()) return call.fail(409, "conflict", "every task of array " + std::to_string(root.id) + " already ended");
  // Answered once every task's cancellation is stored (or asked of its running attempt), or could
  // not be: cancelled_tasks counts those stored, and when none was the call is refused.
  struct Tally {
    std::size_t left = 0;
    std::size_t stored = 0;
  };
  auto tally = std::make_shared<Tally>(Tally{active.size(), 0});
  auto first = std::make_shared<Job>(root);  // the array's first task as its cancellation left it
  for (JobId id : active) {
    jobs_.cancel(
        id,
        [this, call, first, tally, root](JobManager::CancelResult result, std::optional<Job> updated) {
          if (result != JobManager::CancelResult::not_stored) ++tally->stored;
          if (updated && updated->id == first->id) *first = *updated;
          if (--tally->left > 0) return;
          if (tally->stored == 0) {
            return call.fail(Error::unavailable("the cancel of array " + std::to_string(root.id) +
                                                " could not be stored; nothing was changed"));
          }
          Json body = views_.job_json(*first, call.who);
          body["array"]["cancelled_tasks"] = tally->stored;
          call.reply(200, body);
        },
        audit_.of(call, "job.cancelled", {{"job_user", root.user}}));
  }
}

void JobsApi::job_attempts(ApiCall call) {
  views_.with_job(call, [this](ApiCall c, Job job) {
    store_.read(
        [this, c, job](store::Store& store) {
          return std::function<void()>([this, c, attempts = store.attempts_of(job.id)] {
            Json list = Json::array();
            for (const auto& stored : attempts) {
              const auto active = jobs_.active_attempt(stored.id);
              Json attempt = to_json(active ? *active : stored);
              attempt.erase("provenance");  // its own route: it is large, and read one attempt at a time
              list.push_back(std::move(attempt));
            }
            c.reply(200, {{"attempts", list}});
          });
        },
        [c](const Error& error) { c.fail(error.during("could not read attempts")); });
  });
}

void JobsApi::attempt_provenance(ApiCall call) {
  // "last": the newest attempt, so a client need not list the attempts first.
  const std::optional<std::int64_t> number =
      call.param("n") == "last" ? std::nullopt : std::optional(parse_integer("n", call.param("n"), 1, 1 << 20));
  views_.with_job(call, [this, number](ApiCall c, Job job) {
    store_.read(
        [this, c, job, number](store::Store& store) {
          return std::function<void()>([this, c, job, number, attempts = store.attempts_of(job.id)] {
            const auto stored =
                number ? std::find_if(attempts.begin(), attempts.end(), [&](const Attempt& a) { return a.number == *number; })
                       : std::max_element(attempts.begin(), attempts.end(),
                                          [](const Attempt& a, const Attempt& b) { return a.number < b.number; });
            const std::string which = number ? "attempt " + std::to_string(*number) : "attempt";
            if (stored == attempts.end()) {
              return c.fail(Error::not_found("job " + job_ref_text(job) + " has no " + which));
            }
            // A running attempt's ranks complete it in memory before it is stored.
            const auto active = jobs_.active_attempt(stored->id);
            const AttemptProvenance& provenance = active ? active->provenance : stored->provenance;
            if (provenance.empty()) {
              return c.fail(
                  Error::not_found("attempt " + std::to_string(stored->number) + " of job " + job_ref_text(job) +
                                   " has no provenance record (not launched, or recorded before provenance existed)"));
            }
            c.reply(200, provenance.json());
          });
        },
        [c](const Error& error) { c.fail(error.during("could not read attempts")); });
  });
}

namespace {

// Why a job has no attempt to show the logs of: the attempt asked for is not one of its own, or it
// never started (still waiting, or ended before it could).
std::string no_logs_text(const Job& job, std::optional<std::int64_t> number) {
  const std::string name = "job " + job_ref_text(job);
  if (number) return name + " has no attempt " + std::to_string(*number);
  if (job.state == JobState::pending) return name + " has not started yet, so it has no logs (it is PENDING)";
  return name + " was " + to_string(job.state) + " before it started (" + job.reason + "), so it has no logs";
}

}  // namespace

void JobsApi::job_logs(ApiCall call) {
  const auto rank_value = query_int(call.request, "rank");
  const std::optional<int> rank = rank_value ? std::optional<int>(static_cast<int>(*rank_value)) : std::nullopt;
  // Lines, like tail -n; each rank's reply is capped at kMaxLogReplyBytes and says when it was cut.
  const auto tail = query_int(call.request, "tail").value_or(1000);
  const auto number = query_int(call.request, "attempt");
  views_.with_job(call, [this, rank, tail, number](ApiCall c, Job job) {
    store_.read(
        [this, c, job, rank, tail, number](store::Store& store) {
          return std::function<void()>([this, c, job, rank, tail, number, attempts = store.attempts_of(job.id)] {
            const Attempt* chosen = nullptr;
            for (const auto& a : attempts) {
              if (number ? a.number == *number : (!chosen || a.number > chosen->number)) chosen = &a;
            }
            if (!chosen) return c.fail(Error::not_found(no_logs_text(job, number)));
            if (rank && *rank >= static_cast<int>(chosen->nodes.size())) {
              return c.fail(400, "invalid_query", "rank: attempt has ranks 0.." + std::to_string(chosen->nodes.size() - 1), "rank");
            }
            const Attempt attempt = *chosen;
            jobs_.logs().fetch(attempt, rank, tail, [c, job, attempt](std::vector<RankLog> logs) {
              Json list = Json::array();
              for (const auto& l : logs) {
                list.push_back({{"rank", l.rank},           {"node", l.node},
                                {"text", l.text},           {"error", l.error},
                                {"log_bytes", l.log_bytes}, {"truncated", l.truncated}});
              }
              Json reply = {{"job_id", job.id}, {"attempt_id", attempt.id}, {"attempt", attempt.number}, {"logs", list}};
              // Whose logs these are when the array's own id was asked for (its first task's).
              if (job.array_task) {
                reply["array"] = {{"job_id", job.array_task->array_job}, {"task_id", job.array_task->index}};
              }
              c.reply(200, reply);
            });
          });
        },
        [c](const Error& error) { c.fail(error.during("could not read attempts")); });
  });
}

void JobsApi::job_checkpoints(ApiCall call) {
  views_.with_job(call, [this](ApiCall c, Job job) {
    const std::filesystem::path dir = checkpoint::job_checkpoint_dir(checkpoint_root_, job.id);
    // The records come from the store; the job's files are read on the file worker, never on the
    // store's thread, so a hostile directory cannot hold up other requests.
    store_.read(
        [this, c, dir, job](store::Store& store) {
          return StoreWorker::Continuation(
              [this, c, dir, kind = job.spec.kind, recorded = store.checkpoints_of(job.id)] {
                files_.run(
                    [c, dir, kind, recorded] {
                      Json list = Json::array();
                      for (const auto& s : inspect_checkpoints(dir, recorded, kind)) list.push_back(checkpoint_json(s));
                      return FileWorker::Continuation([c, list] { c.reply(200, {{"checkpoints", list}}); });
                    },
                    [c](const Error& error) { c.fail(error.during("could not list checkpoints")); });
              });
        },
        [c](const Error& error) { c.fail(error.during("could not read recorded checkpoints")); });
  });
}

void JobsApi::job_metrics(ApiCall call) {
  const auto max_points = query_int(call.request, "max_points").value_or(500);
  views_.with_job(call, [this, max_points](ApiCall c, Job job) {
    // Summarizing can touch every step of a long run: done on the worker thread with the read.
    store_.read(
        [c, job, max_points](store::Store& store) {
          Json body = to_json(summarize_metrics(store.metrics_of(job.id), max_points));
          body["job_id"] = job.id;
          return std::function<void()>([c, body = std::move(body)] { c.reply(200, body); });
        },
        [c](const Error& error) { c.fail(error.during("could not read metrics")); });
  });
}

}  // namespace trainyard::daemon
