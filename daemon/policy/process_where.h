#pragma once
// What an idle rank's processes' whereabouts say about a hang (their agent gathers them:
// agent/rank_activity.h). Pure: whereabouts in, verdict and words out.
//   - A process stopped by a signal (state T) or a debugger (t) is the hang.
//   - A Python process whose main thread is inside torch.distributed (a collective, a barrier), in
//     autograd (data-parallel backward waits there for its all-reduce) or in DistributedDataParallel
//     waits on its peers.
//   - Any other Python stack (asleep in the job's own code, blocked on a queue or a file) is the
//     hang itself: its peers wait on it.
//   - A process with neither (not Python, its stack not dumped) says nothing either way.
#include <string>
#include <vector>

#include "proto/messages.h"

namespace trainyard::daemon {

enum class WhereVerdict { unknown, stopped, waiting_on_peers, hung_itself };

// A rank's, from its processes': stopped before hung_itself before waiting_on_peers (a rank one of
// whose processes hangs is a culprit, whatever its others do).
WhereVerdict judge_where(const std::vector<ProcessWhere>& processes);

// One process, on one line: "pid 812 stopped (state T)", or "pid 812 sleeping in do_epoll_wait:
// ddp.py:35 in main (inside autograd/__init__.py:200 in backward)": the innermost call in the job's
// own code, and the innermost of all when that is in a library.
std::string where_text(const ProcessWhere& process);

}  // namespace trainyard::daemon
