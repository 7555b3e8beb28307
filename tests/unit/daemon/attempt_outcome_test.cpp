// Failure classification and retry decisions as pure functions: facts in, class and step out.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>

#include "daemon/base/attempt_outcome.h"

namespace trainyard::daemon {
namespace {

using ::testing::HasSubstr;

AttemptFacts exit_with(int code, std::string reason = "") {
  AttemptFacts f;
  f.exit_code = code;
  f.reason = std::move(reason);
  return f;
}

AttemptFacts killed_by(int signal, std::string reason = "", std::string log_tail = "") {
  AttemptFacts f;
  f.signal = signal;
  f.reason = std::move(reason);
  f.log_tail = std::move(log_tail);
  return f;
}

TEST(ClassifyFailure, EveryClass) {
  struct Case {
    const char* why;
    AttemptFacts facts;
    const char* expected;
    bool infrastructure;
  };
  AttemptFacts cancelled;
  cancelled.cancelled = true;
  AttemptFacts lost;
  lost.node_lost = true;
  AttemptFacts timed_out;
  timed_out.timed_out = true;
  AttemptFacts stuck = killed_by(SIGKILL, "stuck: no progress for 1800 s");
  stuck.stuck = true;
  AttemptFacts stuck_on_bad_node = stuck;
  stuck_on_bad_node.node_failed_check = true;
  const std::vector<Case> cases = {
      {"cancel", cancelled, "cancelled", false},
      {"node lost", lost, "node_lost", true},
      {"timeout", timed_out, "timeout", false},
      {"stuck", stuck, "stuck", false},
      {"stuck on a node that then failed its check", stuck_on_bad_node, "stuck", true},
      {"a failed check alone is not a hang", [] { AttemptFacts f = killed_by(SIGKILL); f.node_failed_check = true; return f; }(),
       "user_error", false},
      {"oom by reason", killed_by(SIGKILL, "Out Of Memory killer"), "oom", false},
      {"oom by log", killed_by(SIGKILL, "", "terminate called after std::bad_alloc"), "oom", false},
      {"oom by exit", exit_with(1, "CUDA out of memory"), "oom", false},
      {"nan", exit_with(1, "loss is NaN at step 40"), "nan_loss", false},
      {"non-finite", exit_with(1, "non-finite loss"), "nan_loss", false},
      {"collective", exit_with(1, "collective all-reduce timeout waiting for rank 3"), "collective_timeout", true},
      {"signal", killed_by(SIGTERM), "user_error", false},
      {"segfault", killed_by(SIGSEGV), "crashed", false},
      {"exit", exit_with(3), "user_error", false},
      {"nothing known", AttemptFacts{}, "unknown", false},
      {"exit 0 but failed", exit_with(0), "unknown", false},
  };
  for (const auto& c : cases) {
    const FailureClass cls = classify_failure(c.facts);
    EXPECT_EQ(cls.name, c.expected) << c.why;
    EXPECT_EQ(cls.infrastructure, c.infrastructure) << c.why;
    EXPECT_FALSE(cls.suggestion.empty()) << c.why;
  }
}

TEST(ClassifyFailure, EarlierRulesWin) {
  // Every later marker is present; each step removes the rule that matched.
  AttemptFacts f = killed_by(SIGKILL, "out of memory; loss is NaN; collective timeout");
  f.cancelled = f.node_lost = f.timed_out = f.stuck = true;
  EXPECT_EQ(classify_failure(f).name, "cancelled");
  f.cancelled = false;
  EXPECT_EQ(classify_failure(f).name, "node_lost");
  f.node_lost = false;
  EXPECT_EQ(classify_failure(f).name, "timeout");
  f.timed_out = false;
  EXPECT_EQ(classify_failure(f).name, "stuck");
  f.stuck = false;
  EXPECT_EQ(classify_failure(f).name, "oom");
  f.reason = "loss is NaN; collective timeout";
  EXPECT_EQ(classify_failure(f).name, "nan_loss");
  f.reason = "collective timeout";
  EXPECT_EQ(classify_failure(f).name, "collective_timeout");
  f.reason = "";
  EXPECT_EQ(classify_failure(f).name, "user_error");
}

TEST(ClassifyFailure, EnospcIsDiskFullTheNodesWhenTheNodeMeasuredItUnlessTheJobWasOverItsQuota) {
  AttemptFacts printed = exit_with(1);
  printed.log_tail = "write failed: No space left on device\n";
  const FailureClass printed_cls = classify_failure(printed);
  EXPECT_EQ(printed_cls.name, "disk_full") << "the class the job's words name is shown";
  EXPECT_FALSE(printed_cls.infrastructure) << "but a line the job printed buys no retry as the node's";
  AttemptFacts node_disk = printed;
  node_disk.node_disk_low = true;
  const FailureClass node_cls = classify_failure(node_disk);
  EXPECT_EQ(node_cls.name, "disk_full");
  EXPECT_TRUE(node_cls.infrastructure);
  EXPECT_THAT(node_cls.suggestion, HasSubstr("node's disk"));
  AttemptFacts own_quota = node_disk;
  own_quota.over_storage_quota = true;
  const FailureClass own_cls = classify_failure(own_quota);
  EXPECT_EQ(own_cls.name, "disk_full");
  EXPECT_FALSE(own_cls.infrastructure);
  EXPECT_THAT(own_cls.suggestion, HasSubstr("storage_limit_mb"));
  EXPECT_EQ(classify_failure(killed_by(SIGABRT, "checkpoint write: ENOSPC")).name, "disk_full");
}

// Stopped by the daemon for staying over its storage quota: its own disk_full, whatever signal ended it.
TEST(ClassifyFailure, AJobStoppedForItsStorageQuotaIsItsOwnDiskFull) {
  AttemptFacts stopped = killed_by(SIGTERM, "storage_quota: over its storage quota for 61 s");
  stopped.quota_exceeded = true;
  const FailureClass cls = classify_failure(stopped);
  EXPECT_EQ(cls.name, "disk_full");
  EXPECT_FALSE(cls.infrastructure);
  EXPECT_THAT(cls.suggestion, HasSubstr("past the grace"));
  stopped.quota_exceeded = false;
  EXPECT_EQ(classify_failure(stopped).name, "user_error") << "a plain kill is not a quota";
}

// Stopped by its agent for writing the work filesystem below --job-disk-floor-mb: its own disk_full,
// not the node's, even when its log says ENOSPC (agent/job_disk_floor.h).
TEST(ClassifyFailure, AJobStoppedAtTheAgentsDiskFloorIsItsOwnDiskFull) {
  const FailureClass cls = classify_failure(
      killed_by(SIGTERM, "job disk floor: the node's work filesystem has 300 MiB free (killed by signal 15)",
                "write failed: No space left on device\n"));
  EXPECT_EQ(cls.name, "disk_full");
  EXPECT_FALSE(cls.infrastructure);
  EXPECT_THAT(cls.suggestion, HasSubstr("--job-disk-floor-mb"));
}

TEST(ClassifyFailure, DiskFullComesBeforeOomAndNeedsAFailure) {
  AttemptFacts both = exit_with(1);
  both.log_tail = "No space left on device; then out of memory";
  EXPECT_EQ(classify_failure(both).name, "disk_full");
  AttemptFacts succeeded = exit_with(0, "");
  succeeded.log_tail = "retrying after: No space left on device";
  EXPECT_EQ(classify_failure(succeeded).name, "unknown");
}

TEST(ClassifyFailure, OomMarkerWithoutAFailureIsNotOom) {
  AttemptFacts f = exit_with(0, "");
  f.log_tail = "recovered from out of memory earlier";
  EXPECT_EQ(classify_failure(f).name, "unknown");
}

TEST(ClassifyFailure, SuggestionNamesTheExitCodeOrSignal) {
  EXPECT_THAT(classify_failure(exit_with(3)).suggestion, HasSubstr("code 3"));
  EXPECT_THAT(classify_failure(killed_by(SIGSEGV)).suggestion, HasSubstr("signal " + std::to_string(SIGSEGV)));
}

TEST(GlobMatch, ShellGlobs) {
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("1[0-9]", "12"));
  EXPECT_FALSE(glob_match("1[0-9]", "1"));
  EXPECT_TRUE(glob_match("?", "3"));
  EXPECT_FALSE(glob_match("?", "13"));
  EXPECT_TRUE(glob_match("*segfault*", "rank 1: segfault in forward"));
  EXPECT_FALSE(glob_match("segfault", "rank 1: segfault"));
  EXPECT_TRUE(glob_match("user_*", "user_error"));
}

JobSpec with_rules(int attempts, std::vector<ExitRule> rules) {
  JobSpec spec;
  spec.retry.attempts = attempts;
  spec.retry.evaluate_on_exit = std::move(rules);
  return spec;
}

ExitRule rule(std::optional<std::string> code, std::optional<std::string> reason, std::optional<std::string> cls,
              RetryAction action) {
  return ExitRule{std::move(code), std::move(reason), std::move(cls), action};
}

RetryDecision decide(const JobSpec& spec, int used, const AttemptFacts& facts, int infra_used = 0, int infra_max = 3) {
  return decide_retry(spec, used, infra_used, infra_max, facts, classify_failure(facts));
}

TEST(DecideRetry, WithoutRulesRetriesWhileAttemptsRemain) {
  const JobSpec spec = with_rules(3, {});
  EXPECT_EQ(decide(spec, 1, exit_with(1)).step, NextStep::retry);
  EXPECT_EQ(decide(spec, 2, exit_with(1)).step, NextStep::retry);
  const RetryDecision last = decide(spec, 3, exit_with(1));
  EXPECT_EQ(last.step, NextStep::fail);
  EXPECT_THAT(last.why, HasSubstr("all 3 attempts failed"));
  EXPECT_EQ(decide(with_rules(1, {}), 1, exit_with(1)).step, NextStep::fail);
}

TEST(DecideRetry, AClassThatIsNotRetryableFailsAtOnceUnlessTheJobsRuleSaysRetry) {
  const AttemptFacts never_started =
      exit_with(127, "launch failed: command not found: trian.py (PATH searched: /usr/local/bin:/usr/bin:/bin)");
  const RetryDecision d = decide(with_rules(3, {}), 1, never_started);
  EXPECT_EQ(d.step, NextStep::fail);
  EXPECT_THAT(d.why, HasSubstr("file_not_found is not retried"));
  const JobSpec insists = with_rules(3, {rule("127", std::nullopt, std::nullopt, RetryAction::retry)});
  EXPECT_EQ(decide(insists, 1, never_started).step, NextStep::retry);
}

TEST(DecideRetry, FirstMatchingRuleWins) {
  const JobSpec spec = with_rules(5, {rule("1[0-9]", std::nullopt, std::nullopt, RetryAction::exit),
                                      rule("1*", std::nullopt, std::nullopt, RetryAction::retry),
                                      rule("*", std::nullopt, std::nullopt, RetryAction::exit)});
  const RetryDecision twelve = decide(spec, 1, exit_with(12));
  EXPECT_EQ(twelve.step, NextStep::fail);
  EXPECT_THAT(twelve.why, HasSubstr("evaluate_on_exit[0] says exit"));
  const RetryDecision one = decide(spec, 1, exit_with(1));
  EXPECT_EQ(one.step, NextStep::retry);
  EXPECT_THAT(one.why, HasSubstr("evaluate_on_exit[1] says retry"));
  const RetryDecision two = decide(spec, 1, exit_with(2));
  EXPECT_EQ(two.step, NextStep::fail);
  EXPECT_THAT(two.why, HasSubstr("evaluate_on_exit[2]"));
}

TEST(DecideRetry, EveryGlobOfARuleMustMatch) {
  const JobSpec spec = with_rules(5, {rule("1", "*flaky*", "user_error", RetryAction::exit)});
  EXPECT_EQ(decide(spec, 1, exit_with(1, "a flaky test")).step, NextStep::fail);
  EXPECT_EQ(decide(spec, 1, exit_with(1, "a solid failure")).step, NextStep::retry) << "reason glob did not match";
  EXPECT_EQ(decide(spec, 1, exit_with(2, "a flaky test")).step, NextStep::retry) << "exit code glob did not match";
  EXPECT_EQ(decide(spec, 1, exit_with(1, "flaky: loss is NaN at step 3")).step, NextStep::retry) << "class is nan_loss, not user_error";
}

TEST(DecideRetry, ClassGlobAndSignalWithoutExitCode) {
  const JobSpec spec = with_rules(5, {rule("?*", std::nullopt, std::nullopt, RetryAction::exit),
                                      rule(std::nullopt, std::nullopt, "oom", RetryAction::exit)});
  // A signal leaves no exit code to match: the first rule needs one character at least.
  EXPECT_EQ(decide(spec, 1, killed_by(SIGSEGV)).step, NextStep::retry);
  EXPECT_EQ(decide(spec, 1, killed_by(SIGKILL, "oom-kill: out of memory")).step, NextStep::fail);
}

TEST(DecideRetry, RetryRuleStillRespectsTheAttemptLimit) {
  const JobSpec spec = with_rules(2, {rule("*", std::nullopt, std::nullopt, RetryAction::retry)});
  EXPECT_EQ(decide(spec, 1, exit_with(1)).step, NextStep::retry);
  const RetryDecision d = decide(spec, 2, exit_with(1));
  EXPECT_EQ(d.step, NextStep::fail);
  EXPECT_THAT(d.why, HasSubstr("all 2 attempts are used"));
}

TEST(DecideRetry, InfrastructureRetriesUseTheirOwnLimit) {
  AttemptFacts lost;
  lost.node_lost = true;
  const JobSpec spec = with_rules(1, {rule("*", std::nullopt, std::nullopt, RetryAction::exit)});
  // Neither the used attempts nor an exit rule stop an infrastructure retry...
  EXPECT_EQ(decide(spec, 1, lost, 0, 2).step, NextStep::retry_infrastructure);
  EXPECT_EQ(decide(spec, 1, lost, 1, 2).step, NextStep::retry_infrastructure);
  // ...only its own limit does.
  const RetryDecision d = decide(spec, 1, lost, 2, 2);
  EXPECT_EQ(d.step, NextStep::fail);
  EXPECT_THAT(d.why, HasSubstr("infrastructure retries exhausted"));
  EXPECT_EQ(decide(spec, 1, exit_with(1, "collective allreduce timeout"), 0, 2).step, NextStep::retry_infrastructure);
}

TEST(DecideRetry, CancelledNeverRetries) {
  AttemptFacts f = exit_with(1);
  f.cancelled = true;
  EXPECT_EQ(decide(with_rules(10, {}), 1, f).step, NextStep::fail);
  f.node_lost = true;
  EXPECT_EQ(decide(with_rules(10, {}), 1, f).step, NextStep::fail);
}

}  // namespace
}  // namespace trainyard::daemon
