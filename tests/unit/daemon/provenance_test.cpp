// The provenance record the daemon builds at launch and its ranks complete (daemon/provenance.h).
#include "daemon/provenance.h"

#include <gtest/gtest.h>

#include "proto/version.h"

namespace trainyard::daemon {
namespace {

Job job_with(JobKind kind) {
  Job job;
  job.id = 5;
  job.user = "alice";
  job.spec.name = "train";
  job.spec.kind = kind;
  job.spec.command.argv = {"python", "train.py"};
  job.spec.command.env = {{"LR", "3e-4"}, {"WANDB_API_KEY", "k-123"}};
  job.spec.code_version = "git:abc";
  return job;
}

Attempt attempt_of(const Job& job) {
  Attempt a;
  a.id = 9;
  a.job_id = job.id;
  a.number = 2;
  a.nodes = {"n1", "n2"};
  return a;
}

const std::vector<RankAdmission> kRanks = {{"n1", "0.1.0 (commit abc)", 4, "HEALTHY"},
                                           {"n2", "0.1.0 (commit abc)", 0, ""}};

TEST(Provenance, RecordsVersionsSpecHashNodesAndTheirChecks) {
  const Job job = job_with(JobKind::command);
  const Json p = launch_provenance(job, attempt_of(job), kRanks, std::nullopt);
  EXPECT_EQ(p["job"], 5);
  EXPECT_EQ(p["attempt"], 2);
  EXPECT_EQ(p["attempt_id"], 9);
  EXPECT_EQ(p["daemon"]["version"], std::string(build_version()));
  EXPECT_EQ(p["daemon"]["commit"], std::string(build_commit()));
  EXPECT_EQ(p["spec_sha256"], spec_sha256(job.spec));
  EXPECT_EQ(p["spec_sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(p["code_version"], "git:abc");
  EXPECT_FALSE(p.contains("kernel"));
  EXPECT_FALSE(p.contains("checkpoint"));
  EXPECT_EQ(p["ranks"][0], (Json{{"rank", 0},
                                 {"node", "n1"},
                                 {"agent_version", "0.1.0 (commit abc)"},
                                 {"admitted_by", {{"health_check", 4}, {"verdict", "HEALTHY"}}}}));
  EXPECT_FALSE(p["ranks"][1].contains("admitted_by")) << "a node never checked says so by omission";
}

TEST(Provenance, MasksSecretsInTheRecordedSpecButHashesTheRealOne) {
  Job job = job_with(JobKind::command);
  const Json p = launch_provenance(job, attempt_of(job), kRanks, std::nullopt);
  EXPECT_EQ(p["spec"]["command"]["env"]["WANDB_API_KEY"], "<masked>");
  EXPECT_EQ(p["spec"]["command"]["env"]["LR"], "3e-4");
  EXPECT_EQ(p.dump().find("k-123"), std::string::npos);
  const std::string before = spec_sha256(job.spec);
  job.spec.command.env["WANDB_API_KEY"] = "k-456";
  EXPECT_NE(spec_sha256(job.spec), before) << "another secret is another spec";
}

TEST(Provenance, ASimulatedRetryRecordsItsKernelAndTheCheckpointItResumedFrom) {
  const Job job = job_with(JobKind::simulated);
  const Json p = launch_provenance(job, attempt_of(job), kRanks,
                                   ResumedCheckpoint{"/ck/job-5/step-0000000040", 40, std::string(64, 'e')});
  EXPECT_EQ(p["kernel"], to_json(job.spec.workload));
  EXPECT_EQ(p["checkpoint"],
            (Json{{"path", "/ck/job-5/step-0000000040"}, {"step", 40}, {"manifest_sha256", std::string(64, 'e')}}));
  const Json own_format = launch_provenance(job, attempt_of(job), kRanks, ResumedCheckpoint{"/ck/s-1", 1, ""});
  EXPECT_FALSE(own_format["checkpoint"].contains("manifest_sha256"));
}

TEST(Provenance, RanksAddTheirEnvironmentAndFactsToTheirOwnPart) {
  const Job job = job_with(JobKind::command);
  AttemptProvenance p(launch_provenance(job, attempt_of(job), kRanks, std::nullopt));
  const AttemptProvenance at_launch = p;  // a copy already handed to the store
  record_rank_environment(p, 1, {{"RANK", "1"}});
  record_user_facts(p, 1, {{"torch", "2.3"}}, "");
  record_user_facts(p, 0, nullptr, "$TRAINYARD_PROVENANCE_FILE is not a regular file");
  EXPECT_EQ(p.json()["ranks"][1]["environment"], (Json{{"RANK", "1"}}));
  EXPECT_EQ(p.json()["ranks"][1]["user_facts"], (Json{{"torch", "2.3"}}));
  EXPECT_FALSE(p.json()["ranks"][0].contains("user_facts"));
  EXPECT_EQ(p.json()["ranks"][0]["user_facts_error"], "$TRAINYARD_PROVENANCE_FILE is not a regular file");
  EXPECT_FALSE(at_launch.json()["ranks"][1].contains("environment")) << "a copy keeps the version it was made of";
  const Json unchanged = p.json();
  record_rank_environment(p, 7, {{"X", "1"}});  // no such rank
  record_rank_environment(p, 0, {});            // nothing to record
  AttemptProvenance older;                      // an attempt recorded before provenance
  record_user_facts(older, 0, {{"a", 1}}, "");
  EXPECT_EQ(p.json(), unchanged);
  EXPECT_TRUE(older.empty());
  EXPECT_TRUE(older.json().is_null());
}

}  // namespace
}  // namespace trainyard::daemon
