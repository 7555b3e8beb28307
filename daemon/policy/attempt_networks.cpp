#include "daemon/policy/attempt_networks.h"

namespace trainyard::daemon {

AttemptNetworks::AttemptNetworks(std::optional<Ipv4Network> pool) {
  if (pool) pool_.emplace(*pool);
}

std::optional<JobNetworkPlan> AttemptNetworks::assign(AttemptId id, int ranks, std::string& why) {
  if (!pool_) return std::nullopt;
  const auto block = pool_->take(ranks);
  if (!block) {
    why = "no block of " + std::to_string(ranks) + " addresses is free in --job-network " + pool_->pool().text() +
          " (" + std::to_string(pool_->blocks_taken()) + " attempts hold one)";
    return std::nullopt;
  }
  blocks_[id] = *block;
  JobNetworkPlan plan{pool_->pool(), *block, {}};
  for (int r = 0; r < ranks; ++r) plan.addresses.push_back(block->base + static_cast<Ipv4>(r));
  return plan;
}

bool AttemptNetworks::restore(AttemptId id, const Json& provenance) {
  if (!pool_ || !provenance.is_object()) return true;
  const auto network = provenance.find("network");
  if (network == provenance.end() || !network->is_object() || !network->contains("block") ||
      !(*network)["block"].is_string()) {
    return true;  // it shares its nodes' network
  }
  try {
    const Ipv4Network block = parse_ipv4_network((*network)["block"].get<std::string>(), "network.block");
    if (!pool_->mark_taken(block)) return false;
    blocks_[id] = block;
    return true;
  } catch (const InvalidInput&) {
    return false;
  }
}

void AttemptNetworks::release(AttemptId id) {
  const auto found = blocks_.find(id);
  if (found == blocks_.end()) return;
  pool_->give_back(found->second);
  blocks_.erase(found);
}

Json network_provenance(const JobNetworkPlan& plan) {
  Json addresses = Json::array();
  for (const Ipv4 address : plan.addresses) addresses.push_back(ipv4_text(address));
  return {{"block", plan.block.text()}, {"addresses", std::move(addresses)}};
}

}  // namespace trainyard::daemon
