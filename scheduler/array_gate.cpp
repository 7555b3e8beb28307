// Array %K limits: a gated task enters its share's queue only while fewer than K tasks of its array
// are queued or running, so a pass never sees more than K and never spends its examined budget on
// tasks that could not start anyway.
#include "scheduler/state.h"

namespace trainyard::scheduler::detail {

void State::join_array(JobId task, const ArrayLimit& array) {
  arrays[array.array_job].limit = array.limit;
  array_of[task] = array.array_job;
}

void State::admit(QueuedJob& job) {
  if (job.array) {
    ArrayGate& gate = arrays.at(*job.array);
    if (!gate.admitted.contains(job.id) && static_cast<int>(gate.admitted.size()) >= gate.limit) {
      job.gated = true;
      ++shares[job.share].held;
      gate.waiting.insert({job.key, job.id});
      return;
    }
    gate.admitted.insert(job.id);
  }
  make_ready(job);
}

void State::leave_array(JobId task) {
  const auto it = array_of.find(task);
  if (it == array_of.end()) return;
  const JobId array = it->second;
  array_of.erase(it);
  ArrayGate& gate = arrays.at(array);
  gate.admitted.erase(task);
  while (static_cast<int>(gate.admitted.size()) < gate.limit && !gate.waiting.empty()) {
    QueuedJob& next = queued.at(gate.waiting.begin()->second);
    gate.waiting.erase(gate.waiting.begin());
    next.gated = false;
    --shares[next.share].held;
    gate.admitted.insert(next.id);
    make_ready(next);
  }
  if (gate.admitted.empty() && gate.waiting.empty()) arrays.erase(array);
}

}  // namespace trainyard::scheduler::detail
