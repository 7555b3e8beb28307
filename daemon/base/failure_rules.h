#pragma once
// Failure classification as data (docs/DESIGN.md "Failure classes"): an ordered list of rules, the first
// that matches names the class, says whether the failure was the system's (infrastructure) and
// gives a one-line suggestion. The defaults are a JSON document in failure_rules.cpp; operators add
// their own with `trainyard-daemon --failure-rules FILE` ({"rules": [...]}), checked before them.
//
// "retry": false marks a failure no retry can mend (a program that cannot be started): the job fails
// at once unless its own evaluate_on_exit says retry.
// A rule matches when every matcher it has matches:
//   "when":      facts that must all hold: cancelled, health_failed, node_lost, stuck (stopped
//                for making no progress), node_failed_check (a node it hung on then failed its
//                health check), timed_out,
//                signal (killed by one), nonzero_exit, failed (either of the last two),
//                over_storage_quota (the job or its share was over its storage quota);
//   "exit_code", "signal": globs over the number;
//   "reason", "log_tail", "text": lists of globs, any of which matches the attempt's reason, its
//                log tail, or either. Globs are fnmatch patterns, case-insensitive, over the whole
//                text: "*out of memory*", not a bare substring, so "room" is not "oom".
// A job's log is its own words: a rule marked infrastructure that matches only through the log
// tail (its "log_tail", or "text" found in the log and not in the reason, which the agent and daemon
// write) names the class but counts as infrastructure only when the system saw a fault besides (a
// node lost, a failed check, a node that measured its disk full). Otherwise a job could buy
// retries that use no attempt, and get healthy nodes excluded, by printing an NCCL or ENOSPC line.
// An operator's rule may say "log_is_evidence": true where the line comes from something the job
// cannot forge (a provider's reclaim notice on a host whose jobs cannot write that log); no default
// rule does.
// "suggestion" may name {exit_code}, {signal} and {line}: the first line of the log tail (else of
// the reason) that one of the rule's own patterns matches on its own, e.g. the Python error that
// names the missing module (bounded, secret-looking NAME=value pairs masked); a rule's "quote"
// globs choose the log tail's last line they match instead (a traceback's exception line).
#include <optional>
#include <string>
#include <vector>

#include "daemon/base/attempt_outcome.h"
#include "proto/json_reader.h"

namespace trainyard::daemon {

struct FailureRule {
  std::string class_name;
  bool infrastructure = false;
  bool retry = true;
  bool log_is_evidence = false;  // an operator's word that the log line is the system's, not the job's
  std::string suggestion;
  std::vector<std::string> when;
  std::optional<std::string> exit_code;
  std::optional<std::string> signal;
  std::vector<std::string> reason;
  std::vector<std::string> log_tail;
  std::vector<std::string> text;
  // The lines "{line}" stands for: the last line of the log tail one of these matches (a Python
  // traceback's exception comes last). None, or none matching: the first line the rule's own
  // patterns match.
  std::vector<std::string> quote;
};

class FailureRules {
 public:
  static const FailureRules& defaults();
  // Strict: throws InvalidInput naming e.g. "rules[2].when[0]". `path` prefixes field names.
  static FailureRules parse(const Json& document, const std::string& path = "");
  // These rules first, then `fallback`'s.
  FailureRules followed_by(const FailureRules& fallback) const;

  // The first matching rule's class; "unknown" if none matches (the defaults end with a catch-all).
  FailureClass classify(const AttemptFacts& facts) const;
  std::size_t size() const { return rules_.size(); }

 private:
  std::vector<FailureRule> rules_;
};

}  // namespace trainyard::daemon
