// History and the CLI that follows, end to end: GET /v1/jobs's filters over real finished jobs,
// `trainyard history`, `submit --wait`'s exit codes, batch scripts and `logs --follow` ending with
// the job.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

class CliFollow : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster.start_daemon();
    cluster.start_agent("node-a");
    cluster.start_agent("node-b");
    cluster.wait_for_nodes(2);
  }

  // Runs the CLI as the admin; its exit status, with stdout (and stderr) in `output`. From the
  // shared directory: a job submitted from it starts there, as the job's own account.
  int cli(const std::string& args) {
    const std::string out = cluster.dir() + "/cli.out";
    const std::string command = "cd " + cluster.shared_dir() + " && " + std::string(TRAINYARD_CLI_BIN) + " --server " + cluster.url() + " --token-file " +
                                cluster.dir() + "/data/admin.token " + args + " > " + out + " 2>&1";
    const int status = std::system(command.c_str());
    output = read_text(out);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // Writes a batch script into the shared directory and submits it (with `args` after it); the
  // job's id, 0 when submit failed.
  std::int64_t submit_script(const std::string& name, const std::string& text, const std::string& args = "") {
    std::ofstream(cluster.shared_dir() + "/" + name) << text;
    const int status = cli("submit " + name + (args.empty() ? "" : " " + args));
    EXPECT_EQ(status, 0) << output;
    return status == 0 ? submitted_id() : 0;
  }

  // The id `submit` printed ("Submitted job N").
  std::int64_t submitted_id() const {
    const auto at = output.find("Submitted job ");
    EXPECT_NE(at, std::string::npos) << output;
    return at == std::string::npos ? 0 : std::stoll(output.substr(at + 14));
  }

  Cluster cluster;
  std::string output;
};

TEST_F(CliFollow, HistoryFiltersFinishedJobsAndReportsTheirAccounting) {
  const auto ok = cluster.submit(shell_job("fine", "exit 0"));
  const auto failed = cluster.submit(shell_job("broken", "exit 3"));
  const auto cancelled = cluster.submit(shell_job("slow", "sleep 60"));
  cluster.wait_job_state(ok, "SUCCEEDED", 20s);
  cluster.wait_job_state(failed, "FAILED", 20s);
  cluster.wait_job_state(cancelled, "RUNNING", 20s);
  ASSERT_EQ(cluster.api("POST", "/v1/jobs/" + std::to_string(cancelled) + "/cancel").status, 200);
  cluster.wait_job_state(cancelled, "CANCELLED", 20s);

  const auto ids_of = [](const Json& body) {
    std::vector<std::int64_t> ids;
    for (const Json& j : body["jobs"]) ids.push_back(j["id"]);
    return ids;
  };
  const ApiResult failures = cluster.api("GET", "/v1/jobs?state=FAILED,CANCELLED&since=1h");
  ASSERT_EQ(failures.status, 200) << failures.body.dump();
  EXPECT_EQ(ids_of(failures.body), (std::vector<std::int64_t>{cancelled, failed}));
  const Json& accounting = failures.body["jobs"][1]["accounting"];
  EXPECT_EQ(failures.body["jobs"][1]["exit_code"], 3);
  EXPECT_EQ(accounting["nodes"], 1);
  EXPECT_EQ(accounting["cores"], 4);  // the whole node
  EXPECT_TRUE(accounting["elapsed_s"].is_number()) << accounting.dump();
  EXPECT_GE(accounting["wait_s"].get<double>(), 0);
  EXPECT_GT(accounting["core_hours"].get<double>(), 0);

  EXPECT_TRUE(ids_of(cluster.api("GET", "/v1/jobs?until=2000-01-01").body).empty());
  EXPECT_EQ(ids_of(cluster.api("GET", "/v1/jobs?after=" + std::to_string(ok)).body),
            (std::vector<std::int64_t>{cancelled, failed}));
  const ApiResult bad = cluster.api("GET", "/v1/jobs?since=last-week");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body["error"]["field"], "since") << bad.body.dump();
  EXPECT_EQ(cluster.api("GET", "/v1/jobs?state=DONE").body["error"]["field"], "state");

  ASSERT_EQ(cli("history --since 1d --state failed --csv --format id,name,state,exit,cores"), 0) << output;
  EXPECT_EQ(output, "id,name,state,exit,cores\n" + std::to_string(failed) + ",broken,FAILED,3,4");  // read_text trims
  ASSERT_EQ(cli("history"), 0) << output;  // finished jobs by default, as a table
  EXPECT_NE(output.find("ELAPSED"), std::string::npos) << output;
  EXPECT_NE(output.find("fine"), std::string::npos) << output;
  EXPECT_EQ(cli("history --since yesterday"), 2) << output;
  EXPECT_NE(output.find("--since"), std::string::npos) << output;
}

// The CLI names array tasks as ID_N and an array by its id: release of one
// task, then of the rest by the array's id; the history shows the array as one row and, with
// --array, its tasks.
TEST_F(CliFollow, ArraysAreReleasedByTaskOrWholeAndFoldedInTheHistory) {
  Json sweep = shell_job("sweep", "exit 0");
  sweep["array"] = "0-1";
  sweep["hold"] = true;
  const auto id = cluster.submit(sweep);
  const std::string array = std::to_string(id);
  ASSERT_EQ(cli("release " + array + "_1"), 0) << output;
  EXPECT_EQ(output.rfind("Job " + array + "_1 released", 0), 0u) << output;
  cluster.wait_job_state(id + 1, "SUCCEEDED", 20s);
  EXPECT_EQ(cluster.api("GET", "/v1/jobs/" + array).body["state"], "PENDING") << "task 0 is still held";
  ASSERT_EQ(cli("release " + array), 0) << output;
  EXPECT_EQ(output, "Array job " + array + ": 1 task released, 0 unchanged") << output;  // read_text trims
  cluster.wait_job_state(id, "SUCCEEDED", 20s);

  ASSERT_EQ(cli("history --csv --format id,state"), 0) << output;
  EXPECT_EQ(output, "id,state\n" + array + "_[0-1],SUCCEEDED") << output;
  ASSERT_EQ(cli("history --array " + array + " --csv --format id,state"), 0) << output;
  EXPECT_EQ(output, "id,state\n" + array + "_1,SUCCEEDED\n" + array + "_0,SUCCEEDED") << output;
}

// sbatch's habit: a batch script whose #SBATCH lines are the job's options runs as every rank, with
// the arguments that followed it; an option we do not take is refused before anything is submitted.
TEST_F(CliFollow, ABatchScriptRunsAsEveryRankWithItsSbatchOptionsAndArguments) {
  const std::int64_t id = submit_script("train.sbatch",
                                        "#!/bin/sh\n"
                                        "#SBATCH -N 2 -J scripted   # both nodes\n"
                                        "#SBATCH --env GREETING=hello\n"
                                        "echo \"rank=$RANK of $WORLD_SIZE args=$* greeting=$GREETING\"\n",
                                        "one two");
  ASSERT_NE(id, 0);
  const Json job = cluster.wait_job_state(id, "SUCCEEDED", 30s);
  EXPECT_EQ(job["name"], "scripted");
  EXPECT_EQ(job["spec"]["nodes"], 2) << job.dump(2);
  for (const int rank : {0, 1}) {
    const std::string log =
        cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/logs?rank=" + std::to_string(rank)).body["logs"][0]["text"];
    EXPECT_NE(log.find("rank=" + std::to_string(rank) + " of 2 args=one two greeting=hello"), std::string::npos) << log;
  }

  { std::ofstream(cluster.shared_dir() + "/partition.sbatch") << "#!/bin/sh\n#SBATCH -p gpu\ntrue\n"; }
  EXPECT_NE(cli("submit partition.sbatch"), 0) << output;
  EXPECT_NE(output.find("partition.sbatch:2"), std::string::npos) << output;
  EXPECT_EQ(cluster.api("GET", "/v1/jobs/" + std::to_string(id + 1)).status, 404) << "nothing was submitted";
}

// sbatch's -o/-e: the output lands in the job's files as well as in its logs, Slurm's patterns
// filled in; a file without the node in its name is the first node's, as the batch node's is.
TEST_F(CliFollow, ABatchScriptsOutputAndErrorFilesAreWrittenInItsDirectory) {
  const std::int64_t id = submit_script("files.sbatch",
                                        "#!/bin/sh\n"
                                        "#SBATCH -N 2 -J files\n"
                                        "#SBATCH -o out-%x-%j.txt\n"
                                        "#SBATCH --error=err-%N.txt\n"
                                        "echo \"out of rank $RANK\"\n"
                                        "echo \"err of rank $RANK\" >&2\n");
  ASSERT_NE(id, 0);
  const Json job = cluster.wait_job_state(id, "SUCCEEDED", 30s);
  EXPECT_EQ(read_text(cluster.shared_dir() + "/out-files-" + std::to_string(id) + ".txt"), "out of rank 0");
  const Json attempt = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/attempts").body["attempts"][0];
  for (const int rank : {0, 1}) {
    const std::string node = attempt["nodes"][rank];
    EXPECT_EQ(read_text(cluster.shared_dir() + "/err-" + node + ".txt"), "err of rank " + std::to_string(rank));
    const std::string log =
        cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/logs?rank=" + std::to_string(rank)).body["logs"][0]["text"];
    EXPECT_NE(log.find("out of rank " + std::to_string(rank)), std::string::npos) << log;
    EXPECT_NE(log.find("err of rank " + std::to_string(rank)), std::string::npos) << log;
  }

  // The file is opened as the job's account, never as the root agent: /etc is not the job's to write.
  const std::string forbidden = "/etc/trainyard-it-" + std::to_string(::getpid());
  const std::int64_t denied = submit_script("etc.sbatch", "#!/bin/sh\n#SBATCH -o " + forbidden + "\necho never\n");
  ASSERT_NE(denied, 0);
  const Json failed = cluster.wait_job_state(denied, "FAILED", 30s);
  EXPECT_NE(failed["reason"].get<std::string>().find(forbidden + " (--output) cannot be opened"), std::string::npos)
      << failed.dump(2);
  EXPECT_FALSE(std::filesystem::exists(forbidden));
}

TEST_F(CliFollow, SubmitWaitExitsWithTheJobsExitCode) {
  EXPECT_EQ(cli("submit --wait -- /bin/sh -c 'exit 0'"), 0) << output;
  EXPECT_NE(output.find("SUCCEEDED"), std::string::npos) << output;
  EXPECT_EQ(cli("submit --wait -- /bin/sh -c 'exit 5'"), 5) << output;
  EXPECT_NE(output.find("FAILED (exit code 5, user_error): "), std::string::npos) << "the class and reason are said: " << output;
}

// An array is waited for whole: the last task to end is not the first, and the highest task's
// status is the exit status, as with Slurm's sbatch --wait.
TEST_F(CliFollow, SubmitWaitOfAnArrayFollowsEveryTaskAndExitsWithTheHighestStatus) {
  const std::string tasks = "--array 0-2 -- /bin/sh -c '";
  EXPECT_EQ(cli("submit --wait " + tasks + "sleep $((2 * TRAINYARD_ARRAY_TASK_ID)); exit 0'"), 0) << output;
  EXPECT_NE(output.find("SUCCEEDED (3 SUCCEEDED)"), std::string::npos) << output;
  EXPECT_EQ(cli("submit --wait " + tasks + "sleep $TRAINYARD_ARRAY_TASK_ID; exit $((TRAINYARD_ARRAY_TASK_ID * 3))'"), 6)
      << output;
  EXPECT_NE(output.find("FAILED (2 FAILED, 1 SUCCEEDED)"), std::string::npos) << output;
}

TEST_F(CliFollow, LogsFollowInterleavesRanksAndEndsWhenTheJobEnds) {
  const auto id = cluster.submit(
      shell_job("talker", "for i in 1 2 3; do echo line $i of rank $RANK; sleep 1; done; printf 'no newline'", 2));
  cluster.wait_job_state(id, "RUNNING", 20s);
  ASSERT_EQ(cli("logs " + std::to_string(id) + " --follow"), 0) << output;
  for (const std::string rank : {"0", "1"}) {
    for (const std::string i : {"1", "2", "3"}) {
      const std::string line = "[rank " + rank + "] line " + i + " of rank " + rank + "\n";
      EXPECT_NE(output.find(line), std::string::npos) << line << " missing from:\n" << output;
    }
    EXPECT_NE(output.find("[rank " + rank + "] no newline"), std::string::npos) << output;
  }
  EXPECT_EQ(cluster.api("GET", "/v1/jobs/" + std::to_string(id)).body["state"], "SUCCEEDED");
}

TEST_F(CliFollow, WaitFollowsJobsSubmittedEarlierAndJobsListsTheActiveOnesLikeSqueue) {
  const auto done = cluster.submit(shell_job("done", "exit 0"));
  cluster.wait_job_state(done, "SUCCEEDED", 20s);
  const auto running = cluster.submit(shell_job("later", "sleep 0.5; exit 5"));
  cluster.wait_job_state(running, "RUNNING", 20s);
  // Active by default: the finished job is only listed with --all.
  ASSERT_EQ(cli("jobs"), 0) << output;
  EXPECT_NE(output.find("later"), std::string::npos) << output;
  EXPECT_EQ(output.find("done"), std::string::npos) << output;
  ASSERT_EQ(cli("jobs --all"), 0) << output;
  EXPECT_NE(output.find("done"), std::string::npos) << output;
  ASSERT_EQ(cli("jobs --state SUCCEEDED,FAILED"), 0) << output;
  EXPECT_NE(output.find("done"), std::string::npos) << output;
  EXPECT_EQ(output.find("later"), std::string::npos) << output;

  EXPECT_EQ(cli("wait " + std::to_string(done) + " " + std::to_string(running)), 5) << output;
  EXPECT_NE(output.find("Job " + std::to_string(running) + " FAILED (exit code 5"), std::string::npos) << output;
  const auto held = cluster.submit(Json{{"name", "held"}, {"hold", true}, {"command", {{"argv", {"/bin/true"}}}}});
  EXPECT_EQ(cli("wait " + std::to_string(held) + " --timeout 1s"), 124) << output;
  EXPECT_NE(output.find("timed out after 1 s waiting for job " + std::to_string(held)), std::string::npos) << output;
}

}  // namespace
}  // namespace trainyard::testing
