#include "bench/fleet/virtual_job.h"

#include <algorithm>

#include "proto/errors.h"
#include "proto/flag_parser.h"

namespace trainyard::fleet {
namespace {

constexpr std::int64_t kMaxDurationMs = 24LL * 3600 * 1000;

const char* outcome_name(VirtualJob::Outcome outcome) {
  switch (outcome) {
    case VirtualJob::Outcome::succeed: return "succeed";
    case VirtualJob::Outcome::fail: return "fail";
    case VirtualJob::Outcome::hang: return "hang";
  }
  return "succeed";
}

}  // namespace

VirtualJob VirtualJob::from_argv(const std::vector<std::string>& argv) {
  if (argv.size() != 3 || argv[0] != "virtual") {
    throw InvalidInput("command.argv", "a virtual job's command is [\"virtual\", succeed|fail|hang, MS]");
  }
  Outcome outcome;
  if (argv[1] == "succeed") {
    outcome = Outcome::succeed;
  } else if (argv[1] == "fail") {
    outcome = Outcome::fail;
  } else if (argv[1] == "hang") {
    outcome = Outcome::hang;
  } else {
    throw InvalidInput("command.argv[1]", "'" + argv[1] + "' is not succeed, fail or hang");
  }
  return VirtualJob(outcome, Millis(parse_integer("command.argv[2]", argv[2], 0, kMaxDurationMs)));
}

std::vector<std::string> VirtualJob::argv(Outcome outcome, Millis after) {
  return {"virtual", outcome_name(outcome), std::to_string(after.count())};
}

Millis VirtualJob::advancing_for(Millis elapsed) const {
  return std::clamp(elapsed, Millis(0), outcome_ == Outcome::hang ? after_ : elapsed);
}

std::int64_t VirtualJob::step_at(Millis elapsed) const { return advancing_for(elapsed) / kStepPeriod; }

std::optional<Millis> VirtualJob::progress_at(Millis elapsed) const {
  const std::int64_t step = step_at(elapsed);
  if (step == 0) return std::nullopt;
  return step * kStepPeriod;
}

std::optional<Millis> VirtualJob::exits_after() const {
  if (outcome_ == Outcome::hang) return std::nullopt;
  return after_;
}

AttemptExitedMsg VirtualJob::exit_report(AttemptId attempt) const {
  AttemptExitedMsg exit;
  exit.attempt_id = attempt;
  exit.steps = step_at(after_);
  exit.exit_code = outcome_ == Outcome::fail ? 1 : 0;
  exit.reason = "exited with code " + std::to_string(*exit.exit_code);
  if (outcome_ == Outcome::fail) exit.log_tail = "virtual job: failing as its command asked\n";
  return exit;
}

AttemptExitedMsg VirtualJob::killed_report(AttemptId attempt, Millis elapsed, const std::string& reason) const {
  AttemptExitedMsg exit;
  exit.attempt_id = attempt;
  exit.steps = step_at(elapsed);
  exit.signal = 15;
  exit.reason = reason + " (killed by signal 15 (Terminated))";
  return exit;
}

}  // namespace trainyard::fleet
