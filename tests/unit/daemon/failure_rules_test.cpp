// Failure rules as data: the defaults, operators' own rules before them, and strict validation.
#include <gtest/gtest.h>

#include <csignal>
#include <utility>

#include "daemon/base/failure_rules.h"

namespace trainyard::daemon {
namespace {

AttemptFacts failed_with(std::optional<int> code, std::optional<int> signal, std::string reason, std::string log = "") {
  AttemptFacts f;
  f.exit_code = code;
  f.signal = signal;
  f.reason = std::move(reason);
  f.log_tail = std::move(log);
  return f;
}

TEST(FailureRules, WholeWordMarkersDoNotMatchInsideOtherWords) {
  const FailureRules& rules = FailureRules::defaults();
  EXPECT_EQ(rules.classify(failed_with(1, std::nullopt, "no room left in the queue")).name, "user_error");
  EXPECT_EQ(rules.classify(failed_with(1, std::nullopt, "the nanny process exited")).name, "user_error");
  EXPECT_EQ(rules.classify(failed_with(std::nullopt, SIGKILL, "", "kernel: oom-kill: task python")).name, "oom");
  EXPECT_EQ(rules.classify(failed_with(1, std::nullopt, "nan_loss: loss is nan at step 12")).name, "nan_loss");
  EXPECT_EQ(rules.classify(failed_with(1, std::nullopt,
                                       "collective_timeout: rank 1 (127.0.0.1:4000) did not answer within 5000 ms"))
                .name,
            "collective_timeout");
}

// Last lines of real jobs' logs, as the agent sends them with an exit.
constexpr const char* kMissingModule = R"(Traceback (most recent call last):
  File "/home/alice/train.py", line 3, in <module>
    import torchvision.transforms as T
ModuleNotFoundError: No module named 'torchvision'
)";
constexpr const char* kCudaOom = R"([rank1]: Traceback (most recent call last):
[rank1]:   File "train.py", line 88, in <module>
[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.10 GiB of which 1.06 GiB is free.
)";
constexpr const char* kNcclWatchdog = R"([rank0]:[E1128 10:21:33.123 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1043, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) ran for 600021 milliseconds before timing out.
[rank0]: terminate called after throwing an instance of 'c10::DistBackendError'
)";
constexpr const char* kNcclPeerGone = R"(torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL version 2.21.5
ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.
)";
constexpr const char* kNcclUsage = R"(RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.21.5
ncclInvalidUsage: This usually reflects invalid usage of NCCL library.
)";
constexpr const char* kMissingFile = R"(Loading shards from /data/shards
FileNotFoundError: [Errno 2] No such file or directory: '/data/shards/train-00000.bin'
)";

TEST(FailureRules, WhatRealJobsPrintIsClassifiedAndQuoted) {
  const FailureRules& rules = FailureRules::defaults();
  const FailureClass module = rules.classify(failed_with(1, std::nullopt, "exited with code 1", kMissingModule));
  EXPECT_EQ(module.name, "user_error");
  EXPECT_NE(module.suggestion.find("ModuleNotFoundError: No module named 'torchvision'"), std::string::npos)
      << module.suggestion;

  const FailureClass oom = rules.classify(failed_with(1, std::nullopt, "exited with code 1", kCudaOom));
  EXPECT_EQ(oom.name, "oom");
  EXPECT_NE(oom.suggestion.find("accelerator ran out of memory"), std::string::npos) << oom.suggestion;
  EXPECT_NE(oom.suggestion.find("[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."),
            std::string::npos)
      << oom.suggestion;

  const FailureClass watchdog = rules.classify(failed_with(std::nullopt, SIGABRT, "killed by signal 6", kNcclWatchdog));
  EXPECT_EQ(watchdog.name, "collective_timeout") << "the watchdog's abort is the timeout's doing, not a crash";
  EXPECT_FALSE(watchdog.infrastructure) << "the job's own log says so, and nothing the system saw";

  const FailureClass peer = rules.classify(failed_with(1, std::nullopt, "exited with code 1", kNcclPeerGone));
  EXPECT_EQ(peer.name, "collective_error");
  EXPECT_FALSE(peer.infrastructure) << "printed by the job alone";
  AttemptFacts checked = failed_with(1, std::nullopt, "exited with code 1", kNcclPeerGone);
  checked.node_failed_check = true;
  EXPECT_TRUE(rules.classify(checked).infrastructure) << "a peer that went away with a node that then failed its check";
  const FailureClass usage = rules.classify(failed_with(1, std::nullopt, "exited with code 1", kNcclUsage));
  EXPECT_EQ(usage.name, "collective_error");
  EXPECT_FALSE(usage.infrastructure) << "invalid usage of NCCL is the program's";

  const FailureClass file = rules.classify(failed_with(1, std::nullopt, "exited with code 1", kMissingFile));
  EXPECT_EQ(file.name, "file_not_found");
  EXPECT_NE(file.suggestion.find("'/data/shards/train-00000.bin'"), std::string::npos) << file.suggestion;
  EXPECT_EQ(rules.classify(failed_with(127, std::nullopt, "exited with code 127", "sh: 1: ./trian.sh: not found\n")).name,
            "file_not_found");

  EXPECT_EQ(rules.classify(failed_with(std::nullopt, SIGSEGV, "killed by signal 11")).name, "crashed");
  EXPECT_EQ(rules.classify(failed_with(std::nullopt, SIGBUS, "killed by signal 7")).name, "crashed");
  EXPECT_NE(rules.classify(failed_with(std::nullopt, SIGBUS, "")).suggestion.find("/dev/shm"), std::string::npos);
}

constexpr const char* kValueError = R"(step 10 loss 2.31
Traceback (most recent call last):
  File "/home/alice/train.py", line 40, in <module>
    main()
  File "/home/alice/train.py", line 31, in main
    raise ValueError(f"learning rate {lr} must be positive")
ValueError: learning rate -0.1 must be positive
)";
constexpr const char* kChainedInTorchrun = R"([rank0]: Traceback (most recent call last):
[rank0]:   File "train.py", line 12, in load
[rank0]: KeyError: 'model'
[rank0]: During handling of the above exception, another exception occurred:
[rank0]:   File "train.py", line 20, in <module>
[rank0]:     raise RuntimeError("checkpoint has no model state") from e
[rank0]: RuntimeError: checkpoint has no model state
)";

TEST(FailureRules, APythonTracebackIsSummedUpByItsExceptionLine) {
  const FailureRules& rules = FailureRules::defaults();
  const FailureClass raised = rules.classify(failed_with(1, std::nullopt, "exited with code 1", kValueError));
  EXPECT_EQ(raised.name, "user_error");
  EXPECT_EQ(raised.suggestion, "The program raised ValueError: learning rate -0.1 must be positive; the traceback before "
                               "that line in its log says where.");
  const FailureClass chained = rules.classify(failed_with(1, std::nullopt, "exited with code 1", kChainedInTorchrun));
  EXPECT_NE(chained.suggestion.find("[rank0]: RuntimeError: checkpoint has no model state;"), std::string::npos)
      << chained.suggestion;
  // Without a traceback, the exit code is all there is to say.
  EXPECT_EQ(rules.classify(failed_with(2, std::nullopt, "exited with code 2", "usage: train.py [-h]\n")).suggestion,
            "The program exited with code 2; check its logs.");
}

TEST(FailureRules, AnOomAtTheJobsOwnMemoryLimitSaysToRaiseIt) {
  const FailureClass oom = FailureRules::defaults().classify(failed_with(
      std::nullopt, SIGKILL,
      "rank 0 on node-1: out of memory: the kernel's OOM killer killed 1 process at the job's memory_mb of 2048 MiB "
      "(peak 2047 MiB); killed by signal 9 (Killed)"));
  EXPECT_EQ(oom.name, "oom");
  EXPECT_NE(oom.suggestion.find("raise memory_mb (submit --mem 16G"), std::string::npos) << oom.suggestion;
  EXPECT_NE(oom.suggestion.find("memory_mb of 2048 MiB"), std::string::npos) << oom.suggestion;
  // A kernel OOM kill without the job's own limit keeps the general advice.
  EXPECT_EQ(FailureRules::defaults().classify(failed_with(std::nullopt, SIGKILL, "", "kernel: oom-kill: task python")).suggestion,
            "The process ran out of memory; lower the batch size or use more nodes.");
}

TEST(FailureRules, AQuotedLineIsBoundedWithoutControlsAndSecretsMasked) {
  const FailureRules rules = FailureRules::parse(Json::parse(R"({"rules": [
    {"class": "config", "when": ["failed"], "log_tail": ["*bad config*"], "suggestion": "Fix it: {line}"}
  ]})"));
  const std::string log = "ok\n  bad config: AWS_SECRET_ACCESS_KEY=hunter2 HOST=h1 \x1b[31mred " + std::string(300, 'x') + "\n";
  const std::string suggestion = rules.classify(failed_with(1, std::nullopt, "", log)).suggestion;
  EXPECT_EQ(suggestion.find("hunter2"), std::string::npos) << suggestion;
  EXPECT_NE(suggestion.find("Fix it: bad config: AWS_SECRET_ACCESS_KEY=<masked> HOST=h1 [31mred"), std::string::npos)
      << suggestion;
  EXPECT_EQ(suggestion.find('\x1b'), std::string::npos);
  EXPECT_LT(suggestion.size(), 200u);
  EXPECT_TRUE(suggestion.ends_with("...")) << suggestion;
}

TEST(FailureRules, OperatorRulesComeFirstAndFillTheirSuggestion) {
  const FailureRules mine = FailureRules::parse(Json::parse(R"({"rules": [
    {"class": "preempted", "infrastructure": true, "log_is_evidence": true, "when": ["signal"], "signal": "15",
     "log_tail": ["*spot instance reclaimed*"], "suggestion": "Reclaimed (signal {signal}); retried elsewhere."},
    {"class": "flaky_fabric", "infrastructure": true, "log_tail": ["*fabric flap*"], "suggestion": "Retried."}
  ]})"));
  const FailureRules rules = mine.followed_by(FailureRules::defaults());
  EXPECT_EQ(rules.size(), FailureRules::defaults().size() + 2);
  const FailureClass cls = rules.classify(failed_with(std::nullopt, SIGTERM, "", "notice: spot instance reclaimed"));
  EXPECT_EQ(cls.name, "preempted");
  EXPECT_TRUE(cls.infrastructure);
  EXPECT_EQ(cls.suggestion, "Reclaimed (signal 15); retried elsewhere.");
  const FailureClass printed = rules.classify(failed_with(1, std::nullopt, "exited with code 1", "fabric flap"));
  EXPECT_EQ(printed.name, "flaky_fabric");
  EXPECT_FALSE(printed.infrastructure) << "a log line is the job's own unless the operator says it is evidence";
  // Without the marker the defaults still apply.
  EXPECT_EQ(rules.classify(failed_with(std::nullopt, SIGTERM, "")).name, "user_error");
}

// The agent's reasons for a program that never ran (agent/launch_failure.h), as the first failed
// rank's reason: classified, and not retried.
TEST(FailureRules, AProgramThatCouldNotBeStartedIsTheJobsOwnAndNotRetried) {
  const FailureRules& rules = FailureRules::defaults();
  const std::pair<const char*, const char*> cases[] = {
      {"launch failed: command not found: trian.py (PATH searched: /usr/local/bin:/usr/bin:/bin)", "file_not_found"},
      {"launch failed: no such file: ./run.sh (looked for in /home/ana/exp)", "file_not_found"},
      {"launch failed: interpreter not found: /home/ana/eval.py names /usr/bin/python9 on its #! line, and there is "
       "no such file",
       "file_not_found"},
      {"launch failed: /home/ana/train.sh is not executable (mode 0644, owner uid 1000 gid 1000): chmod +x it, or run "
       "it through its interpreter (python3 ./train.sh)",
       "user_error"},
      {"launch failed: the working directory /home/ana/exp cannot be entered by account tyj-3 (uid 60003): "
       "Permission denied (mode 0700, owner uid 1000 gid 1000)",
       "user_error"}};
  for (const auto& [reason, expected] : cases) {
    const FailureClass cls = rules.classify(failed_with(127, std::nullopt, reason));
    EXPECT_EQ(cls.name, expected) << reason;
    EXPECT_FALSE(cls.retryable) << reason;
    EXPECT_FALSE(cls.infrastructure) << reason;
    EXPECT_NE(cls.suggestion.find("launch failed: "), std::string::npos) << cls.suggestion;
  }
  // An ordinary exit 127 (a shell whose command was not found) is retried as any failure.
  EXPECT_TRUE(rules.classify(failed_with(127, std::nullopt, "exited with code 127", "sh: 1: trian: not found")).retryable);
  const FailureRules mine = FailureRules::parse(Json::parse(R"({"rules": [
    {"class": "bad_input", "retry": false, "log_tail": ["*invalid dataset*"], "suggestion": "Fix the dataset."}]})"));
  EXPECT_FALSE(mine.classify(failed_with(1, std::nullopt, "", "error: invalid dataset shard 3")).retryable);
}

TEST(FailureRules, ANodeThatCouldNotMakeTheAttemptsNetworkIsTheNodesFault) {
  const FailureClass cls = FailureRules::defaults().classify(failed_with(
      127, std::nullopt,
      "node network: cannot give the attempt its own network: ip link add tyj0af00004 type veth: RTNETLINK answers: "
      "Operation not permitted"));
  EXPECT_EQ(cls.name, "node_network");
  EXPECT_TRUE(cls.infrastructure);
  EXPECT_NE(cls.suggestion.find("ip link add"), std::string::npos) << cls.suggestion;
}

TEST(FailureRules, BadRulesAreRefusedNamingTheField) {
  auto field_of = [](const char* text) {
    try {
      FailureRules::parse(Json::parse(text));
    } catch (const InvalidInput& e) {
      return e.field();
    }
    return std::string("<accepted>");
  };
  EXPECT_EQ(field_of(R"({"rules": [{"class": "x", "suggestion": "s", "when": ["raining"]}]})"), "rules[0].when[0]");
  EXPECT_EQ(field_of(R"({"rules": [{"class": "x"}]})"), "rules[0].suggestion");
  EXPECT_EQ(field_of(R"({"rules": [{"class": "x", "suggestion": "s", "regex": "y"}]})"), "rules[0].regex");
  EXPECT_EQ(field_of(R"({"rules": [{"class": "has space", "suggestion": "s"}]})"), "rules[0].class");
  EXPECT_EQ(field_of(R"({"rules": [{"class": "x", "suggestion": "s", "retry": "no"}]})"), "rules[0].retry");
  EXPECT_EQ(field_of(R"({"rules": 3})"), "rules");
  EXPECT_EQ(field_of(R"({"rules": [], "extra": 1})"), "extra");
  EXPECT_EQ(field_of(R"({"rules": []})"), "<accepted>");
}

}  // namespace
}  // namespace trainyard::daemon
