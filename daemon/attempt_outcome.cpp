#include "daemon/attempt_outcome.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <csignal>

namespace trainyard {
namespace {

bool contains_ci(const std::string& haystack, std::string_view needle) {
  auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                        [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b)); });
  return it != haystack.end();
}

}  // namespace

bool glob_match(const std::string& pattern, const std::string& text) {
  return fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

FailureClass classify_failure(const AttemptFacts& f) {
  if (f.cancelled) return {"cancelled", "Cancelled on request; resubmit if it was not intended.", false};
  if (f.health_failed) {
    return {"health_failed", "A node of the allocation failed its pre-flight health check; the job runs without it.", true};
  }
  if (f.node_lost) {
    return {"node_lost", "A node stopped answering; the job is retried elsewhere and the node is checked.", true};
  }
  if (f.timed_out) return {"timeout", "The attempt ran past timeout_s; raise it or checkpoint more often.", false};
  if (contains_ci(f.reason, "stuck")) {
    return {"stuck", "Training made no progress for stuck_after_s; see the diagnosis for the rank that stopped.", false};
  }
  const bool oom_marker = contains_ci(f.reason, "out of memory") || contains_ci(f.log_tail, "out of memory") ||
                          contains_ci(f.reason, "oom") || contains_ci(f.log_tail, "std::bad_alloc");
  if (oom_marker && (f.signal == SIGKILL || f.exit_code.value_or(0) != 0)) {
    return {"oom", "The process ran out of memory; lower the batch size or use more nodes.", false};
  }
  if (contains_ci(f.reason, "nan") || contains_ci(f.reason, "non-finite loss")) {
    return {"nan_loss", "The loss became NaN/Inf; lower the learning rate or check the data.", false};
  }
  if (contains_ci(f.reason, "collective") && contains_ci(f.reason, "timeout")) {
    return {"collective_timeout", "A collective timed out; the peer named in the reason may be unhealthy.", true};
  }
  if (f.signal) return {"user_error", "The process was killed by signal " + std::to_string(*f.signal) + "; check its logs.", false};
  if (f.exit_code && *f.exit_code != 0) {
    return {"user_error", "The program exited with code " + std::to_string(*f.exit_code) + "; check its logs.", false};
  }
  return {"unknown", "The attempt failed for an unknown reason; check the logs and the node.", false};
}

RetryDecision decide_retry(const JobSpec& spec, int attempts_used, int infra_retries_used, int max_infra_retries,
                           const AttemptFacts& facts, const FailureClass& cls) {
  if (facts.cancelled) return {NextStep::fail, "cancelled"};
  if (cls.infrastructure) {
    if (infra_retries_used < max_infra_retries) {
      return {NextStep::retry_infrastructure, "infrastructure failure (" + cls.name + "), retried without using an attempt"};
    }
    return {NextStep::fail, "infrastructure retries exhausted (" + std::to_string(max_infra_retries) + ")"};
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
  if (attempts_used < spec.retry.attempts) {
    return {NextStep::retry, "attempt " + std::to_string(attempts_used) + " of " + std::to_string(spec.retry.attempts) + " failed"};
  }
  return {NextStep::fail, spec.retry.attempts > 1 ? "all " + std::to_string(spec.retry.attempts) + " attempts failed" : "failed"};
}

}  // namespace trainyard
