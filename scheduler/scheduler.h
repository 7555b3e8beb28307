#pragma once
// The scheduler: fair-share ordering, gang placement and EASY backfill (docs/DESIGN.md "Scheduler").
//
// Assumptions. The daemon owns the truth and feeds this object every change as an event (shares,
// nodes, pending jobs, work that holds cores); time is always an argument; nothing here does I/O,
// reads a clock, or starts a thread, so the same events give the same decisions.
//
// Fair share. Usage is core-seconds held, decayed with a half-life. A share's factor is
// F = 2^(-U/S) (U its usage over all usage, S its weight over the weights of shares with work).
// A job's EXPECTED usage (cores x min(timeout, default horizon)) is charged the moment it starts
// and trued up as it runs and ends, so a share that submits a burst sees its factor fall with each
// job it starts, within the same pass. Jobs are taken in order of highest F, then priority, then
// submit time, then id: a pass merges the shares' sorted queues through a heap keyed on
// usage/weight (same order as F) and re-keys a share after each start. The system share (canaries)
// is always taken first; its jobs start when they fit but never reserve, so a canary never idles
// the cluster.
//
// Gang placement. All nodes at once, on accepting nodes with enough free cores (whole nodes when
// cores_per_node is absent), best fit, one placement group (label) for multi-node jobs when
// possible, avoiding nodes that failed the job before; see placement.h.
//
// Backfill (EASY). The first job in order that does not fit gets a reservation: the earliest time
// at which, walking the expected ends of running work (start + timeout_s; start + the default
// horizon when there is none), it fits, and the nodes it would take then. A later job may start
// now only if it fits now and cannot delay that: it has a timeout_s that ends by the reservation,
// or it fits on cores the reserved job will not need even when it keeps them past the
// reservation. A job without timeout_s can never prove the first, so it only ever takes cores the
// reserved job does not need: a stream of small jobs cannot starve a wide one.
//
// Limits. Optionally a fraction of all cores is kept free for shares with no running work (AWS
// Batch's compute reservation), and a share may have a cap on running cores.
//
// Cost. A pass looks at no more than `max_jobs_examined` jobs and stops as soon as no pending
// shape can fit anywhere; jobs it did not look at get their reason on demand from what the pass
// left (`why_pending`), so a pass over 100,000 pending jobs on a full cluster is cheap.
//
// Threading: not thread-safe; one owner (the daemon's scheduling strand) calls everything.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/types.h"

namespace trainyard::scheduler {

namespace detail {
struct State;
}

class Scheduler {
 public:
  explicit Scheduler(Config config);  // throws InvalidInput for a bad config
  ~Scheduler();
  Scheduler(Scheduler&&) noexcept;
  Scheduler& operator=(Scheduler&&) noexcept;

  const Config& config() const;

  // Shares are also created, with weight 1, by the first job or usage that names them.
  void set_share(const std::string& name, const ShareSettings& settings);  // throws InvalidInput
  // Drops a share with no pending or running work from the table, its usage with it; false (and
  // nothing changed) while it has work. A job or set_share naming it later makes it anew.
  bool forget_share(const std::string& name);

  void upsert_node(const NodeInfo& node);
  void remove_node(const std::string& name);  // work still holding its cores is released by `finish`

  // A job that is pending, new or changed (dependencies met, backoff set, nodes excluded).
  void queue(const PendingJob& job);
  // A pending job that is no longer pending for a reason other than `schedule` starting it.
  void remove(JobId job);

  // Work that holds cores without this scheduler having started it (rebuilding after a restart).
  // A job started by `schedule` already holds its cores.
  void start_running(const RunningJob& job, TimePoint now);
  // The job's attempt ended (or was never launched): its cores are free and its usage is trued up.
  void finish(JobId job, TimePoint now);

  // Persistence of decayed usage: export periodically, import at start-up before the running work.
  std::vector<UsageRecord> export_usage(TimePoint now);
  void import_usage(const UsageRecord& record);

  // One pass: decides, and commits, which pending jobs start now and where.
  PassResult schedule(TimePoint now);

  // For a pending job: why it has not started, as of the last pass; nullopt if not pending here.
  std::optional<PendingReason> why_pending(JobId job) const;
  // 1-based position among jobs that could start (not held by dependency or backoff), in the order
  // shares had after the last pass; nullopt if the job is not in that queue.
  std::optional<int> queue_position(JobId job) const;
  // That queue itself, `limit` jobs from the 0-based `offset` (position offset + 1 first), and its length.
  std::vector<JobId> queue_page(std::size_t offset, std::size_t limit) const;
  std::size_t queue_length() const;
  // The share table, with usage decayed to `now`.
  std::vector<ShareRow> shares(TimePoint now) const;

  bool is_pending(JobId job) const;
  bool is_running(JobId job) const;

 private:
  std::unique_ptr<detail::State> state_;
};

}  // namespace trainyard::scheduler
