// Checkpoint-aware preemption, the acting half: the scheduler decides
// (scheduler/preemption.h); this gathers the facts it decides on and stops the victims through the
// requeue path, which saves their work first and ends their attempts PREEMPTED.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "checkpoint/checkpoint.h"
#include "daemon/events/events.h"
#include "daemon/job_manager.h"

namespace trainyard::daemon {
namespace {

// How far down the queue to look past the system share's jobs (canaries: one or two at a time).
constexpr std::size_t kQueueHeadLooked = 8;

// The job preemption would make room for: the first in the scheduler's queue order after the pass
// (so the most under-served share's first job), system share aside, if it waits for free cores.
// Not the pass's reservation: a pass on a full cluster stops before it looks at any job (nothing
// pending fits anywhere) and reserves nothing, and it reserves only where running work has a known
// end; the queue order is there either way.
const Job* job_to_make_room_for(const scheduler::Scheduler& scheduler, const JobManager& jobs) {
  for (JobId id : scheduler.queue_page(0, kQueueHeadLooked)) {
    const Job* job = jobs.active_job(id);
    if (!job || job->spec.share == scheduler.config().system_share) continue;
    const auto why = scheduler.why_pending(id);
    const bool waits_for_cores = why && why->code == scheduler::ReasonCode::resources;
    return job->state == JobState::pending && waits_for_cores ? job : nullptr;
  }
  return nullptr;
}

}  // namespace

std::vector<scheduler::PreemptionCandidate> JobManager::preemption_candidates() const {
  // How long a gang has run (the minimum run time, the youngest first) is measured on the monotonic
  // clock, so a step of the wall clock neither exposes a job early nor shields it; the pure decision
  // reads it as a start that long before the wall clock's `now`.
  const TimePoint now = clock_.system_now();
  const MonoTime mono_now = clock_.monotonic_now();
  std::vector<scheduler::PreemptionCandidate> candidates;
  for (const auto& [id, active] : attempts_.all()) {
    const Attempt& record = active.record;
    const Job* job = active_job(record.job_id);
    // Only running gangs: one still starting has nothing to save yet and may be on its way out.
    if (!job || active.stopping() || job->state != JobState::running || job->stopping_to != StopIntent::none) continue;
    scheduler::PreemptionCandidate c;
    c.job = job->id;
    c.share = job->spec.share;
    c.priority = job->spec.priority;
    for (const auto& node : record.nodes) c.nodes.push_back({node, record.cores_per_node});
    c.started_at = now - (mono_now - active.running_since);
    const std::int64_t resumed_at = record.resumed_from ? checkpoint::step_of(*record.resumed_from).value_or(0) : 0;
    c.steps_lost = std::max<std::int64_t>(0, record.last_step - std::max(resumed_at, active.newest_checkpoint_step));
    candidates.push_back(std::move(c));
  }
  return candidates;
}

void JobManager::consider_preemption() {
  if (!config_.preemption.enabled || !preempting_.empty()) return;
  const Job* waiting = job_to_make_room_for(scheduler_, *this);
  if (!waiting) return;
  const TimePoint now = clock_.system_now();
  const auto standings = scheduler::share_standings(scheduler_.shares(now));
  // Room only where the waiting job could run: a node the scheduler gives no work (short of disk, a
  // spare, under a check) or one that failed this job is no reason to stop anybody.
  std::vector<scheduler::NodeRoom> room;
  room.reserve(nodes_.size());
  for (const auto& [name, entry] : nodes_.entries()) {
    const bool excluded = std::find(waiting->excluded_nodes.begin(), waiting->excluded_nodes.end(), name) !=
                          waiting->excluded_nodes.end();
    room.push_back({name, entry.node.cores, entry.free_cores(), entry.channel != nullptr && nodes_.takes_work(entry) && !excluded});
  }
  const scheduler::PreemptionRequest request{waiting->id, waiting->spec.share, waiting->spec.priority, waiting->spec.nodes,
                                             waiting->spec.cores_per_node};
  const auto plan =
      scheduler::plan_preemption(request, preemption_candidates(), room, standings, config_.preemption, now);
  if (!plan) return;
  spdlog::warn("event=preemption_planned job={} victims={} reason=\"{}\"", waiting->id, plan->victims.size(), plan->reason);
  store::Change announced;
  announced.events.push_back(job_event(now, "job.waiting_on_preemption", *waiting, std::nullopt, "", plan->reason,
                                       {{"victims", plan->victims}}));
  const std::string why = "preempted for job " + job_ref_text(*waiting) + " of share " + waiting->spec.share;
  for (JobId victim : plan->victims) {
    auto it = active_jobs_.find(victim);
    if (it == active_jobs_.end()) continue;
    preempting_.insert(victim);
    stop_to_queue_again(it->second, StopIntent::preempt, why, std::move(announced), nullptr);
    announced = store::Change{};
  }
}

}  // namespace trainyard::daemon
