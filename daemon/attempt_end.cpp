#include "daemon/attempt_end.h"

#include <algorithm>

#include "checkpoint/checkpoint.h"
#include "daemon/base/quoted_output.h"
#include "daemon/events/events.h"
#include "daemon/job_manager.h"
#include "daemon/policy/lifecycle.h"
#include "proto/backoff.h"
#include "proto/exit_reasons.h"

namespace trainyard::daemon {
namespace {

bool contains(const std::vector<int>& values, int value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// What classification reads: the first failed rank's exit, else the daemon's own reason for the kill.
AttemptFacts facts_of(const Job& job, const AttemptEndFacts& end) {
  AttemptFacts facts;
  facts.cancelled = job.cancel_requested;
  facts.timed_out = end.timed_out;
  for (const RankEnd& rank : end.ranks) {
    if (rank.lost) facts.node_lost = true;
    if (rank.health_failed) facts.health_failed = true;
  }
  if (end.first_failed_rank >= 0) {
    const RankEnd& culprit = end.ranks[static_cast<std::size_t>(end.first_failed_rank)];
    facts.exit_code = culprit.exit_code;
    facts.signal = culprit.signal;
    facts.reason = culprit.reason;
    facts.log_tail = culprit.log_tail;
  }
  if (!end.unjudged_preflight.empty()) {
    facts.health_failed = true;
    if (facts.reason.empty()) facts.reason = end.unjudged_preflight;
  }
  if (facts.reason.empty()) facts.reason = end.kill_reason;
  // Stopped as stuck, the ranks died of the daemon's kill: the diagnosis is the reason.
  facts.stuck = !end.stuck_ranks.empty();
  if (facts.stuck) facts.reason = end.kill_reason;
  facts.node_failed_check = !end.failed_checks.empty();
  facts.over_storage_quota = end.over_storage_quota;
  facts.quota_exceeded = end.quota_exceeded;
  facts.node_disk_low = end.node_disk_low;
  if (facts.quota_exceeded) facts.reason = end.kill_reason;
  for (const std::string& failed : end.failed_checks) facts.reason += "; then " + failed;
  return facts;
}

// Nodes whose rank was lost, failed pre-flight or stopped advancing, or whose own disk filled under
// the job (disk_full as infrastructure, not the job's quota): the job's next attempts avoid them.
void exclude_failed_nodes(Job& job, const Attempt& attempt, const AttemptEndFacts& end, const FailureClass& cls) {
  const bool node_disk_full = cls.infrastructure && cls.name == "disk_full";
  for (std::size_t r = 0; r < end.ranks.size(); ++r) {
    const bool failed_here = end.ranks[r].lost || end.ranks[r].health_failed ||
                             contains(end.stuck_ranks, static_cast<int>(r)) ||
                             (node_disk_full && static_cast<int>(r) == end.first_failed_rank);
    if (failed_here && std::find(job.excluded_nodes.begin(), job.excluded_nodes.end(), attempt.nodes[r]) ==
                           job.excluded_nodes.end()) {
      job.excluded_nodes.push_back(attempt.nodes[r]);
    }
  }
}

// The first failed rank's last lines, kept with the attempt for `trainyard job` and the job page.
void quote_failed_rank_output(Attempt& attempt, const AttemptEndFacts& end) {
  constexpr std::size_t kOutputLines = 10;
  constexpr std::size_t kOutputChars = 1500;
  if (end.first_failed_rank < 0) return;
  attempt.output = quoted_tail(end.ranks[static_cast<std::size_t>(end.first_failed_rank)].log_tail, kOutputLines, kOutputChars);
  if (!attempt.output.empty()) attempt.output_rank = end.first_failed_rank;
}

struct FailureApplied {
  AttemptFailure failure;
  std::string_view event_type;  // the job's transition's (daemon/policy/lifecycle.h)
};

FailureApplied apply_failure(Attempt& attempt, Job& job, const AttemptFacts& facts, const AttemptEndFacts& end,
                             const AttemptEndPolicy& policy, TimePoint now) {
  const FailureClass cls = policy.rules.classify(facts);
  quote_failed_rank_output(attempt, end);
  attempt.failure_class = cls.name;
  attempt.infrastructure = cls.infrastructure;
  change_state(attempt.state, facts.cancelled ? AttemptEvent::cancelled : AttemptEvent::failed);
  job.failure_class = cls.name;
  job.suggestion = facts.cancelled ? "" : cls.suggestion;
  // decide_retry counts attempts the job used; infrastructure retries are kept apart, and only
  // those since training last advanced count against their limit.
  const std::int64_t resumed_at = attempt.resumed_from ? checkpoint::step_of(*attempt.resumed_from).value_or(0) : 0;
  if (attempt.steps_completed > resumed_at) job.infra_retries_in_a_row = 0;
  const RetryDecision decision =
      decide_retry(job.spec, job.attempts, job.infra_retries_in_a_row, policy.max_infra_retries, facts, cls);
  exclude_failed_nodes(job, attempt, end, cls);
  std::string_view event_type;
  switch (decision.step) {
    case NextStep::retry_infrastructure:
      ++job.infra_retries;
      ++job.infra_retries_in_a_row;
      --job.attempts;  // this attempt does not count against the job's own
      [[fallthrough]];
    case NextStep::retry: {
      // Not jittered, as Kubernetes' job controller: a job's retries are its own, not a herd's.
      const BackoffPolicy retries{policy.retry_backoff_base, policy.retry_backoff_base * 64};
      event_type = change_state(job.state, JobEvent::retried).event_type;
      job.not_before = now + backoff_ceiling(retries, job.attempts + job.infra_retries_in_a_row);
      job.reason = attempt.reason + "; " + decision.why;
      break;
    }
    case NextStep::fail:
      event_type = change_state(job.state, facts.cancelled ? JobEvent::cancelled : JobEvent::failed).event_type;
      job.ended_at = now;
      job.reason = facts.cancelled ? "cancelled on request" : attempt.reason + "; " + decision.why;
      break;
  }
  return {{cls, decision.step}, event_type};
}

// Stopped to queue again (requeue, preemption): neither a failure nor a retry. The job gives back
// the attempt it used, needs no backoff, and resumes from the checkpoint the stop wrote.
// Returns the type of the event it makes (daemon/policy/lifecycle.h).
std::string_view apply_stop_to_queue_again(Attempt& attempt, Job& job, const AttemptEndFacts& end) {
  const bool preempted = job.stopping_to == StopIntent::preempt;
  change_state(attempt.state, preempted ? AttemptEvent::preempted : AttemptEvent::requeued);
  attempt.reason = end.kill_reason;
  attempt.failure_class.clear();
  --job.attempts;
  ++job.requeues;
  job.stopping_to = StopIntent::none;
  job.not_before.reset();
  job.reason = (preempted ? "preempted: " : "requeued: ") + end.kill_reason;
  return change_state(job.state, preempted ? JobEvent::preempted : JobEvent::requeued).event_type;
}

store::Event requeue_event(std::string_view type, const Attempt& attempt, const Job& job, const AttemptEndFacts& end,
                           TimePoint now) {
  const bool preempted = attempt.state == AttemptState::preempted;
  const std::int64_t resumed_at = attempt.resumed_from ? checkpoint::step_of(*attempt.resumed_from).value_or(0) : 0;
  const std::int64_t resume_step = std::max(resumed_at, end.newest_checkpoint_step);
  return job_event(now, std::string(type), job, attempt.id, join_node_names(attempt.nodes),
                   "job " + job_ref_text(job) + " attempt " + std::to_string(attempt.number) +
                       (preempted ? " preempted" : " requeued") + " after " + std::to_string(attempt.steps_completed) +
                       " steps; queued again" +
                       (resume_step > 0 ? " to resume from step " + std::to_string(resume_step) : " to start over"),
                   {{"why", attempt.reason}, {"steps", attempt.steps_completed}, {"resume_step", resume_step}});
}

// The node a failure is told of: the first failed rank's, else every node of the attempt.
std::string failed_node(const Attempt& attempt, const AttemptEndFacts& end) {
  if (end.first_failed_rank >= 0) return attempt.nodes[static_cast<std::size_t>(end.first_failed_rank)];
  return join_node_names(attempt.nodes);
}

// What a person reading of a job's end wants at a glance (webhook and Slack messages): which job
// (an array task as ID_N), which attempt on which nodes, how long it ran, and for a failure the
// failing rank's last output lines; `specific` adds the kind's own.
Json end_details(const Attempt& attempt, const Job& job, TimePoint now, Json specific) {
  Json details = {{"name", job.spec.name}, {"job_ref", job_ref_text(job)}, {"attempt", attempt.number},
                  {"nodes", join_node_names(attempt.nodes)}};
  if (attempt.started_at) {
    const auto ran = std::chrono::duration_cast<Millis>(now - *attempt.started_at);
    details["duration_s"] = static_cast<double>(std::max(ran, Millis(0)).count() / 100) / 10.0;
  }
  if (!attempt.output.empty()) details["output"] = attempt.output;
  details.update(specific);
  return details;
}

// `type` is the job's transition's (daemon/policy/lifecycle.h); what the event says depends on where it went.
store::Event end_event(std::string_view type, const Attempt& attempt, const Job& job, const AttemptEndFacts& end,
                       const std::optional<AttemptFailure>& failure, TimePoint now) {
  const std::string id = job_ref_text(job);
  const std::string nodes = join_node_names(attempt.nodes);
  if (!failure) {
    Json details = {{"exit_code", 0}, {"steps", attempt.steps_completed}};
    std::string message = "job " + id + " succeeded after " + std::to_string(attempt.steps_completed) + " steps";
    if (attempt.reason != "completed") {
      details["reason"] = attempt.reason;
      message += " (" + attempt.reason.substr(std::string_view("completed; ").size()) + ")";
    }
    return job_event(now, std::string(type), job, attempt.id, nodes, message, end_details(attempt, job, now, std::move(details)));
  }
  if (job.state == JobState::cancelled) {
    return job_event(now, std::string(type), job, attempt.id, nodes, "job " + id + " cancelled while running",
                     end_details(attempt, job, now, {{"reason", attempt.reason}}));
  }
  const Json exit_code = attempt.exit_code ? Json(*attempt.exit_code) : Json(nullptr);
  if (job.state == JobState::pending) {
    const std::int64_t resumed_at = attempt.resumed_from ? checkpoint::step_of(*attempt.resumed_from).value_or(0) : 0;
    const std::int64_t resume_step = std::max(resumed_at, end.newest_checkpoint_step);
    const int next_attempt = job.attempts + job.infra_retries + job.requeues + 1;
    return job_event(now, std::string(type), job, attempt.id, failed_node(attempt, end),
                     "job " + id + " attempt " + std::to_string(attempt.number) + " failed (" + failure->cls.name +
                         "); retrying as attempt " + std::to_string(next_attempt) +
                         (resume_step > 0 ? " from step " + std::to_string(resume_step) : " from the start"),
                     end_details(attempt, job, now,
                                 {{"why", job.reason},
                                  {"class", failure->cls.name},
                                  {"exit_code", exit_code},
                                  {"next_attempt", next_attempt},
                                  {"resume_step", resume_step}}));
  }
  return job_event(now, std::string(type), job, attempt.id, failed_node(attempt, end),
                   "job " + id + " failed (" + failure->cls.name + "): " + attempt.reason,
                   end_details(attempt, job, now,
                               {{"class", failure->cls.name},
                                {"suggestion", failure->cls.suggestion},
                                {"exit_code", exit_code},
                                {"node", failed_node(attempt, end)},
                                {"infrastructure", attempt.infrastructure}}));
}

// A rank's processes the OOM killer took although the attempt succeeded (a data loader worker,
// a helper the program retried without): said in the reason, as the README promises, since a
// silent kill may have cost the run data or time. "" when there were none.
std::string oom_kills_of(const AttemptEndFacts& end) {
  std::string told;
  for (std::size_t r = 0; r < end.ranks.size(); ++r) {
    const std::string& reason = end.ranks[r].reason;
    if (!reason.starts_with(kOomKilledReasonPrefix)) continue;
    const std::string what = reason.substr(0, reason.find("; "));
    told += (told.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + ": " + what;
  }
  return told;
}

}  // namespace

AttemptEnd decide_attempt_end(Attempt attempt, Job job, const AttemptEndFacts& end, const AttemptEndPolicy& policy,
                              TimePoint now) {
  const AttemptFacts facts = facts_of(job, end);
  for (const RankEnd& rank : end.ranks) attempt.steps_completed = std::max(attempt.steps_completed, rank.steps);
  const bool clean_exit =
      end.first_failed_rank < 0 && end.unjudged_preflight.empty() && !facts.cancelled && !facts.timed_out;
  // A command asked to stop (requeue, preemption) saves on SIGUSR1 or SIGTERM and exits, often with
  // 0: the daemon cannot tell that exit from one at the end of its work, so the stop wins and the
  // job resumes from its newest checkpoint, as Slurm's requeue does. A simulated job says whether it
  // reached its last step.
  const bool stopped_to_queue_again =
      job.stopping_to != StopIntent::none && !facts.cancelled &&
      !(clean_exit && job.spec.kind == JobKind::simulated && attempt.steps_completed >= job.spec.workload.steps);
  const bool succeeded = clean_exit && !stopped_to_queue_again;
  for (int r : end.stuck_ranks) {
    const std::string& tail = end.ranks[static_cast<std::size_t>(r)].log_tail;
    if (!tail.empty()) attempt.diagnosis += "\n--- rank " + std::to_string(r) + " log tail ---\n" + tail;
  }
  attempt.ended_at = now;
  attempt.exit_code = facts.exit_code;
  attempt.signal = facts.signal;
  const std::string oom_kills = succeeded ? oom_kills_of(end) : "";
  attempt.reason = succeeded ? (oom_kills.empty() ? "completed" : "completed; " + oom_kills) : facts.reason;
  job.exit_code = facts.exit_code;
  std::optional<AttemptFailure> failure;
  std::string_view end_type;
  if (succeeded) {
    attempt.exit_code = 0;
    job.exit_code = 0;
    change_state(attempt.state, AttemptEvent::succeeded);
    end_type = change_state(job.state, JobEvent::succeeded).event_type;
    job.reason = attempt.reason;
    job.failure_class.clear();  // a job's class is its final attempt's: an earlier failure is history
    job.suggestion.clear();
    job.ended_at = now;
  } else if (stopped_to_queue_again) {
    const std::string_view type = apply_stop_to_queue_again(attempt, job, end);
    return {attempt, job, {requeue_event(type, attempt, job, end, now)}, std::nullopt};
  } else {
    FailureApplied applied = apply_failure(attempt, job, facts, end, policy, now);
    failure = std::move(applied.failure);
    end_type = applied.event_type;
  }
  job.stopping_to = StopIntent::none;  // a stop that came too late for the attempt is over with it
  std::vector<store::Event> events{end_event(end_type, attempt, job, end, failure, now)};
  return {std::move(attempt), std::move(job), std::move(events), std::move(failure)};
}

}  // namespace trainyard::daemon
