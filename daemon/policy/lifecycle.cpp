#include "daemon/policy/lifecycle.h"

#include <array>
#include <stdexcept>
#include <string>

namespace trainyard::daemon {
namespace {

template <class State, class Event>
struct Rule {
  State from;
  Event event;
  State next;
  std::string_view event_type;
};

using J = JobState;
using JE = JobEvent;
// An attempt's end moves its job whether it had reached RUNNING or not (a gang that fails, is
// cancelled or stopped to queue again while its ranks start, or a simulated job that reached its
// last step as its requeue's stop arrived).
constexpr std::array kJobRules = {
    Rule<J, JE>{J::pending, JE::placed, J::starting, ""},  // the attempt's start is the event
    Rule<J, JE>{J::pending, JE::cancelled, J::cancelled, "job.cancelled"},
    Rule<J, JE>{J::starting, JE::ranks_started, J::running, "job.started"},
    Rule<J, JE>{J::starting, JE::retried, J::pending, "job.retrying"},
    Rule<J, JE>{J::starting, JE::requeued, J::pending, "job.requeued"},
    Rule<J, JE>{J::starting, JE::preempted, J::pending, "job.preempted"},
    Rule<J, JE>{J::starting, JE::succeeded, J::succeeded, "job.succeeded"},
    Rule<J, JE>{J::starting, JE::failed, J::failed, "job.failed"},
    Rule<J, JE>{J::starting, JE::cancelled, J::cancelled, "job.cancelled"},
    Rule<J, JE>{J::running, JE::retried, J::pending, "job.retrying"},
    Rule<J, JE>{J::running, JE::requeued, J::pending, "job.requeued"},
    Rule<J, JE>{J::running, JE::preempted, J::pending, "job.preempted"},
    Rule<J, JE>{J::running, JE::succeeded, J::succeeded, "job.succeeded"},
    Rule<J, JE>{J::running, JE::failed, J::failed, "job.failed"},
    Rule<J, JE>{J::running, JE::cancelled, J::cancelled, "job.cancelled"},
};

using A = AttemptState;
using AE = AttemptEvent;
// An attempt stores no events of its own: its job's transition speaks for it.
constexpr std::array kAttemptRules = {
    Rule<A, AE>{A::starting, AE::ranks_started, A::running, ""},
    Rule<A, AE>{A::starting, AE::succeeded, A::succeeded, ""},
    Rule<A, AE>{A::starting, AE::failed, A::failed, ""},
    Rule<A, AE>{A::starting, AE::cancelled, A::cancelled, ""},
    Rule<A, AE>{A::starting, AE::requeued, A::requeued, ""},
    Rule<A, AE>{A::starting, AE::preempted, A::preempted, ""},
    Rule<A, AE>{A::running, AE::succeeded, A::succeeded, ""},
    Rule<A, AE>{A::running, AE::failed, A::failed, ""},
    Rule<A, AE>{A::running, AE::cancelled, A::cancelled, ""},
    Rule<A, AE>{A::running, AE::requeued, A::requeued, ""},
    Rule<A, AE>{A::running, AE::preempted, A::preempted, ""},
};

using N = NodeState;
using NE = NodeEvent;
// A node's registration and undrain store their own events (node.registered, node.undrained) with
// more to say than a state; a health check on a drained or down node is recorded and moves nothing
// (the operator's drain, or the node's absence, rules). A check that finds a node as it was makes no
// node event (its healthcheck.finished says it ran): only a change of state is news, so a webhook on
// node.* hears changes and recoveries, not every passing check.
constexpr std::array kNodeRules = {
    Rule<N, NE>{N::healthy, NE::registered, N::healthy, ""},  // a new node's first state
    Rule<N, NE>{N::down, NE::registered, N::healthy, ""},
    Rule<N, NE>{N::healthy, NE::registered_unproven, N::suspect, ""},
    Rule<N, NE>{N::suspect, NE::registered_unproven, N::suspect, ""},
    Rule<N, NE>{N::unhealthy, NE::registered_unproven, N::suspect, ""},
    Rule<N, NE>{N::down, NE::registered_unproven, N::suspect, ""},
    Rule<N, NE>{N::healthy, NE::lost, N::down, "node.down"},
    Rule<N, NE>{N::suspect, NE::lost, N::down, "node.down"},
    Rule<N, NE>{N::unhealthy, NE::lost, N::down, "node.down"},
    Rule<N, NE>{N::drained, NE::lost, N::down, "node.down"},
    Rule<N, NE>{N::healthy, NE::drained, N::drained, "node.drained"},
    Rule<N, NE>{N::suspect, NE::drained, N::drained, "node.drained"},
    Rule<N, NE>{N::unhealthy, NE::drained, N::drained, "node.drained"},
    Rule<N, NE>{N::drained, NE::drained, N::drained, "node.drained"},  // a new reason
    Rule<N, NE>{N::down, NE::drained, N::drained, "node.drained"},
    Rule<N, NE>{N::drained, NE::undrained, N::healthy, "node.undrained"},
    Rule<N, NE>{N::suspect, NE::undrained_unproven, N::suspect, "node.undrained"},
    Rule<N, NE>{N::unhealthy, NE::undrained_unproven, N::suspect, "node.undrained"},
    Rule<N, NE>{N::healthy, NE::suspected, N::suspect, "node.suspect"},
    Rule<N, NE>{N::suspect, NE::disk_recovered, N::healthy, "node.healthy"},
    Rule<N, NE>{N::healthy, NE::check_passed, N::healthy, ""},
    Rule<N, NE>{N::suspect, NE::check_passed, N::healthy, "node.healthy"},
    Rule<N, NE>{N::unhealthy, NE::check_passed, N::healthy, "node.healthy"},
    Rule<N, NE>{N::drained, NE::check_passed, N::drained, ""},
    Rule<N, NE>{N::down, NE::check_passed, N::down, ""},
    Rule<N, NE>{N::healthy, NE::check_suspect, N::suspect, "node.suspect"},
    Rule<N, NE>{N::suspect, NE::check_suspect, N::suspect, ""},
    Rule<N, NE>{N::unhealthy, NE::check_suspect, N::suspect, "node.suspect"},
    Rule<N, NE>{N::drained, NE::check_suspect, N::drained, ""},
    Rule<N, NE>{N::down, NE::check_suspect, N::down, ""},
    Rule<N, NE>{N::healthy, NE::check_unhealthy, N::unhealthy, "node.unhealthy"},
    Rule<N, NE>{N::suspect, NE::check_unhealthy, N::unhealthy, "node.unhealthy"},
    Rule<N, NE>{N::unhealthy, NE::check_unhealthy, N::unhealthy, ""},
    Rule<N, NE>{N::drained, NE::check_unhealthy, N::drained, ""},
    Rule<N, NE>{N::down, NE::check_unhealthy, N::down, ""},
};

using P = AttemptPhase;
using S = AttemptStep;
// The pre-flight starts with the attempt, before its resume point is chosen (begin_attempt); a
// pre-flight skipped (a resume on survivors and warm nodes, a single node) never starts.
constexpr std::array kPhaseRules = {
    Rule<P, S>{P::choosing_resume, S::preflight_started, P::choosing_resume_and_preflight, ""},
    Rule<P, S>{P::choosing_resume, S::resume_chosen, P::launching, ""},
    Rule<P, S>{P::choosing_resume_and_preflight, S::resume_chosen, P::preflight, ""},
    Rule<P, S>{P::choosing_resume_and_preflight, S::preflight_done, P::choosing_resume, ""},
    Rule<P, S>{P::preflight, S::preflight_done, P::launching, ""},
    Rule<P, S>{P::launching, S::stuck_nodes_test_started, P::testing_stuck_nodes, ""},
};

template <class State, class Event, std::size_t N>
std::optional<Transition<State>> look_up(const std::array<Rule<State, Event>, N>& rules, State from, Event event) {
  for (const auto& rule : rules) {
    if (rule.from == from && rule.event == event) return Transition<State>{rule.next, rule.event_type};
  }
  return std::nullopt;
}

template <class State, class Event>
Transition<State> take(State& state, Event event, std::optional<Transition<State>> transition, std::string_view machine) {
  if (!transition) {
    throw std::logic_error(std::string(machine) + " lifecycle: " + std::string(to_string(event)) + " cannot happen to a " +
                           std::string(to_string(state)) + " " + std::string(machine));
  }
  state = transition->next;
  return *transition;
}

}  // namespace

std::optional<Transition<JobState>> job_transition(JobState from, JobEvent event) { return look_up(kJobRules, from, event); }
std::optional<Transition<AttemptState>> attempt_transition(AttemptState from, AttemptEvent event) {
  return look_up(kAttemptRules, from, event);
}
std::optional<Transition<NodeState>> node_transition(NodeState from, NodeEvent event) {
  return look_up(kNodeRules, from, event);
}
std::optional<AttemptPhase> attempt_phase_after(AttemptPhase from, AttemptStep step) {
  const auto found = look_up(kPhaseRules, from, step);
  return found ? std::optional(found->next) : std::nullopt;
}

std::optional<NodeEvent> check_event(NodeState verdict) {
  switch (verdict) {
    case NodeState::healthy: return NodeEvent::check_passed;
    case NodeState::suspect: return NodeEvent::check_suspect;
    case NodeState::unhealthy: return NodeEvent::check_unhealthy;
    case NodeState::drained:
    case NodeState::down: return std::nullopt;
  }
  return std::nullopt;
}

std::string_view to_string(JobEvent event) {
  switch (event) {
    case JobEvent::placed: return "placed";
    case JobEvent::ranks_started: return "ranks_started";
    case JobEvent::retried: return "retried";
    case JobEvent::requeued: return "requeued";
    case JobEvent::preempted: return "preempted";
    case JobEvent::succeeded: return "succeeded";
    case JobEvent::failed: return "failed";
    case JobEvent::cancelled: return "cancelled";
  }
  return "?";
}

std::string_view to_string(AttemptEvent event) {
  switch (event) {
    case AttemptEvent::ranks_started: return "ranks_started";
    case AttemptEvent::succeeded: return "succeeded";
    case AttemptEvent::failed: return "failed";
    case AttemptEvent::cancelled: return "cancelled";
    case AttemptEvent::requeued: return "requeued";
    case AttemptEvent::preempted: return "preempted";
  }
  return "?";
}

std::string_view to_string(NodeEvent event) {
  switch (event) {
    case NodeEvent::registered: return "registered";
    case NodeEvent::registered_unproven: return "registered_unproven";
    case NodeEvent::lost: return "lost";
    case NodeEvent::drained: return "drained";
    case NodeEvent::undrained: return "undrained";
    case NodeEvent::undrained_unproven: return "undrained_unproven";
    case NodeEvent::suspected: return "suspected";
    case NodeEvent::disk_recovered: return "disk_recovered";
    case NodeEvent::check_passed: return "check_passed";
    case NodeEvent::check_suspect: return "check_suspect";
    case NodeEvent::check_unhealthy: return "check_unhealthy";
  }
  return "?";
}

std::string_view to_string(AttemptPhase phase) {
  switch (phase) {
    case AttemptPhase::choosing_resume: return "choosing_resume";
    case AttemptPhase::choosing_resume_and_preflight: return "choosing_resume_and_preflight";
    case AttemptPhase::preflight: return "preflight";
    case AttemptPhase::launching: return "launching";
    case AttemptPhase::testing_stuck_nodes: return "testing_stuck_nodes";
  }
  return "?";
}

std::string_view to_string(AttemptStep step) {
  switch (step) {
    case AttemptStep::preflight_started: return "preflight_started";
    case AttemptStep::resume_chosen: return "resume_chosen";
    case AttemptStep::preflight_done: return "preflight_done";
    case AttemptStep::stuck_nodes_test_started: return "stuck_nodes_test_started";
  }
  return "?";
}

Transition<JobState> change_state(JobState& state, JobEvent event) {
  return take(state, event, job_transition(state, event), "job");
}
Transition<AttemptState> change_state(AttemptState& state, AttemptEvent event) {
  return take(state, event, attempt_transition(state, event), "attempt");
}
Transition<NodeState> change_state(NodeState& state, NodeEvent event) {
  return take(state, event, node_transition(state, event), "node");
}
AttemptPhase change_phase(AttemptPhase& phase, AttemptStep step) {
  return take(phase, step, look_up(kPhaseRules, phase, step), "attempt phase").next;
}

}  // namespace trainyard::daemon
