// The job manager's health side: registration gating, pre-flight before multi-node attempts,
// starting the checks the monitors ask for (monitors.h), drain and undrain, and handing verdicts to
// the node registry (node_registry.h). The checks themselves run in HealthChecks (health_checks.h).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "checkpoint/checkpoint.h"
#include "daemon/canary.h"
#include "daemon/daemon_metrics.h"
#include "daemon/events/events.h"
#include "daemon/job_checkpoints.h"
#include "daemon/job_manager.h"

namespace trainyard::daemon {
namespace {

ResumedCheckpoint resumed_checkpoint(const CheckpointStatus& chosen, const std::vector<store::CheckpointRecord>& recorded) {
  ResumedCheckpoint resumed{chosen.path, chosen.step, ""};
  for (const auto& r : recorded) {
    if (r.step == chosen.step) resumed.manifest_sha256 = r.manifest_sha256;
  }
  return resumed;
}

}  // namespace

std::int64_t JobManager::start_health_check(HealthCheckRequest request) {
  return start_check(std::move(request), nullptr);
}

std::int64_t JobManager::start_check(HealthCheckRequest request, std::function<void(const HealthCheckResult&)> then) {
  const std::vector<std::string> nodes = request.nodes;
  const std::int64_t id = health_.start(std::move(request), [this, then = std::move(then)](const HealthCheckResult& result) {
    apply_health_result(result);
    if (then) then(result);
  });
  // A node under test takes no new work until the verdict (the suites use its cores and links).
  for (const auto& node : nodes) nodes_.sync(node);
  return id;
}

namespace {

store::Event health_check_event(TimePoint now, const HealthCheckResult& result) {
  const std::vector<std::string> failed = result.failed_nodes();
  const std::string nodes = join_node_names(result.request.nodes);
  const std::string outcome = result.passed() ? "passed" : "failed on " + join_node_names(failed);
  return node_event(now, "healthcheck.finished", nodes,
                    "health check " + std::to_string(result.id) + " (" + to_string(result.request.kind) + ") on " + nodes +
                        " " + outcome,
                    {{"check", result.id}, {"kind", to_string(result.request.kind)}, {"passed", result.passed()},
                     {"failed_nodes", failed}});
}

}  // namespace

void JobManager::apply_health_result(const HealthCheckResult& result) {
  if (metrics_) metrics_->health_check_finished(result);
  store::Change change;
  change.health_checks.push_back(store::HealthCheckRow{result.id, to_string(result.request.kind), result.created_at, to_json(result)});
  change.events.push_back(health_check_event(clock_.system_now(), result));
  for (const auto& name : result.request.nodes) nodes_.record_check(name, result, change);
  persist(std::move(change), [this] {
    check_idle_stragglers("daemon");  // a straggler's node that was under test may be free now
    request_schedule();
  });
}

void JobManager::begin_attempt(AttemptId id) {
  start_preflight(id);  // in parallel with the checkpoint claim and the choice of the resume point
  ActiveAttempt* active = attempts_.find(id);
  if (!active) return;
  if (checkpoint_dir_of(active->record.job_id).empty()) return resume_chosen(id, std::optional<ResumedCheckpoint>());
  if (active->record.number == 1) return choose_resume_point(id, {});
  store_.read(
      [this, id, job = active->record.job_id](store::Store& store) {
        return StoreWorker::Continuation([this, id, recorded = store.checkpoints_of(job)]() mutable {
          choose_resume_point(id, std::move(recorded));
        });
      },
      [this, id](const Error& error) { resume_chosen(id, error.during("reading recorded checkpoints")); });
}

// Claims the job's checkpoint directory for the attempt and, for a retry, picks the newest
// checkpoint an attempt of the job recorded. The job's files are read on the file worker: a slow
// or hostile directory delays this attempt, nothing else. A first attempt only removes a claim a
// wiped store's job of the same id left: no earlier attempt can write there, so there is nothing to
// fence, and a writer publishes while no attempt has claimed the directory. Nor is the directory
// made here: whoever writes makes it private to the job (the agent for a command's rank, owned by
// the job's account; a CheckpointWriter before its first step). The claim's two fsyncs were a third
// of the daemon's CPU per trivial job, and the mkdir then another 7% (bench/trivial_jobs).
void JobManager::choose_resume_point(AttemptId id, std::vector<store::CheckpointRecord> recorded) {
  ActiveAttempt* active = attempts_.find(id);
  if (!active) return;
  const bool retry = active->record.number > 1;
  const JobKind kind = active_jobs_.at(active->record.job_id).spec.kind;
  files_.run(
      [this, id, retry, kind, dir = checkpoint_dir_of(active->record.job_id), recorded = std::move(recorded)] {
        std::optional<ResumedCheckpoint> resume;
        if (!retry) {
          checkpoint::remove_stale_claim(dir);
        } else {
          checkpoint::claim_checkpoints(dir, id);
          const auto statuses = inspect_checkpoints(dir, recorded, kind);
          for (const auto& s : statuses) {
            if (!s.valid)
              spdlog::warn("event=checkpoint_skipped attempt={} path={} problem=\"{}\"", id, s.path, s.problem);
          }
          if (auto found = resume_point(statuses)) resume = resumed_checkpoint(*found, recorded);
        }
        return FileWorker::Continuation([this, id, resume] { resume_chosen(id, resume); });
      },
      [this, id](const Error& error) { resume_chosen(id, error); });
}

void JobManager::resume_chosen(AttemptId id, Result<std::optional<ResumedCheckpoint>> chosen) {
  ActiveAttempt* active = attempts_.find(id);
  if (!active) return;
  if (!chosen) spdlog::error("event=checkpoint_claim_failed attempt={} error=\"{}\"", id, chosen.error().message);
  std::optional<ResumedCheckpoint> resume = chosen ? std::move(*chosen) : std::nullopt;
  if (!resume) {
    change_phase(active->phase, AttemptStep::resume_chosen);
    return launch_when_ready(id);
  }
  active->record.resumed_from = resume->path;
  active->resumed = std::move(resume);
  spdlog::info("event=attempt_resumes job={} attempt={} from={} step={}", active->record.job_id, id,
               active->resumed->path, active->resumed->step);
  store::Change change;
  change.attempts.push_back(active->record);
  persist(std::move(change), [this, id] {
    ActiveAttempt* stored = attempts_.find(id);
    if (!stored) return;
    change_phase(stored->phase, AttemptStep::resume_chosen);
    launch_when_ready(id);
  });
}

void JobManager::start_preflight(AttemptId id) {
  ActiveAttempt* active = attempts_.find(id);
  if (!active) return;
  ActiveAttempt& attempt = *active;
  const Job& job = active_jobs_.at(attempt.record.job_id);
  const auto& nodes = attempt.record.nodes;
  if (!config_.preflight_checks || !job.spec.preflight_enabled() || nodes.size() < 2 || attempt.stopping()) return;
  // A resume after an infrastructure failure tests only what it has not proven: nodes that kept
  // running the previous attempt, and warm ones, go without; the rest are tested with them.
  if (const std::vector<std::string>* survived = attempts_.survivors(job.id)) {
    const std::vector<std::string> survivors = *survived;
    attempts_.forget_survivors(job.id);
    std::vector<ResumeNode> resume_nodes;
    for (const std::string& name : nodes) {
      const NodeEntry* entry = nodes_.find(name);
      const bool passed = entry && entry->node.last_check_verdict == to_string(NodeState::healthy);
      resume_nodes.push_back({name, std::find(survivors.begin(), survivors.end(), name) != survivors.end(),
                              passed ? entry->node.last_check_at : std::nullopt});
    }
    if (unproven_nodes(resume_nodes, clock_.system_now(), config_.recovery.warm_for).empty()) {
      spdlog::info("event=preflight_skipped job={} attempt={} nodes={} why=\"survivors and warm nodes\"", job.id, id,
                   join_node_names(nodes));
      return;
    }
  }
  change_phase(attempt.phase, AttemptStep::preflight_started);
  HealthCheckRequest request{HealthCheckKind::preflight, nodes, false, true, "job " + job_ref_text(job)};
  spdlog::info("event=preflight_started job={} attempt={} nodes={}", job.id, id, join_node_names(nodes));
  start_check(std::move(request), [this, id](const HealthCheckResult& result) { on_preflight_done(id, result); });
}

void JobManager::launch_when_ready(AttemptId id) {
  ActiveAttempt* active = attempts_.find(id);
  if (!active || active->phase != AttemptPhase::launching) return;
  launch(id);
}

void JobManager::on_preflight_done(AttemptId id, const HealthCheckResult& result) {
  ActiveAttempt* active = attempts_.find(id);
  if (!active) return;
  ActiveAttempt& attempt = *active;
  change_phase(attempt.phase, AttemptStep::preflight_done);
  // A passed check launches; so does a stopped attempt, which launch() winds up without starting it.
  if (result.passed() || attempt.stopping()) return launch_when_ready(id);
  const auto failed = result.failed_nodes();
  if (failed.empty()) {
    attempt.unjudged_preflight =
        "health_failed: pre-flight check " + std::to_string(result.id) + " judged no node: " + result.error;
  }
  for (std::size_t r = 0; r < attempt.ranks.size(); ++r) {
    const std::string& node = attempt.record.nodes[r];
    RankState& rank = attempt.ranks[r];
    rank.exited = true;  // no rank was launched
    if (std::find(failed.begin(), failed.end(), node) == failed.end()) continue;
    rank.health_failed = true;
    for (const auto& v : result.verdicts) {
      if (v.node == node) {
        rank.reason = "health_failed: pre-flight check " + std::to_string(result.id) + " found " + node + " " +
                      to_string(v.state) + ": " + v.reason;
      }
    }
    if (attempt.first_failed_rank < 0) attempt.first_failed_rank = static_cast<int>(r);
  }
  finish_attempt(attempt);
}

bool JobManager::test_stuck_nodes(ActiveAttempt& attempt) {
  if (attempt.stuck_ranks.empty() || attempt.phase == AttemptPhase::testing_stuck_nodes) return false;
  change_phase(attempt.phase, AttemptStep::stuck_nodes_test_started);
  const Job& job = active_jobs_.at(attempt.record.job_id);
  if (job.cancel_requested) return false;
  auto request = monitors_.stuck_nodes_check(job, attempt.record, attempt.stuck_ranks);
  if (!request) return false;
  spdlog::info("event=stuck_nodes_check job={} attempt={} nodes={}", job.id, attempt.record.id, join_node_names(request->nodes));
  start_check(std::move(*request), [this, id = attempt.record.id](const HealthCheckResult& result) {
    ActiveAttempt* active = attempts_.find(id);
    if (!active) return;
    for (const auto& verdict : result.verdicts) {
      if (verdict.state == NodeState::healthy) continue;
      active->failed_checks.push_back(verdict.node + " failed health check " + std::to_string(result.id) + ": " +
                                      to_string(verdict.state) + ": " + verdict.reason);
    }
    finish_attempt(*active);
  });
  return true;
}

bool JobManager::canary_running() const {
  return std::any_of(active_jobs_.begin(), active_jobs_.end(), [](const auto& kv) { return kv.second.user == kCanaryUser; });
}

void JobManager::run_canary(SubmitDone done, AuditOf audit) {
  Result<JobSpec> spec = monitors_.canary_now(clock_.monotonic_now(), canary_running());
  if (!spec) return done(spec.error());
  submit(std::move(*spec), kCanaryUser, std::move(done), std::move(audit));
}

std::optional<TimePoint> JobManager::next_canary_at() const {
  const std::optional<MonoTime> next = monitors_.next_canary();
  if (!next) return std::nullopt;
  return clock_.system_now() + std::chrono::duration_cast<TimePoint::duration>(*next - clock_.monotonic_now());
}

void JobManager::submit_canary(JobSpec spec) {
  submit(std::move(spec), kCanaryUser, [](Result<Submitted> accepted) {
    if (!accepted) return spdlog::error("event=canary_not_submitted error=\"{}\"", accepted.error().message);
    spdlog::info("event=canary_submitted job={} nodes={}", accepted->job.id, accepted->job.spec.nodes);
  });
}

void JobManager::drain_in_turn(const std::string& name, const std::string& reason, bool stop_attempts, DrainDone done,
                               AuditOf audit) {
  const Node before = nodes_.find(name)->node;
  store::Change change = nodes_.drain(name, reason);
  if (audit) change.events.push_back(audit(name));
  const std::set<AttemptId>& held = nodes_.find(name)->attempts;
  spdlog::info("event=node_drained node={} stop_attempts={} running={} reason=\"{}\"", name, stop_attempts, held.size(),
               reason);
  const std::vector<AttemptId> running(held.begin(), held.end());
  persist_requested(
      std::move(change),
      [this, name, stop_attempts, running, done] {
        if (stop_attempts) {
          // Not the job's fault: stopped as infrastructure failures, retried elsewhere.
          for (AttemptId id : running) {
            ActiveAttempt* active = attempts_.find(id);
            if (!active) continue;
            const int rank = active->rank_of(name);
            if (rank >= 0) rank_lost(id, rank, "node_lost: node " + name + " was drained with its attempts stopped");
          }
        }
        if (const NodeEntry* entry = nodes_.find(name)) return done(entry->node);
        done(Error::not_found("node " + name + " was removed while its drain was stored"));
      },
      [this, before, done] {
        nodes_.put_back_state(before);
        spdlog::warn("event=request_not_stored node={} action=put_back", before.name);
        done(Error::unavailable("the drain of node " + before.name + " could not be stored; nothing was changed"));
      });
}

void JobManager::undrain_in_turn(const std::string& name, const std::string& by, UndrainDone done, AuditOf audit) {
  const Node before = nodes_.find(name)->node;
  auto [change, check] = nodes_.undrain(name, by, [&] {
    return start_check(HealthCheckRequest{HealthCheckKind::undrain, {name}, true, false, by}, nullptr);
  });
  if (audit) change.events.push_back(audit(name));
  spdlog::info("event=node_undrained node={} by={} state={} check={}", name, by, to_string(nodes_.find(name)->node.state),
               check.value_or(0));
  // Captured by copy under its own name: Clang 14 cannot capture a structured binding.
  persist_requested(
      std::move(change),
      [this, name, check_id = check, done] {
        request_schedule();
        if (const NodeEntry* entry = nodes_.find(name)) return done(Undrained{entry->node, check_id});
        done(Error::not_found("node " + name + " was removed while its undrain was stored"));
      },
      [this, before, check_id = check, done] {
        nodes_.put_back_state(before);
        spdlog::warn("event=request_not_stored node={} action=put_back", before.name);
        std::string why = "the undrain of node " + before.name + " could not be stored; it stays " + to_string(before.state);
        // A check cannot be called back once its tasks are out; its verdict counts as any check's.
        if (check_id) why += " (health check " + std::to_string(*check_id) + " already started on it runs on)";
        done(Error::unavailable(why));
      });
}

}  // namespace trainyard::daemon
