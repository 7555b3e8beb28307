#pragma once
// The addresses attempts' networks are given (--job-network, agent/job_network.h): each attempt that
// runs in a network of its own gets a block of the pool, aligned and a power of two in size, with an
// address per rank; the block is its own until the attempt ends. Its ranks reach each other's
// addresses and nothing else reaches them, so no two attempts running at once may share a block.
// Pure: the job manager takes a block at launch, gives it back when the attempt goes, and marks as
// taken, after a restart, the blocks its stored attempts' provenance records (daemon/provenance.h).
#include <cstdint>
#include <map>
#include <optional>

#include "proto/ipv4_network.h"

namespace trainyard::daemon {

class JobAddressPool {
 public:
  explicit JobAddressPool(Ipv4Network pool) : pool_(pool) {}

  const Ipv4Network& pool() const { return pool_; }
  // The lowest free block with room for `addresses` (at least 1), or nullopt when none is free.
  std::optional<Ipv4Network> take(int addresses);
  // Marks `block` taken (an attempt restored from the store); false when it is not inside the pool
  // or overlaps a block taken already.
  bool mark_taken(const Ipv4Network& block);
  void give_back(const Ipv4Network& block);
  std::size_t blocks_taken() const { return taken_.size(); }

 private:
  Ipv4Network pool_;
  std::map<std::uint64_t, std::uint64_t> taken_;  // first address -> one past the last
};

}  // namespace trainyard::daemon
