#pragma once
// What a virtual attempt of the fleet simulator does, as a function of the time since its launch
// (pure; no clock is read here). The submitting side chooses each job's behaviour through the
// command it submits, so the mix is decided where the jobs are made:
//
//   ["virtual", "succeed", MS]  advances a step every kStepPeriod, exits 0 after MS
//   ["virtual", "fail", MS]     advances likewise, exits 1 after MS (the job's own failure)
//   ["virtual", "hang", MS]     advances for MS, then stops advancing and never exits by itself:
//                               the daemon's stuck detection must kill it
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proto/messages.h"

namespace trainyard::fleet {

using Millis = std::chrono::milliseconds;
inline constexpr Millis kStepPeriod{100};

class VirtualJob {
 public:
  enum class Outcome { succeed, fail, hang };

  // Throws InvalidInput("command.argv", ...) for a command that is not one of the three above.
  static VirtualJob from_argv(const std::vector<std::string>& argv);
  static std::vector<std::string> argv(Outcome outcome, Millis after);

  Outcome outcome() const { return outcome_; }
  // The last step reached `elapsed` after the launch (a hung job stays at the step it hung at).
  std::int64_t step_at(Millis elapsed) const;
  // When the step last advanced, as time since the launch; nullopt before the first step.
  std::optional<Millis> progress_at(Millis elapsed) const;
  // How long after the launch it exits by itself; nullopt for a hang.
  std::optional<Millis> exits_after() const;
  // Its exit report once it ended by itself at `exits_after()`.
  AttemptExitedMsg exit_report(AttemptId attempt) const;
  // Its exit report after a kill `elapsed` after the launch (SIGTERM, as a process that obeys it).
  AttemptExitedMsg killed_report(AttemptId attempt, Millis elapsed, const std::string& reason) const;

 private:
  VirtualJob(Outcome outcome, Millis after) : outcome_(outcome), after_(after) {}
  Millis advancing_for(Millis elapsed) const;

  Outcome outcome_;
  Millis after_;
};

}  // namespace trainyard::fleet
