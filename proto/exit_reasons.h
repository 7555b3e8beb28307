#pragma once
// Words of an agent's exit reasons that the daemon reads: the agent writes the reason, not the job,
// so the daemon may trust its start.
#include <string_view>

namespace trainyard::inline proto {

// How the reason begins when the kernel's OOM killer killed processes of the rank
// (agent/rank_process.h): the daemon names such a kill also in an attempt that succeeded.
inline constexpr std::string_view kOomKilledReasonPrefix = "out of memory: the kernel's OOM killer killed ";

}  // namespace trainyard::proto
