#pragma once
// What each ended job ended as, which dependencies ask (job_manager_arrays.cpp): every job that
// ever ended is kept, since a dependency may name any older job. Job ids are dense and only grow,
// so one byte per id from the oldest one remembered: a hash map cost about 40 bytes a job, which a
// daemon running a thousand short jobs a second grew by gigabytes a day.
#include <cstdint>
#include <optional>
#include <vector>

#include "proto/job.h"

namespace trainyard::daemon {

class EndedStates {
 public:
  void set(JobId id, JobState ended);  // `ended` is terminal
  std::optional<JobState> find(JobId id) const;
  bool contains(JobId id) const { return find(id).has_value(); }

 private:
  JobId first_ = 0;                   // the id of states_[0]
  std::vector<std::uint8_t> states_;  // 0: not ended (or never seen), else 1 + the JobState
};

}  // namespace trainyard::daemon
