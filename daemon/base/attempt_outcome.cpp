#include "daemon/base/attempt_outcome.h"

#include <fnmatch.h>

#include "daemon/base/failure_rules.h"

namespace trainyard::daemon {

bool glob_match(const std::string& pattern, const std::string& text) {
  return fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

FailureClass classify_failure(const AttemptFacts& f) { return FailureRules::defaults().classify(f); }

RetryDecision decide_retry(const JobSpec& spec, int attempts_used, int infra_retries_in_a_row, int max_infra_retries,
                           const AttemptFacts& facts, const FailureClass& cls) {
  if (facts.cancelled) return {NextStep::fail, "cancelled"};
  if (cls.infrastructure) {
    if (infra_retries_in_a_row < max_infra_retries) {
      return {NextStep::retry_infrastructure, "infrastructure failure (" + cls.name + "), retried without using an attempt"};
    }
    return {NextStep::fail, "infrastructure retries exhausted: " + std::to_string(max_infra_retries) +
                                " in a row without training progress"};
  }
  const std::string exit_text = facts.exit_code ? std::to_string(*facts.exit_code) : "";
  for (std::size_t i = 0; i < spec.retry.evaluate_on_exit.size(); ++i) {
    const ExitRule& rule = spec.retry.evaluate_on_exit[i];
    const bool matches = (!rule.on_exit_code || glob_match(*rule.on_exit_code, exit_text)) &&
                         (!rule.on_reason || glob_match(*rule.on_reason, facts.reason)) &&
                         (!rule.on_class || glob_match(*rule.on_class, cls.name));
    if (!matches) continue;
    const std::string which = "evaluate_on_exit[" + std::to_string(i) + "]";
    if (rule.action == RetryAction::exit) return {NextStep::fail, which + " says exit"};
    if (attempts_used < spec.retry.attempts) return {NextStep::retry, which + " says retry"};
    return {NextStep::fail, which + " says retry, but all " + std::to_string(spec.retry.attempts) + " attempts are used"};
  }
  if (!cls.retryable) return {NextStep::fail, cls.name + " is not retried: another attempt would meet the same error"};
  if (attempts_used < spec.retry.attempts) {
    return {NextStep::retry, "attempt " + std::to_string(attempts_used) + " of " + std::to_string(spec.retry.attempts) + " failed"};
  }
  return {NextStep::fail, spec.retry.attempts > 1 ? "all " + std::to_string(spec.retry.attempts) + " attempts failed" : "failed"};
}

}  // namespace trainyard::daemon
