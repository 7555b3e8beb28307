#pragma once
// Figures that both collective verdicts (verdict.h, localisation.h) read off a collective run.
#include <optional>
#include <string>
#include <vector>

#include "healthcheck/results.h"

namespace trainyard::healthcheck {

inline constexpr CollectiveKind kCollectiveKinds[] = {CollectiveKind::all_gather, CollectiveKind::all_reduce,
                                                      CollectiveKind::reduce_scatter};

// The middle value (mean of the two middle ones for an even count); 0 for none.
double median(std::vector<double> values);

// The busbw `rank` measured for `kind`; nullopt unless that collective completed exactly.
std::optional<double> rank_busbw(const RankCollectiveResult& rank, CollectiveKind kind);

// The run's busbw for `kind`: its slowest rank's, since a collective is as fast as its slowest
// member. nullopt if any rank lacks the figure.
std::optional<double> run_busbw(const CollectiveRun& run, CollectiveKind kind);

// The first failure of the run as "rank 1 (node-b): all_gather: ...", empty if every rank was correct.
std::string run_failure(const CollectiveRun& run);

// "node-a, node-b"
std::string joined(const std::vector<std::string>& names);

}  // namespace trainyard::healthcheck
