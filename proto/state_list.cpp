#include "proto/state_list.h"

#include <algorithm>

#include "proto/errors.h"

namespace trainyard::inline proto {
namespace {

template <class State, class Parse>
std::vector<State> parse_list(std::string_view field, std::string_view text, Parse parse, std::string_view names) {
  std::vector<State> states;
  std::string_view rest = text;
  for (;;) {
    const auto comma = rest.find(',');
    const std::string_view word = rest.substr(0, comma);
    const std::optional<State> state = parse(word);
    if (!state) {
      throw InvalidInput(std::string(field), "must be one or more of " + std::string(names) +
                                                 " (comma-separated), got \"" + std::string(word) + "\"");
    }
    if (std::ranges::find(states, *state) == states.end()) states.push_back(*state);
    if (comma == std::string_view::npos) return states;
    rest.remove_prefix(comma + 1);
  }
}

template <class State>
std::string list_text(const std::vector<State>& states) {
  std::string out;
  for (State state : states) {  // appended, not `"," + text`: that trips g++ 12's false -Wrestrict at -O3
    if (!out.empty()) out += ',';
    out += to_string(state);
  }
  return out;
}

}  // namespace

std::vector<JobState> parse_job_states(std::string_view field, std::string_view text) {
  return parse_list<JobState>(field, text, parse_job_state, "PENDING, STARTING, RUNNING, SUCCEEDED, FAILED, CANCELLED");
}

std::vector<NodeState> parse_node_states(std::string_view field, std::string_view text) {
  return parse_list<NodeState>(field, text, parse_node_state, "HEALTHY, SUSPECT, UNHEALTHY, DRAINED, DOWN");
}

std::string job_states_text(const std::vector<JobState>& states) { return list_text(states); }
std::string node_states_text(const std::vector<NodeState>& states) { return list_text(states); }

std::vector<JobState> active_job_states() { return {JobState::pending, JobState::starting, JobState::running}; }

}  // namespace trainyard::proto
