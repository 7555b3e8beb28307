#pragma once
// Which attempts run in a network of their own, and with which addresses (--job-network,
// agent/job_network.h). An attempt gets a block of the pool at launch when every node of its gang can
// isolate it, keeps it until it goes, and a daemon that restarts takes back the blocks its stored
// attempts' provenance records ("network"), so no attempt still running shares its addresses with a
// new one. No I/O.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/policy/job_address_pool.h"
#include "proto/json_reader.h"
#include "proto/messages.h"

namespace trainyard::daemon {

class AttemptNetworks {
 public:
  explicit AttemptNetworks(std::optional<Ipv4Network> pool);

  bool enabled() const { return pool_.has_value(); }
  // The network attempt `id` runs in, one address per rank, or nullopt when it shares its nodes'
  // network: no pool, or no block left (`why` says so).
  std::optional<JobNetworkPlan> assign(AttemptId id, int ranks, std::string& why);
  // An attempt restored from the store keeps the block its provenance records; false when that
  // block is not the pool's or another attempt holds it (the attempt keeps running, unisolated from it).
  bool restore(AttemptId id, const Json& provenance);
  void release(AttemptId id);

 private:
  std::optional<JobAddressPool> pool_;
  std::map<AttemptId, Ipv4Network> blocks_;
};

// What an attempt's provenance records of its network: {"block": "10.240.0.4/30", "addresses": [...]}.
Json network_provenance(const JobNetworkPlan& plan);

}  // namespace trainyard::daemon
