#pragma once
// Runs health checks over agents (docs/DESIGN.md "Health checks"): the accelerator suite on each node, then the
// collective suite over the set, then, when a run over 3 or more nodes failed or was slow, the
// pair tests of healthcheck/localisation.h round by round, so the verdict names the bad node
// instead of blaming all. The verdicts themselves are the health library's pure functions; this
// class only sends suites, gathers results and times out agents that do not answer.
//
// A node that does not answer a suite within `task_timeout` is UNHEALTHY (a hung agent is no place
// for work). A node that answers "busy" (the accelerator suite needs idle cores) is not judged.
// Nodes found UNHEALTHY by the accelerator suite are left out of the collective suite. A node's
// accelerator speed is judged against its own cores and against the other nodes' latest speeds.
// Pair tests are compared within groups of at most `group_size` nodes, so a check's rounds, messages
// and memory grow with the group, not with the set.
//
// Nothing is sent that the agent's parser would refuse (proto's bounds_error: ranks, world size,
// peers): a collective suite over more than kMaxRanks nodes, or a message out of bounds, is not
// sent at all, and the check ends FAILED with `error` saying why, judging no node by it.
//
// Threading contract: I/O thread only.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "healthcheck/localisation.h"
#include "healthcheck/suite_options.h"
#include "healthcheck/verdict.h"
#include "proto/messages.h"
#include "proto/timers.h"

namespace trainyard::daemon {

enum class HealthCheckKind { registration, on_demand, preflight, periodic, undrain, after_stuck, after_canary, warm_spare, after_straggler };
std::string to_string(HealthCheckKind k);

// Checks that are there to find bad nodes compare pairs of nodes when they test at least this many:
// in a ring every rank waits for the slowest link, so a ring's own verdict cannot name anyone.
inline constexpr std::size_t kPairTestNodes = 3;

struct HealthCheckRequest {
  HealthCheckKind kind = HealthCheckKind::on_demand;
  std::vector<std::string> nodes;
  bool accelerator = true;
  bool collective = true;
  std::string requested_by;  // user, or "daemon"
};

struct HealthCheckConfig {
  healthcheck::AcceleratorSuiteOptions accelerator;
  healthcheck::CollectiveSuiteOptions collective;
  healthcheck::CollectivePolicy policy;
  healthcheck::AcceleratorPolicy accelerator_policy;  // its fleet figure is the checks' own (below)
  Millis task_timeout{60000};
  std::size_t group_size = 16;  // pair tests compare nodes within groups of at most this many
};

struct HealthCheckResult {
  std::int64_t id = 0;
  HealthCheckRequest request;
  TimePoint created_at{};
  std::optional<TimePoint> finished_at;
  std::map<std::string, healthcheck::AcceleratorReport> accelerator;
  std::map<std::string, std::string> errors;           // node -> why it has no result
  std::vector<healthcheck::CollectiveRun> collective_runs;  // the whole set first, then follow-up tests
  healthcheck::CollectivePolicy policy;                     // what the runs were judged by
  std::vector<healthcheck::NodeVerdict> verdicts;           // final; one per judged node, request order
  std::string error;  // why the check itself could not go on (a message it refused to send); empty: none
  bool passed() const;                                 // finished, no error, and every verdict HEALTHY
  std::vector<std::string> failed_nodes() const;       // verdict not HEALTHY
};
Json to_json(const HealthCheckResult& r);

// One node's part of a finished check, as its health history keeps it.
Json node_health_record(const HealthCheckResult& r, const std::string& node);

class HealthChecks {
 public:
  using Send = std::function<bool(const std::string& node, const DaemonMessage& message)>;
  using DataAddr = std::function<std::optional<std::string>(const std::string& node)>;
  using Done = std::function<void(const HealthCheckResult&)>;

  HealthChecks(const TimeSource& clock, Timers& timers, HealthCheckConfig config, Send send, DataAddr data_addr);

  // Starts a check; `done` runs once with the finished result. Ids continue after `first_id`.
  std::int64_t start(HealthCheckRequest request, Done done);
  void on_result(const std::string& node, const HealthResultMsg& msg);
  // The node's agent is gone (disconnected past the grace): its outstanding tasks end now with
  // `why` as their error, as the task timeout would have ended them a minute later.
  void node_gone(const std::string& node, const std::string& why);
  // A running or finished check of this daemon's life (finished ones are also in the store).
  const HealthCheckResult* find(std::int64_t id) const;
  bool running_on(const std::string& node) const;
  void continue_ids_after(std::int64_t stored_max) { next_check_ = std::max(next_check_, stored_max + 1); }
  const HealthCheckConfig& config() const { return config_; }

 private:
  enum class Phase { accelerator, collective, localisation };
  struct Task {
    std::int64_t check = 0;
    std::string node;
    std::size_t run = 0;  // collective phases: index into collective_runs
    int rank = 0;
  };
  struct Running {
    HealthCheckResult result;
    Done done;
    Phase phase = Phase::accelerator;
    int outstanding = 0;
    std::map<std::string, healthcheck::NodeVerdict> verdicts;  // merged so far (worst wins)
    healthcheck::LocalisationPlan plan;
    std::size_t round = 0;
    std::int64_t sessions = 0;  // data-plane sessions started: each run gets its own
    int interfered_runs = 0;    // of the whole set's run, judged as interfered with
  };

  void send_task(Running& check, std::string node, HealthCheckMsg msg, std::size_t run, int rank);
  void task_done(std::int64_t task_id, const std::string& node, const HealthResultMsg& msg);
  void advance(Running& check);
  // False (and nothing sent) when a set's messages would break the protocol's bounds: the check's
  // error says why.
  bool start_collective_sets(Running& check, const std::vector<std::vector<std::string>>& sets);
  void refuse(Running& check, std::string why);
  void judge_accelerator_phase(Running& check);
  void judge_collective_phase(Running& check);
  void merge(Running& check, const healthcheck::NodeVerdict& verdict);
  void finish(Running& check);
  // The median of the other nodes' latest speeds, once there are at least two to compare with.
  std::optional<double> fleet_gemm_ms(const std::string& except) const;

  const TimeSource& clock_;
  Timers& timers_;
  HealthCheckConfig config_;
  Send send_;
  DataAddr data_addr_;
  std::map<std::int64_t, Running> running_;
  std::map<std::int64_t, HealthCheckResult> finished_;  // the last few, for GET while the store catches up
  std::map<std::int64_t, Task> tasks_;
  std::map<std::string, int> checking_;          // node -> running checks that include it (running_on)
  std::map<std::string, double> node_gemm_ms_;  // each node's latest accelerator speed (this daemon's life)
  std::int64_t next_check_ = 1;
  std::int64_t next_task_ = 1;
};

}  // namespace trainyard::daemon
