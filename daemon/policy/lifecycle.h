#pragma once
// The job, attempt and node lifecycles as tables (docs/DESIGN.md "Lifecycles"): for a state and
// what happened to it, the next state and the type of the event the change stores, or nothing when
// that cannot happen in that state. Every state change goes through `change_state`, so a pair
// outside the table is a bug caught where it is tried (std::logic_error naming both), not a record
// that drifts; the callers check what may happen first (an ended job is not active, a drained
// node's checks change nothing). Pure: walked pair by pair in tests/unit/daemon/lifecycle_test.cpp.
// Anchored on Apache Aurora's TaskStateMachine: rules from state to state.
#include <optional>
#include <string_view>

#include "proto/job.h"
#include "proto/node.h"

namespace trainyard::daemon {

enum class JobEvent {
  placed,         // the scheduler gave it nodes: an attempt begins
  ranks_started,  // every rank of its attempt started
  retried,        // its attempt failed and it goes back to the queue for another
  requeued,       // its attempt was stopped on request, to queue again
  preempted,      // its attempt was stopped for another share's job
  succeeded,
  failed,         // its attempt failed and no retry is left
  cancelled,      // on request (pending, or its running attempt stopped), or a dependency never met
};

enum class AttemptEvent { ranks_started, succeeded, failed, cancelled, requeued, preempted };

// An attempt's phase in the daemon's hands, beside its record's STARTING or RUNNING (which the
// store holds): what it waits for before its launch, and its nodes' check after a hang.
enum class AttemptPhase {
  choosing_resume,                // its checkpoint claimed and its resume point being chosen
  choosing_resume_and_preflight,  // that, with its pre-flight check running alongside
  preflight,                      // its resume point chosen; its pre-flight still running
  launching,                      // both done: launched (or wound up unlaunched, when stopped meanwhile)
  testing_stuck_nodes,            // it hung: its nodes are checked before its end is decided
};

enum class AttemptStep { preflight_started, resume_chosen, preflight_done, stuck_nodes_test_started };

enum class NodeEvent {
  registered,             // its agent said hello and it is trusted without a check
  registered_unproven,    // its agent said hello and a registration check must pass first
  lost,                   // unheard past the node timeout, or its agent never came back
  drained,                // by an operator
  undrained,              // by an operator: a drained node returns to work
  undrained_unproven,     // by an operator: an unhealthy or down node returns after a check
  suspected,              // a job or a heuristic (low disk, a straggler) casts doubt on it
  disk_recovered,         // the low disk space that made it suspect is gone
  check_passed,
  check_suspect,
  check_unhealthy,
};

template <class State>
struct Transition {
  State next;
  std::string_view event_type;  // the event the change stores; empty when it stores none of its own
};

std::optional<Transition<JobState>> job_transition(JobState from, JobEvent event);
std::optional<Transition<AttemptState>> attempt_transition(AttemptState from, AttemptEvent event);
std::optional<Transition<NodeState>> node_transition(NodeState from, NodeEvent event);
std::optional<AttemptPhase> attempt_phase_after(AttemptPhase from, AttemptStep step);

// The event a health check's verdict for a node is: nullopt for a verdict that is no node state
// a check gives (DRAINED, DOWN).
std::optional<NodeEvent> check_event(NodeState verdict);

std::string_view to_string(JobEvent event);
std::string_view to_string(AttemptEvent event);
std::string_view to_string(NodeEvent event);
std::string_view to_string(AttemptPhase phase);
std::string_view to_string(AttemptStep step);

// Moves `state` along the table; throws std::logic_error naming the state and the event when the
// pair is not in it. Returns the transition taken.
Transition<JobState> change_state(JobState& state, JobEvent event);
Transition<AttemptState> change_state(AttemptState& state, AttemptEvent event);
Transition<NodeState> change_state(NodeState& state, NodeEvent event);
AttemptPhase change_phase(AttemptPhase& phase, AttemptStep step);

}  // namespace trainyard::daemon
