#include "daemon/policy/job_address_pool.h"

#include <bit>

namespace trainyard::daemon {

std::optional<Ipv4Network> JobAddressPool::take(int addresses) {
  const std::uint64_t size = std::bit_ceil(static_cast<std::uint64_t>(std::max(addresses, 1)));
  if (size > pool_.size()) return std::nullopt;
  const std::uint64_t end = std::uint64_t{pool_.base} + pool_.size();
  // First fit over the gaps between taken blocks, each candidate aligned to its size (the pool's
  // base is aligned to the pool's size, which is at least as large).
  std::uint64_t candidate = pool_.base;
  for (const auto& [first, past] : taken_) {
    if (candidate + size <= first) break;
    if (past > candidate) candidate = (past + size - 1) / size * size;
  }
  if (candidate + size > end) return std::nullopt;
  taken_.emplace(candidate, candidate + size);
  return Ipv4Network{static_cast<Ipv4>(candidate), 32 - std::countr_zero(size)};
}

bool JobAddressPool::mark_taken(const Ipv4Network& block) {
  if (!pool_.contains(block)) return false;
  const std::uint64_t first = block.base;
  const std::uint64_t past = first + block.size();
  const auto next = taken_.lower_bound(first);
  if (next != taken_.end() && next->first < past) return false;
  if (next != taken_.begin() && std::prev(next)->second > first) return false;
  taken_.emplace(first, past);
  return true;
}

void JobAddressPool::give_back(const Ipv4Network& block) { taken_.erase(block.base); }

}  // namespace trainyard::daemon
