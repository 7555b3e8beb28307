#include "daemon/policy/job_fit.h"

#include <algorithm>
#include <string>

#include "proto/workload_memory.h"

namespace trainyard::daemon {
namespace {

std::string nodes_text(std::size_t n) { return std::to_string(n) + (n == 1 ? " node" : " nodes"); }

const char* const kWaitHint = "; set \"wait_for_capacity\": true to queue it until nodes that fit join";

}  // namespace

Result<void> can_ever_fit(const JobSpec& spec, const NodeCoreCounts& nodes_by_cores) {
  if (spec.wait_for_capacity) return {};
  if (nodes_by_cores.empty()) {
    return Error::invalid_input("nodes", std::string("requested node configuration is not available: no node is registered yet") +
                                    kWaitHint);
  }
  const int largest = nodes_by_cores.rbegin()->first;
  if (spec.cores_per_node && *spec.cores_per_node > largest) {
    return Error::invalid_input("cores_per_node", "requested node configuration is not available: " +
                                                      std::to_string(*spec.cores_per_node) +
                                                      " cores per node asked, and the largest registered node has " +
                                                      std::to_string(largest) + kWaitHint);
  }
  const int wanted_cores = spec.cores_per_node.value_or(1);  // whole-node jobs take any node
  std::size_t registered = 0;
  std::size_t fitting = 0;
  for (const auto& [cores, count] : nodes_by_cores) {
    registered += count;
    if (cores >= wanted_cores) fitting += count;
  }
  if (fitting < static_cast<std::size_t>(spec.nodes)) {
    std::string has = nodes_text(registered) + (registered == 1 ? " is" : " are") + " registered";
    if (fitting < registered) has += ", " + std::to_string(fitting) + " with " + std::to_string(wanted_cores) + " cores or more";
    return Error::invalid_input("nodes", "requested node configuration is not available: " +
                                             nodes_text(static_cast<std::size_t>(spec.nodes)) + " asked, and " + has + kWaitHint);
  }
  return {};
}

Result<void> memory_can_ever_fit(const JobSpec& spec, const std::vector<std::int64_t>& node_memory_mb) {
  if (spec.wait_for_capacity) return {};
  // A simulated rank without a memory_mb is bounded by what its spec needs (agent/simulated_run.h).
  const std::int64_t asked = rank_memory_mb(spec);
  if (asked == 0) return {};
  const bool estimated = !spec.memory_mb;
  const auto could_hold = static_cast<std::size_t>(
      std::count_if(node_memory_mb.begin(), node_memory_mb.end(), [asked](std::int64_t mb) { return mb == 0 || mb >= asked; }));
  if (could_hold >= static_cast<std::size_t>(spec.nodes)) return {};
  const std::int64_t largest =
      node_memory_mb.empty() ? 0 : *std::max_element(node_memory_mb.begin(), node_memory_mb.end());
  const std::string what =
      estimated ? "the simulated spec needs " + std::to_string(asked) +
                      " MiB per rank (its width, depth, input_dim and global_batch set that)"
                : std::to_string(asked) + " MiB per node asked";
  return Error::invalid_input(estimated ? "workload" : "memory_mb",
                              "requested node configuration is not available: " + what + " on " +
                                  nodes_text(static_cast<std::size_t>(spec.nodes)) + ", and " + nodes_text(could_hold) +
                                  " of " + nodes_text(node_memory_mb.size()) + " registered " +
                                  (could_hold == 1 ? "has" : "have") + " that much (the largest reports " +
                                  std::to_string(largest) + " MiB)" + kWaitHint);
}

}  // namespace trainyard::daemon
