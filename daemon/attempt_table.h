#pragma once
// The attempts in flight, as the job manager tracks them: each active attempt with its ranks, the
// attempt that is each job's current one, and the nodes that survived a job's last attempt (its
// resume need not pre-flight them, recovery.h). Fencing asks it: a node speaks only for the rank it
// holds in an attempt still here (`rank_on`); whatever else it reports is fenced off. No I/O.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/policy/lifecycle.h"
#include "daemon/provenance.h"
#include "daemon/rank_state.h"
#include "daemon/policy/straggler_rule.h"
#include "proto/job.h"
#include "proto/time.h"

namespace trainyard::daemon {

// Why the daemon stops an attempt: what its end is judged by (attempt_end.h).
enum class StopCause {
  requested,       // a rank failed or was lost, a cancel, a stop to queue again, a hang
  timed_out,       // it ran longer than its timeout_s
  quota_exceeded,  // it stayed over its storage quota past the grace
};
struct AttemptStop {
  StopCause cause = StopCause::requested;
  std::string reason;  // told to its ranks with the kill
};

struct ActiveAttempt {
  explicit ActiveAttempt(Attempt attempt)
      : record(std::move(attempt)), ranks(record.nodes.size()), stragglers(record.nodes.size()) {}
  Attempt record;
  std::vector<RankState> ranks;  // rank r runs on record.nodes[r]
  AttemptPhase phase = AttemptPhase::choosing_resume;
  std::optional<AttemptStop> stop;  // set once the daemon sent its ranks a kill
  // The rank that failed first speaks for the attempt: the others mostly die of the kill it caused.
  int first_failed_rank = -1;
  std::vector<int> stuck_ranks;  // named by the stuck diagnosis, if it was stopped as stuck
  StragglerWatch stragglers;     // its ranks' work per step, compared (daemon/policy/straggler_rule.h)
  std::vector<std::string> failed_checks;    // "node failed health check N: ..." for the nodes it hung on
  MonoTime running_since{};                  // record.started_at on the monotonic clock, for its timeout
  std::optional<ResumedCheckpoint> resumed;  // the checkpoint a retry resumes from (provenance)
  std::int64_t newest_checkpoint_step = 0;   // the newest it reported: where a retry resumes
  std::string unjudged_preflight;            // why its failed pre-flight judged no node (interfered with)

  bool stopping() const { return stop.has_value(); }
  bool stopped_for(StopCause cause) const { return stop && stop->cause == cause; }
  bool all_exited() const;
  // The rank `node` runs, or -1.
  int rank_of(const std::string& node) const;
};

class AttemptTable {
 public:
  // Tracks the attempt as its job's current one (replacing one restored under the same id).
  ActiveAttempt& add(ActiveAttempt attempt);
  ActiveAttempt* find(AttemptId id);
  const ActiveAttempt* find(AttemptId id) const;
  ActiveAttempt* current(JobId job);
  std::optional<AttemptId> current_id(JobId job) const;
  // The attempt ended: no longer tracked, and no longer its job's current one.
  void remove(AttemptId id);

  struct RankOn {
    ActiveAttempt* attempt = nullptr;
    int rank = -1;
  };
  // The attempt `id` and the rank `node` runs in it; nullopt when either is not (or no longer) so:
  // what the node reports of it is fenced off.
  std::optional<RankOn> rank_on(AttemptId id, const std::string& node);

  std::map<AttemptId, ActiveAttempt>& all() { return attempts_; }
  const std::map<AttemptId, ActiveAttempt>& all() const { return attempts_; }
  std::size_t size() const { return attempts_.size(); }

  // The nodes that ran the job's last attempt to an infrastructure failure (or a straggler's
  // replacement) without failing it.
  void set_survivors(JobId job, std::vector<std::string> nodes);
  const std::vector<std::string>* survivors(JobId job) const;
  // Its resume took them (or the job went): they are survivors no more.
  void forget_survivors(JobId job);
  // Every job's survivors: they wait for their job's resume.
  std::set<std::string_view> survivor_nodes() const;
  // The jobs whose survivors wait for their resume.
  std::vector<JobId> resuming_jobs() const;

 private:
  std::map<AttemptId, ActiveAttempt> attempts_;
  std::map<JobId, AttemptId> current_;
  std::map<JobId, std::vector<std::string>> survivors_;
};

}  // namespace trainyard::daemon
