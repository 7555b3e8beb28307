#pragma once
// What a phase a job reports is, by its name: one vocabulary for the daemon's hang rule
// (daemon/policy/hang_rule.h) and the agent's checkpoint time (agent/progress_file.h).
#include <string_view>

namespace trainyard::inline proto {

enum class PhaseKind { step, checkpoint, eval, save };

// "checkpoint", "ckpt-write" -> checkpoint; "eval", "validation" -> eval; "save" -> save; anything
// else ("forward", "all-reduce", "") is an ordinary step. Case does not matter.
PhaseKind phase_kind(std::string_view name);

}  // namespace trainyard::proto
