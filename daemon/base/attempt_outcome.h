#pragma once
// What happens after an attempt fails: its failure class (with a one-line suggestion) and whether
// the job retries. Both are pure functions of the attempt's facts, tested without a daemon.
//
// Classification: ordered rules as data (failure_rules.h), the first that matches wins: cancelled,
// failed pre-flight, node lost, timeout, stuck on a node that then failed its health check
// (infrastructure), stuck, a full disk (ENOSPC in the reason or log tail: the job's own when it
// was over its storage quota, else the node's and infrastructure), out-of-memory (a failure with an OOM marker in the
// reason or log tail), NaN loss, collective timeout, then any other failure is the job's own error,
// and the rest is unknown.
//
// Retry (AWS Batch's evaluateOnExit): rules are checked in order; the first whose globs all match
// (exit code, reason, class) decides retry or exit. With no matching rule the job retries while
// attempts remain, unless the class is not retryable. Infrastructure failures retry without using the job's attempts, because the
// job did nothing wrong, up to a separate limit on such failures in a row without training
// progress: a long run that meets a node failure every few hours goes on, while a job whose every
// attempt dies before it gets anywhere stops.
#include <optional>
#include <string>

#include "proto/job.h"

namespace trainyard::daemon {

struct AttemptFacts {
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string reason;
  std::string log_tail;
  bool cancelled = false;
  bool node_lost = false;
  bool health_failed = false;  // a node of the attempt failed its pre-flight check
  bool stuck = false;              // the daemon stopped it for making no progress (its diagnosis is the reason)
  bool node_failed_check = false;  // a node it hung on failed the health check that followed
  bool timed_out = false;
  // The job (or its share) held more checkpoint and log bytes than its quota allows when it ended:
  // a full disk is then the job's own doing, not the node's.
  bool over_storage_quota = false;
  // The daemon stopped it for staying over its storage quota past the grace (its reason says so).
  bool quota_exceeded = false;
  // The node of the rank that failed first measured its own filesystem short of space (its agent's
  // heartbeat, healthcheck/disk_space.h): a full disk the system saw, not one the job printed.
  bool node_disk_low = false;
};

struct FailureClass {
  std::string name;        // "user_error", "node_lost", ...
  std::string suggestion;  // one line for the operator
  bool infrastructure = false;
  bool retryable = true;  // false: a retry would meet the same error
};

// With the default rules (failure_rules.h); the daemon uses its configured FailureRules.
FailureClass classify_failure(const AttemptFacts& facts);

enum class NextStep { retry, retry_infrastructure, fail };

struct RetryDecision {
  NextStep step = NextStep::fail;
  std::string why;
};

RetryDecision decide_retry(const JobSpec& spec, int attempts_used, int infra_retries_in_a_row, int max_infra_retries,
                           const AttemptFacts& facts, const FailureClass& cls);

// fnmatch-style glob ("*", "?", "[...]").
bool glob_match(const std::string& pattern, const std::string& text);

}  // namespace trainyard::daemon
