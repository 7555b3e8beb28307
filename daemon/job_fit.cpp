#include "daemon/job_fit.h"

#include <algorithm>
#include <string>

#include "proto/errors.h"

namespace trainyard {
namespace {

std::string nodes_text(std::size_t n) { return std::to_string(n) + (n == 1 ? " node" : " nodes"); }

const char* const kWaitHint = "; set \"wait_for_capacity\": true to queue it until nodes that fit join";

}  // namespace

void refuse_unless_it_can_ever_fit(const JobSpec& spec, const std::vector<int>& node_cores) {
  if (spec.wait_for_capacity) return;
  if (node_cores.empty()) {
    throw InvalidInput("nodes", std::string("requested node configuration is not available: no node is registered yet") +
                                    kWaitHint);
  }
  const int largest = *std::max_element(node_cores.begin(), node_cores.end());
  if (spec.cores_per_node && *spec.cores_per_node > largest) {
    throw InvalidInput("cores_per_node", "requested node configuration is not available: " +
                                             std::to_string(*spec.cores_per_node) +
                                             " cores per node asked, and the largest registered node has " +
                                             std::to_string(largest) + kWaitHint);
  }
  const int wanted_cores = spec.cores_per_node.value_or(1);  // whole-node jobs take any node
  const auto fitting = static_cast<std::size_t>(
      std::count_if(node_cores.begin(), node_cores.end(), [wanted_cores](int cores) { return cores >= wanted_cores; }));
  if (fitting < static_cast<std::size_t>(spec.nodes)) {
    std::string has = nodes_text(node_cores.size()) + (node_cores.size() == 1 ? " is" : " are") + " registered";
    if (fitting < node_cores.size()) has += ", " + std::to_string(fitting) + " with " + std::to_string(wanted_cores) + " cores or more";
    throw InvalidInput("nodes", "requested node configuration is not available: " + nodes_text(static_cast<std::size_t>(spec.nodes)) +
                                    " asked, and " + has + kWaitHint);
  }
}

}  // namespace trainyard
