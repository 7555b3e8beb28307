// Walks every (state, event) pair of the job, attempt and node lifecycles (daemon/policy/lifecycle.h): the
// expected grid below is the lifecycle as docs/DESIGN.md "Lifecycles" states it, one row per state,
// one column per event ("-": cannot happen), so a change to a table is a change to this grid too.
#include "daemon/policy/lifecycle.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace trainyard::daemon {
namespace {

constexpr std::array kJobStates = {JobState::pending,   JobState::starting, JobState::running,
                                   JobState::succeeded, JobState::failed,   JobState::cancelled};
constexpr std::array kJobEvents = {JobEvent::placed,    JobEvent::ranks_started, JobEvent::retried, JobEvent::requeued,
                                   JobEvent::preempted, JobEvent::succeeded,     JobEvent::failed,  JobEvent::cancelled};
constexpr std::array kAttemptStates = {AttemptState::starting,  AttemptState::running,  AttemptState::succeeded,
                                       AttemptState::failed,    AttemptState::cancelled, AttemptState::requeued,
                                       AttemptState::preempted};
constexpr std::array kAttemptEvents = {AttemptEvent::ranks_started, AttemptEvent::succeeded, AttemptEvent::failed,
                                       AttemptEvent::cancelled,     AttemptEvent::requeued,  AttemptEvent::preempted};
constexpr std::array kNodeStates = {NodeState::healthy, NodeState::suspect, NodeState::unhealthy, NodeState::drained,
                                    NodeState::down};
constexpr std::array kNodeEvents = {NodeEvent::registered,      NodeEvent::registered_unproven, NodeEvent::lost,
                                    NodeEvent::drained,         NodeEvent::undrained,           NodeEvent::undrained_unproven,
                                    NodeEvent::suspected,       NodeEvent::disk_recovered,      NodeEvent::check_passed,
                                    NodeEvent::check_suspect,   NodeEvent::check_unhealthy};

// Each pair's outcome as "NEXT_STATE event.type" ("NEXT_STATE" alone when it stores no event of its
// own), or "-".
template <class State, class Event, std::size_t S, std::size_t E>
std::vector<std::vector<std::string>> walk(const std::array<State, S>& states, const std::array<Event, E>& events) {
  std::vector<std::vector<std::string>> grid;
  for (const State from : states) {
    std::vector<std::string> row;
    for (const Event event : events) {
      State state = from;
      try {
        const Transition<State> taken = change_state(state, event);
        EXPECT_EQ(state, taken.next) << "change_state moves the state where the table says";
        row.push_back(to_string(taken.next) + (taken.event_type.empty() ? "" : " " + std::string(taken.event_type)));
      } catch (const std::logic_error& e) {
        EXPECT_EQ(state, from) << "a refused event leaves the state alone";
        const std::string said = e.what();
        EXPECT_NE(said.find(std::string(to_string(event))), std::string::npos) << said;
        EXPECT_NE(said.find(to_string(from)), std::string::npos) << said;
        row.push_back("-");
      }
    }
    grid.push_back(std::move(row));
  }
  return grid;
}

TEST(LifecycleTables, EveryJobStateAndEvent) {
  // placed, ranks_started, retried, requeued, preempted, succeeded, failed, cancelled
  const std::vector<std::vector<std::string>> expected = {
      {"STARTING", "-", "-", "-", "-", "-", "-", "CANCELLED job.cancelled"},
      {"-", "RUNNING job.started", "PENDING job.retrying", "PENDING job.requeued", "PENDING job.preempted",
       "SUCCEEDED job.succeeded", "FAILED job.failed", "CANCELLED job.cancelled"},
      {"-", "-", "PENDING job.retrying", "PENDING job.requeued", "PENDING job.preempted", "SUCCEEDED job.succeeded",
       "FAILED job.failed", "CANCELLED job.cancelled"},
      {"-", "-", "-", "-", "-", "-", "-", "-"},
      {"-", "-", "-", "-", "-", "-", "-", "-"},
      {"-", "-", "-", "-", "-", "-", "-", "-"},
  };
  EXPECT_EQ(walk(kJobStates, kJobEvents), expected);
}

TEST(LifecycleTables, EveryAttemptStateAndEvent) {
  // ranks_started, succeeded, failed, cancelled, requeued, preempted
  const std::vector<std::string> ended(kAttemptEvents.size(), "-");
  const std::vector<std::vector<std::string>> expected = {
      {"RUNNING", "SUCCEEDED", "FAILED", "CANCELLED", "REQUEUED", "PREEMPTED"},
      {"-", "SUCCEEDED", "FAILED", "CANCELLED", "REQUEUED", "PREEMPTED"},
      ended, ended, ended, ended, ended,
  };
  EXPECT_EQ(walk(kAttemptStates, kAttemptEvents), expected);
}

TEST(LifecycleTables, EveryNodeStateAndEvent) {
  // registered, registered_unproven, lost, drained, undrained, undrained_unproven, suspected,
  // disk_recovered, check_passed, check_suspect, check_unhealthy
  const std::vector<std::vector<std::string>> expected = {
      {"HEALTHY", "SUSPECT", "DOWN node.down", "DRAINED node.drained", "-", "-", "SUSPECT node.suspect", "-",
       "HEALTHY", "SUSPECT node.suspect", "UNHEALTHY node.unhealthy"},
      {"-", "SUSPECT", "DOWN node.down", "DRAINED node.drained", "-", "SUSPECT node.undrained", "-",
       "HEALTHY node.healthy", "HEALTHY node.healthy", "SUSPECT", "UNHEALTHY node.unhealthy"},
      {"-", "SUSPECT", "DOWN node.down", "DRAINED node.drained", "-", "SUSPECT node.undrained", "-", "-",
       "HEALTHY node.healthy", "SUSPECT node.suspect", "UNHEALTHY"},
      {"-", "-", "DOWN node.down", "DRAINED node.drained", "HEALTHY node.undrained", "-", "-", "-", "DRAINED", "DRAINED",
       "DRAINED"},
      {"HEALTHY", "SUSPECT", "-", "DRAINED node.drained", "-", "-", "-", "-", "DOWN", "DOWN", "DOWN"},
  };
  EXPECT_EQ(walk(kNodeStates, kNodeEvents), expected);
}

TEST(LifecycleTables, EveryAttemptPhaseAndStep) {
  constexpr std::array kPhases = {AttemptPhase::choosing_resume, AttemptPhase::choosing_resume_and_preflight,
                                  AttemptPhase::preflight, AttemptPhase::launching, AttemptPhase::testing_stuck_nodes};
  constexpr std::array kSteps = {AttemptStep::preflight_started, AttemptStep::resume_chosen, AttemptStep::preflight_done,
                                 AttemptStep::stuck_nodes_test_started};
  std::vector<std::vector<std::string>> grid;
  for (const AttemptPhase from : kPhases) {
    std::vector<std::string> row;
    for (const AttemptStep step : kSteps) {
      AttemptPhase phase = from;
      try {
        row.emplace_back(to_string(change_phase(phase, step)));
        EXPECT_EQ(phase, attempt_phase_after(from, step));
      } catch (const std::logic_error& e) {
        EXPECT_EQ(phase, from) << e.what();
        EXPECT_FALSE(attempt_phase_after(from, step));
        row.emplace_back("-");
      }
    }
    grid.push_back(std::move(row));
  }
  // preflight_started, resume_chosen, preflight_done, stuck_nodes_test_started
  const std::vector<std::vector<std::string>> expected = {
      {"choosing_resume_and_preflight", "launching", "-", "-"},
      {"-", "preflight", "choosing_resume", "-"},
      {"-", "-", "launching", "-"},
      {"-", "-", "-", "testing_stuck_nodes"},
      {"-", "-", "-", "-"},
  };
  EXPECT_EQ(grid, expected);
}

// What the grids imply, said once more as rules a reader checks at a glance.
TEST(LifecycleTables, EndedJobsAndAttemptsTakeNoEventAndEveryLiveStateCanEnd) {
  for (const JobState s : kJobStates) {
    const bool ended = s == JobState::succeeded || s == JobState::failed || s == JobState::cancelled;
    bool any = false;
    for (const JobEvent e : kJobEvents) any = any || job_transition(s, e).has_value();
    EXPECT_EQ(any, !ended) << to_string(s);
    if (!ended) {
      EXPECT_TRUE(job_transition(s, JobEvent::cancelled)) << "a live job can always be cancelled: " << to_string(s);
    }
  }
  for (const AttemptState s : kAttemptStates) {
    bool any = false;
    for (const AttemptEvent e : kAttemptEvents) any = any || attempt_transition(s, e).has_value();
    EXPECT_EQ(any, s == AttemptState::starting || s == AttemptState::running) << to_string(s);
  }
  for (const NodeState s : kNodeStates) EXPECT_TRUE(node_transition(s, NodeEvent::drained)) << "any node can be drained";
}

}  // namespace
}  // namespace trainyard::daemon
