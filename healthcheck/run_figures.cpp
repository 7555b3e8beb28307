#include "healthcheck/run_figures.h"

#include <algorithm>
#include <cassert>

namespace trainyard::healthcheck {

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  const std::size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle), values.end());
  const double upper = values[middle];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle));
  return (lower + upper) / 2;
}

std::optional<double> rank_busbw(const RankCollectiveResult& rank, CollectiveKind kind) {
  for (const CollectiveMeasurement& m : rank.collectives) {
    if (m.kind == kind && m.exact && m.error.empty()) return m.busbw;
  }
  return std::nullopt;
}

std::optional<double> run_busbw(const CollectiveRun& run, CollectiveKind kind) {
  std::optional<double> slowest;
  for (const RankCollectiveResult& rank : run.ranks) {
    const std::optional<double> b = rank_busbw(rank, kind);
    if (!b) return std::nullopt;
    slowest = slowest ? std::min(*slowest, *b) : *b;
  }
  return slowest;
}

std::string run_failure(const CollectiveRun& run) {
  assert(run.nodes.size() == run.ranks.size());
  for (std::size_t r = 0; r < run.ranks.size(); ++r) {
    const RankCollectiveResult& rank = run.ranks[r];
    if (rank.correct()) continue;
    const std::string who = "rank " + std::to_string(r) + " (" + run.nodes[r] + "): ";
    if (!rank.error.empty()) return who + rank.error;
    for (const CollectiveMeasurement& m : rank.collectives) {
      if (!m.exact || !m.error.empty()) return who + std::string(trainyard::to_string(m.kind)) + ": " + m.error;
    }
  }
  return "";
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

}  // namespace trainyard::healthcheck
