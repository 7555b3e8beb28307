#pragma once
// Comma-separated lists of states, as the API's `state=` filters and the CLI's `--state` flags take
// them ("PENDING,running"): case-insensitive, duplicates dropped, one parser for both sides.
#include <string>
#include <string_view>
#include <vector>

#include "proto/job.h"
#include "proto/node.h"

namespace trainyard::inline proto {

// Throw InvalidInput(field, ...) naming the word that is not a state and the states there are.
std::vector<JobState> parse_job_states(std::string_view field, std::string_view text);
std::vector<NodeState> parse_node_states(std::string_view field, std::string_view text);
// "PENDING,RUNNING", as the daemon takes it.
std::string job_states_text(const std::vector<JobState>& states);
std::string node_states_text(const std::vector<NodeState>& states);
// The states of work not yet ended, what `trainyard jobs` lists by default (as squeue does).
std::vector<JobState> active_job_states();

}  // namespace trainyard::proto
