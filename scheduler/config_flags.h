#pragma once
// The scheduler's settings as the daemon's flags and config-file keys (proto/flag_parser.h), each
// bound to the field it sets.
#include "proto/flag_parser.h"
#include "scheduler/preemption.h"
#include "scheduler/types.h"

namespace trainyard::scheduler {

void add_config_flags(FlagParser& flags, Config& config);
// The parsed values are checked by validate(const PreemptionConfig&), naming the flag.
void add_preemption_flags(FlagParser& flags, PreemptionConfig& config);

}  // namespace trainyard::scheduler
