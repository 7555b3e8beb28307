// Attempt provenance end to end: what the daemon and the agent record about each
// attempt, the facts a command job adds through $TRAINYARD_PROVENANCE_FILE (and hostile files in
// its place), who may read it, and `trainyard diff` between a failed attempt and its retry.
#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

class Provenance : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster.start_daemon();
    cluster.start_agent("node-a");
    cluster.wait_for_nodes(1);
    alice = cluster.api("POST", "/v1/tokens", R"({"user":"alice"})").body["token"].get<std::string>();
    bob = cluster.api("POST", "/v1/tokens", R"({"user":"bob"})").body["token"].get<std::string>();
  }
  std::string provenance_path(std::int64_t job, const std::string& attempt) {
    return "/v1/jobs/" + std::to_string(job) + "/attempts/" + attempt + "/provenance";
  }
  // Runs the CLI as the admin; returns what it printed (stdout and stderr).
  std::string cli(const std::string& args) {
    const std::string out = cluster.dir() + "/cli.out";
    const std::string command = std::string(TRAINYARD_CLI_BIN) + " --server " + cluster.url() + " --token-file " +
                                cluster.dir() + "/data/admin.token " + args + " > " + out + " 2>&1";
    EXPECT_EQ(std::system(command.c_str()), 0) << read_text(out);
    return read_text(out);
  }
  Cluster cluster;
  std::string alice, bob;
};

TEST_F(Provenance, ACommandJobsRunIsRecordedWithTheFactsItWrote) {
  Json spec = shell_job(
      "facts", "printf '{\"torch\":\"2.3.1\",\"dataset\":{\"id\":\"c4-en\"}}' > \"$TRAINYARD_PROVENANCE_FILE\"");
  spec["command"]["env"] = {{"LR", "3e-4"}, {"HF_TOKEN", "hf_do-not-leak"}};
  spec["code_version"] = "git:0123abcd";
  const auto id = cluster.submit(spec, alice);
  cluster.wait_job_state(id, "SUCCEEDED", 30s);

  const ApiResult read = cluster.api("GET", provenance_path(id, "1"), "", alice);
  ASSERT_EQ(read.status, 200) << read.body.dump();
  const Json& p = read.body;
  EXPECT_EQ(p["job"], id);
  EXPECT_EQ(p["attempt"], 1);
  EXPECT_EQ(p["user"], "alice");
  EXPECT_EQ(p["code_version"], "git:0123abcd");
  EXPECT_EQ(p["spec_sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(p["daemon"]["version"], TRAINYARD_VERSION);
  EXPECT_FALSE(p.contains("kernel")) << "a command job has no kernel settings";
  EXPECT_FALSE(p.contains("checkpoint")) << "a first attempt resumes from nothing";
  ASSERT_EQ(p["ranks"].size(), 1u) << p.dump(2);
  const Json& rank = p["ranks"][0];
  EXPECT_EQ(rank["node"], "node-a");
  EXPECT_NE(rank["agent_version"].get<std::string>().find(std::string(TRAINYARD_VERSION) + " (commit "),
            std::string::npos);
  EXPECT_EQ(rank["admitted_by"]["verdict"], "HEALTHY") << p.dump(2);
  EXPECT_GT(rank["admitted_by"]["health_check"].get<std::int64_t>(), 0);
  EXPECT_EQ(rank["environment"]["LR"], "3e-4");
  EXPECT_EQ(rank["environment"]["HF_TOKEN"], "<masked>");
  EXPECT_EQ(rank["environment"]["RANK"], "0");
  EXPECT_EQ(p["spec"]["command"]["env"]["HF_TOKEN"], "<masked>");
  EXPECT_EQ(rank["user_facts"], (Json{{"torch", "2.3.1"}, {"dataset", {{"id", "c4-en"}}}}));
  EXPECT_EQ(p.dump().find("hf_do-not-leak"), std::string::npos) << "a secret left the node";

  EXPECT_EQ(cluster.api("GET", provenance_path(id, "last"), "", alice).body, p);
  EXPECT_EQ(cluster.api("GET", provenance_path(id, "1")).status, 200) << "an admin reads every job's";
  // Another user's job answers as a missing one does, as on the other job routes.
  EXPECT_EQ(cluster.api("GET", provenance_path(id, "1"), "", bob).status, 404);
  EXPECT_EQ(cluster.api("GET", provenance_path(id, "2"), "", alice).status, 404);
  EXPECT_EQ(cluster.api("GET", provenance_path(id, "x"), "", alice).status, 400);
  const Json attempts = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/attempts", "", alice).body;
  EXPECT_FALSE(attempts["attempts"][0].contains("provenance")) << "the list stays small";
}

TEST_F(Provenance, AHostileProvenanceFileIsANoteOnTheAttemptAndTheAgentCarriesOn) {
  const std::vector<std::pair<std::string, std::string>> hostile = {
      {"ln -s /etc/shadow \"$TRAINYARD_PROVENANCE_FILE\"", "symbolic link"},
      {"mkfifo \"$TRAINYARD_PROVENANCE_FILE\"", "not a regular file"},
      {"truncate -s 10G \"$TRAINYARD_PROVENANCE_FILE\"", "larger than"},
      {"printf '[1,2,3]' > \"$TRAINYARD_PROVENANCE_FILE\"", "JSON object"},
  };
  for (const auto& [script, note] : hostile) {
    const auto id = cluster.submit(shell_job("hostile", script));
    cluster.wait_job_state(id, "SUCCEEDED", 30s);
    const Json p = cluster.api("GET", provenance_path(id, "1")).body;
    EXPECT_FALSE(p["ranks"][0].contains("user_facts")) << script;
    EXPECT_NE(p["ranks"][0].value("user_facts_error", "").find(note), std::string::npos) << script << "\n" << p.dump(2);
  }
}

TEST_F(Provenance, TheDiffOfARetryShowsTheCheckpointItResumedFrom) {
  // Attempt 1 saves a checkpoint in its own format and fails; attempt 2 resumes from it.
  Json spec = shell_job("resumer",
                        "printf '{\"attempt\":\"%s\"}' \"$TRAINYARD_ATTEMPT\" > \"$TRAINYARD_PROVENANCE_FILE\"; "
                        "if [ -n \"$TRAINYARD_RESUME_FROM\" ]; then exit 0; fi; "
                        "mkdir -p $TRAINYARD_CHECKPOINT_DIR/step-0000000005 && echo w > "
                        "$TRAINYARD_CHECKPOINT_DIR/step-0000000005/model; exit 1");
  spec["retry"] = {{"attempts", 2}};
  const auto id = cluster.submit(spec);
  cluster.wait_job_state(id, "SUCCEEDED", 30s);
  const Json second = cluster.api("GET", provenance_path(id, "2")).body;
  EXPECT_EQ(second["checkpoint"]["step"], 5) << second.dump(2);

  const std::string job = std::to_string(id);
  const std::string diff = cli("diff " + job + "/1 " + job);
  EXPECT_NE(diff.find("--- job " + job + " attempt 1\n+++ job " + job + " attempt 2\n"), std::string::npos) << diff;
  EXPECT_NE(diff.find("checkpoint:\n  + checkpoint.path: \"" + second["checkpoint"]["path"].get<std::string>() +
                      "\"\n"
                      "  + checkpoint.step: 5\n"),
            std::string::npos)
      << diff;
  EXPECT_NE(diff.find("  ~ ranks.0.environment.TRAINYARD_ATTEMPT: \"1\" -> \"2\"\n"), std::string::npos) << diff;
  EXPECT_NE(diff.find("user facts:\n  ~ ranks.0.user_facts.attempt: \"1\" -> \"2\""), std::string::npos) << diff;
  EXPECT_EQ(diff.find("spec:"), std::string::npos) << "the same spec: " << diff;

  const std::string shown = cli("job " + job + " --provenance --attempt 1");
  EXPECT_NE(shown.find("provenance of job " + job + " attempt 1\n"), std::string::npos) << shown;
  EXPECT_NE(shown.find("  ranks.0.user_facts.attempt: \"1\"\n"), std::string::npos) << shown;
}

}  // namespace
}  // namespace trainyard::testing
