#pragma once
// The straggler rule: which rank of a gang does its steps much slower than the others. Pure: each
// rank's cumulative work in, a named straggler out; no clock is read.
//   - A rank's progress is cut into windows of at least kStragglerWindowSteps steps and
//     kStragglerWindowWork of work; a window's figure is its work per step. Work is device time for
//     a simulated rank (what it computed, not what it waited for in the all-reduce: ranks in
//     lockstep share their step time, so only this tells the slow one apart) and wall time for a
//     command rank (ranks that do not wait on each other show a slow one through their pace).
//   - A window at kStragglerRatio or more times the median of the other ranks' latest windows
//     counts; kStragglerWindows such windows in a row name the rank, once per attempt, with the mean
//     of their ratios.
//   - A window in which the rank reported a slow phase (a checkpoint, an eval: daemon/policy/hang_rule.h)
//     is not judged: it neither counts nor breaks a run. A rank whose step or work went back (a
//     new run of it) starts a fresh window. A gang of one has no one to compare with.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "proto/time.h"

namespace trainyard::daemon {

inline constexpr std::int64_t kStragglerWindowSteps = 10;
inline constexpr Millis kStragglerWindowWork{100};  // below it, millisecond counts are too coarse
inline constexpr double kStragglerRatio = 1.5;
inline constexpr int kStragglerWindows = 3;

class StragglerWatch {
 public:
  explicit StragglerWatch(std::size_t ranks = 0) : ranks_(ranks) {}

  // Rank `rank` has done `step` steps with `work` spent on them in all, and has been in a slow
  // phase since its previous report if `slow_phase`. The ratio when this names it a straggler.
  std::optional<double> observe(std::size_t rank, std::int64_t step, Millis work, bool slow_phase);

 private:
  struct Rank {
    std::optional<std::int64_t> window_step;  // where its open window began
    Millis window_work{0};
    bool window_slow_phase = false;
    std::optional<double> latest;  // work per step, in ms, of its latest closed window
    int slow_windows = 0;          // in a row
    double ratio_sum = 0;          // of those windows
    bool named = false;
  };
  std::optional<double> judge(std::size_t rank, double per_step);

  std::vector<Rank> ranks_;
};

}  // namespace trainyard::daemon
