// The foundation end to end: real daemon and agent processes on loopback.
#include <signal.h>

#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

#include "proto/time.h"
#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

class Jobs : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster.start_daemon();
    cluster.start_agent("node-a");
    cluster.start_agent("node-b");
    cluster.wait_for_nodes(2);
  }
  Cluster cluster;
};

TEST_F(Jobs, CommandJobSucceedsAndItsLogsAreReadable) {
  const auto id = cluster.submit(shell_job("hello", "echo hello from rank $RANK; echo to stderr >&2"));
  const Json job = cluster.wait_job_state(id, "SUCCEEDED", 20s);
  EXPECT_EQ(job["exit_code"], 0);
  const auto logs = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/logs");
  ASSERT_EQ(logs.status, 200) << logs.body.dump();
  ASSERT_EQ(logs.body["logs"].size(), 1u);
  const std::string text = logs.body["logs"][0]["text"];
  EXPECT_NE(text.find("hello from rank 0"), std::string::npos) << text;
  EXPECT_NE(text.find("to stderr"), std::string::npos) << text;
}

TEST_F(Jobs, ARetriedCommandJobIsToldWhereToResumeFrom) {
  // Attempt 1 saves a checkpoint in its own format and fails; attempt 2 must be pointed at it.
  Json spec = shell_job(
      "resumer",
      "if [ -n \"$TRAINYARD_RESUME_FROM\" ]; then echo resuming from $TRAINYARD_RESUME_FROM; exit 0; fi; "
      "mkdir -p $TRAINYARD_CHECKPOINT_DIR/step-0000000005 && echo w > $TRAINYARD_CHECKPOINT_DIR/step-0000000005/model; "
      "exit 1");
  spec["retry"] = {{"attempts", 2}};
  const auto id = cluster.submit(spec);
  cluster.wait_job_state(id, "SUCCEEDED", 30s);
  const std::string path = "/v1/jobs/" + std::to_string(id);
  const Json attempts = cluster.api("GET", path + "/attempts").body["attempts"];
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_FALSE(attempts[0].contains("resumed_from"));
  const std::string resumed = attempts[1].value("resumed_from", "");
  EXPECT_NE(resumed.find("/job-" + std::to_string(id) + "/step-0000000005"), std::string::npos) << attempts.dump(2);
  const std::string log = cluster.api("GET", path + "/logs").body["logs"][0]["text"];
  EXPECT_NE(log.find("resuming from " + resumed), std::string::npos) << log;
}

TEST_F(Jobs, ACommandJobThatStopsWritingProgressIsCaughtAsStuck) {
  // Reports steps 1..5 through its progress file, then hangs without exiting.
  Json spec = shell_job("stalls",
                        "for s in 1 2 3 4 5; do echo \"$s compute\" > $TRAINYARD_PROGRESS_FILE; sleep 0.1; done; "
                        "echo \"5 all-reduce\" > $TRAINYARD_PROGRESS_FILE; sleep 600");
  spec["stuck_after_s"] = 1;
  const auto id = cluster.submit(spec);
  const Json job = cluster.wait_job_state(id, "FAILED", 30s);
  EXPECT_EQ(job["failure_class"], "stuck") << job.dump(2);
  const Json attempt = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/attempts").body["attempts"][0];
  // Its node passed the check that followed the hang: the job's own failure, its one attempt used.
  EXPECT_FALSE(attempt["infrastructure"].get<bool>()) << attempt.dump(2);
  EXPECT_EQ(cluster.api("GET", "/v1/nodes/" + attempt["nodes"][0].get<std::string>()).body["state"], "HEALTHY");
  EXPECT_NE(attempt.value("diagnosis", "").find("rank 0 (" + attempt["nodes"][0].get<std::string>() +
                                                 ") blocked in all-reduce at step 5"),
            std::string::npos)
      << attempt.dump(2);
}

TEST_F(Jobs, ARankFrozenWhileTheOtherAdvancesIsFoundWithinThirtySecondsWithoutStuckAfter) {
  // Both ranks report a step every 0.2 s; rank 1 freezes itself (SIGSTOP) at step 40 while rank 0,
  // which never waits on it (a data-loader rank, a pipeline stage), keeps stepping. No stuck_after_s:
  // the allowance is learned, max(5 x 0.2 s, 30 s). Rank 1 prints the wall clock just before it
  // reports its last step, so the detection is timed from that report, not from the launch.
  const auto id = cluster.submit(
      shell_job("frozen-rank",
                "s=0; while [ $s -lt 400 ]; do s=$((s+1)); "
                "if [ $RANK = 1 ] && [ $s = 40 ]; then echo last_report_at_ms=$(date +%s%3N); fi; "
                "echo \"$s forward\" > $TRAINYARD_PROGRESS_FILE; "
                "if [ $RANK = 1 ] && [ $s = 40 ]; then kill -STOP $$; fi; sleep 0.2; done",
                2));
  const std::string path = "/v1/jobs/" + std::to_string(id);
  const Json job = cluster.wait_job_state(id, "FAILED", 75s);
  EXPECT_EQ(job["failure_class"], "stuck") << job.dump(2);
  const Json attempt = cluster.api("GET", path + "/attempts").body["attempts"][0];
  const std::string frozen = attempt["nodes"][1];
  const std::string diagnosis = attempt.value("diagnosis", "");
  EXPECT_NE(diagnosis.find("rank 1 (" + frozen + ") blocked in forward at step 40"), std::string::npos) << diagnosis;
  EXPECT_NE(diagnosis.find("rank 0 (" + attempt["nodes"][0].get<std::string>() + ") still advancing"), std::string::npos)
      << diagnosis;
  EXPECT_NE(diagnosis.find("learned: 5 x its p99 step interval"), std::string::npos) << diagnosis;
  // Rank 0 kept stepping, so the attempt as a whole never stopped: only the per-rank rule finds this.
  EXPECT_GT(attempt["last_step"].get<std::int64_t>(), 100) << attempt.dump(2);

  const std::string log = cluster.api("GET", path + "/logs?rank=1").body["logs"][0]["text"];
  const std::string marker = "last_report_at_ms=";
  const auto at = log.find(marker);
  ASSERT_NE(at, std::string::npos) << log;
  const std::int64_t last_report_ms = std::stoll(log.substr(at + marker.size()));
  const auto found_after_ms =
      to_unix_ms(*parse_time(attempt["stuck_detected_at"].get<std::string>())) - last_report_ms;
  // The daemon learns of step 40 no sooner than it was written, so the rule's 30 s cannot have run
  // out before. Above it: the agent's read of the progress file and its heartbeat (100 ms here), the
  // tick (50 ms), and scheduling on a loaded host.
  EXPECT_GE(found_after_ms, 30'000) << attempt.dump(2);
  EXPECT_LE(found_after_ms, 30'000 + 100 + 50 + 4'000) << attempt.dump(2);
}

TEST_F(Jobs, TwoNodeJobGetsTwoAgentsWithRanksZeroAndOne) {
  const auto id = cluster.submit(shell_job("pair", "echo rank=$RANK world=$WORLD_SIZE node=$NODE_RANK", 2));
  cluster.wait_job_state(id, "SUCCEEDED", 20s);
  const auto attempts = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/attempts");
  ASSERT_EQ(attempts.body["attempts"].size(), 1u);
  const auto nodes = attempts.body["attempts"][0]["nodes"];
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_NE(nodes[0], nodes[1]);
  const auto logs = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/logs");
  ASSERT_EQ(logs.body["logs"].size(), 2u);
  for (int rank = 0; rank < 2; ++rank) {
    const auto& log = logs.body["logs"][static_cast<std::size_t>(rank)];
    EXPECT_EQ(log["rank"], rank);
    EXPECT_EQ(log["node"], nodes[static_cast<std::size_t>(rank)]);
    EXPECT_NE(log["text"].get<std::string>().find("rank=" + std::to_string(rank) + " world=2"), std::string::npos)
        << log.dump();
  }
  const auto one_rank = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/logs?rank=1");
  ASSERT_EQ(one_rank.body["logs"].size(), 1u);
  EXPECT_EQ(one_rank.body["logs"][0]["rank"], 1);
}

TEST_F(Jobs, JobNeedingMoreThanTheClusterHasIsRefusedUnlessItWaitsForCapacity) {
  // Like sbatch's "Requested node configuration is not available".
  auto refused = cluster.api("POST", "/v1/jobs", shell_job("too-big", "true", 3).dump());
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(refused.body["error"]["field"], "nodes") << refused.body.dump();
  EXPECT_NE(refused.body["error"]["message"].get<std::string>().find("3 nodes asked, and 2 nodes are registered"),
            std::string::npos)
      << refused.body.dump();
  Json fat = shell_job("too-fat", "true");
  fat["cores_per_node"] = 64;
  refused = cluster.api("POST", "/v1/jobs", fat.dump());
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(refused.body["error"]["field"], "cores_per_node") << refused.body.dump();
  EXPECT_TRUE(cluster.api("GET", "/v1/jobs").body["jobs"].empty()) << "a refused job was kept";

  Json waits = shell_job("too-big", "true", 3);
  waits["wait_for_capacity"] = true;
  const auto big = cluster.submit(waits);
  const auto small = cluster.submit(shell_job("small", "true", 1));
  cluster.wait_job_state(small, "SUCCEEDED", 20s);
  const auto job = cluster.api("GET", "/v1/jobs/" + std::to_string(big));
  EXPECT_EQ(job.body["state"], "PENDING");
  EXPECT_EQ(job.body["attempts"], 0);
  ASSERT_TRUE(job.body.contains("pending_reason")) << job.body.dump();
  // No amount of waiting for cores starts it: it waits for a third node (Slurm's ReqNodeNotAvail).
  EXPECT_EQ(job.body["pending_reason"]["code"], "nodes_unavailable") << job.body.dump();
  EXPECT_NE(job.body["pending_reason"]["message"].get<std::string>().find("only 2 in service could"), std::string::npos)
      << job.body.dump();
}

TEST_F(Jobs, ExitCodeThreeFailsTheJobWithThatCode) {
  const auto id = cluster.submit(shell_job("fails", "echo about to fail; exit 3"));
  const Json job = cluster.wait_job_state(id, "FAILED", 20s);
  EXPECT_EQ(job["exit_code"], 3);
  EXPECT_EQ(job["failure_class"], "user_error");
  EXPECT_EQ(job["suggestion"], "The program exited with code 3; check its logs.") << job.dump(2);
  EXPECT_EQ(job["reason"].get<std::string>().find("check its logs"), std::string::npos) << job.dump(2);
  const auto attempts = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/attempts");
  EXPECT_EQ(attempts.body["attempts"][0]["exit_code"], 3);
  EXPECT_EQ(attempts.body["attempts"][0]["state"], "FAILED");
}

TEST_F(Jobs, CancelKillsTheRunningProcessGroup) {
  const std::string pid_file = cluster.shared_dir() + "/child.pid";
  // The job's own child (a grandchild of the agent) must die with it: the whole process group goes.
  const auto id = cluster.submit(shell_job("sleeper", "sleep 1000 & echo $! > " + pid_file + "; wait"));
  cluster.wait_job_state(id, "RUNNING", 20s);
  ASSERT_TRUE(eventually([&] { return !read_text(pid_file).empty(); }, 10s));
  const pid_t child = std::stoi(read_text(pid_file));
  ASSERT_EQ(::kill(child, 0), 0) << "the job's child should be running";
  const auto cancel = cluster.api("POST", "/v1/jobs/" + std::to_string(id) + "/cancel");
  EXPECT_EQ(cancel.status, 200) << cancel.body.dump();
  const Json job = cluster.wait_job_state(id, "CANCELLED", 20s);
  EXPECT_TRUE(job["cancel_requested"].get<bool>());
  EXPECT_TRUE(eventually([&] { return ::kill(child, 0) != 0; }, 10s)) << "child " << child << " survived the cancel";
  // Cancelling again is a conflict, not a crash.
  EXPECT_EQ(cluster.api("POST", "/v1/jobs/" + std::to_string(id) + "/cancel").status, 409);
}

TEST_F(Jobs, CancelOfAPendingJobNeverRunsIt) {
  Json never = shell_job("never", "true", 5);
  never["wait_for_capacity"] = true;
  const auto id = cluster.submit(never);
  const auto cancel = cluster.api("POST", "/v1/jobs/" + std::to_string(id) + "/cancel");
  EXPECT_EQ(cancel.status, 200);
  const Json job = cluster.wait_job_state(id, "CANCELLED", 10s);
  EXPECT_EQ(job["attempts"], 0);
}

TEST_F(Jobs, RetriesUntilTheAttemptsRunOut) {
  Json spec = shell_job("flaky", "exit 7");
  spec["retry"] = {{"attempts", 3}};
  const auto id = cluster.submit(spec);
  const Json job = cluster.wait_job_state(id, "FAILED", 30s);
  EXPECT_EQ(job["attempts"], 3);
  EXPECT_EQ(cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/attempts").body["attempts"].size(), 3u);
}

TEST_F(Jobs, AnExitRuleSaysExitAndStopsAtOnce) {
  Json spec = shell_job("rule", "exit 42");
  spec["retry"] = {{"attempts", 5}, {"evaluate_on_exit", {{{"on_exit_code", "4*"}, {"action", "exit"}}}}};
  const auto id = cluster.submit(spec);
  const Json job = cluster.wait_job_state(id, "FAILED", 20s);
  EXPECT_EQ(job["attempts"], 1);
  EXPECT_NE(job["reason"].get<std::string>().find("evaluate_on_exit[0] says exit"), std::string::npos) << job.dump();
}

TEST_F(Jobs, AnExitRuleSaysRetryAndTheJobRetries) {
  // Fails with 7 the first time (leaving a mark where every attempt of the job can see it).
  Json spec = shell_job("flaky",
                        "[ -f $TRAINYARD_CHECKPOINT_DIR/tried ] && exit 0; mkdir -p $TRAINYARD_CHECKPOINT_DIR; "
                        "touch $TRAINYARD_CHECKPOINT_DIR/tried; exit 7");
  spec["retry"] = {{"attempts", 2}, {"evaluate_on_exit", {{{"on_exit_code", "7"}, {"action", "retry"}}, {{"on_exit_code", "*"}, {"action", "exit"}}}}};
  const auto id = cluster.submit(spec);
  const Json job = cluster.wait_job_state(id, "SUCCEEDED", 20s);
  EXPECT_EQ(job["attempts"], 2) << job.dump(2);
}

TEST_F(Jobs, UsersSeeOnlyTheirOwnJobs) {
  const auto token = cluster.api("POST", "/v1/tokens", R"({"user":"alice"})");
  ASSERT_EQ(token.status, 201) << token.body.dump();
  const std::string alice = token.body["token"];
  const auto admin_job = cluster.submit(shell_job("admins", "true"));
  const auto alice_job = cluster.submit(shell_job("alices", "true"), alice);
  EXPECT_EQ(cluster.api("GET", "/v1/jobs/" + std::to_string(admin_job), "", alice).status, 404);
  EXPECT_EQ(cluster.api("POST", "/v1/jobs/" + std::to_string(admin_job) + "/cancel", "", alice).status, 404);
  EXPECT_EQ(cluster.api("GET", "/v1/jobs/" + std::to_string(alice_job), "", alice).status, 200);
  const auto list = cluster.api("GET", "/v1/jobs", "", alice);
  ASSERT_EQ(list.body["jobs"].size(), 1u);
  EXPECT_EQ(list.body["jobs"][0]["user"], "alice");
}

TEST_F(Jobs, TheCliSubmitsAndLists) {
  const std::string out = cluster.dir() + "/cli.out";
  const std::string env = "TRAINYARD_SERVER=" + cluster.url() + " TRAINYARD_TOKEN=" + cluster.admin_token() + " ";
  const std::string cli = std::string(TRAINYARD_CLI_BIN);
  // As sbatch: the job starts in the directory it was submitted from.
  const std::string from = cluster.shared_dir() + "/exp";
  std::filesystem::create_directory(from);
  std::filesystem::permissions(from, std::filesystem::perms::all);
  ASSERT_EQ(std::system(("cd " + from + " && " + env + cli + " submit --name via-cli -- /bin/sh -c 'echo hi from $(pwd)' > " +
                         out + " 2>&1").c_str()),
            0)
      << read_text(out);
  EXPECT_NE(read_text(out).find("Submitted job"), std::string::npos) << read_text(out);
  const auto id = std::stoll(read_text(out).substr(read_text(out).rfind(' ') + 1));
  cluster.wait_job_state(id, "SUCCEEDED", 20s);
  ASSERT_EQ(std::system((env + cli + " jobs --all > " + out + " 2>&1").c_str()), 0) << read_text(out);
  EXPECT_NE(read_text(out).find("via-cli"), std::string::npos) << read_text(out);
  ASSERT_EQ(std::system((env + cli + " logs " + std::to_string(id) + " > " + out + " 2>&1").c_str()), 0);
  EXPECT_NE(read_text(out).find("hi from " + from), std::string::npos) << read_text(out);
  // An error from the server is a non-zero exit with its message.
  EXPECT_NE(std::system((env + cli + " job 999999 > " + out + " 2>&1").c_str()), 0);
  EXPECT_NE(read_text(out).find("does not exist"), std::string::npos) << read_text(out);
}

TEST(Agents, AWrongJoinTokenIsRefused) {
  Cluster cluster;
  cluster.start_daemon();
  const std::string bad = cluster.dir() + "/bad.token";
  {
    std::ofstream(bad) << "ty_not_the_join_token\n";
  }
  cluster.start_agent("intruder", AgentSpec{4, {}, bad});
  const auto status = cluster.agent("intruder").wait_exit(20s);
  ASSERT_TRUE(status.has_value()) << "the agent should give up";
  EXPECT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 3);
  EXPECT_NE(read_text(cluster.dir() + "/agent-intruder.log").find("join token"), std::string::npos);
  EXPECT_TRUE(cluster.api("GET", "/v1/nodes").body["nodes"].empty());
}

}  // namespace
}  // namespace trainyard::testing
