#include <gtest/gtest.h>

#include "proto/job.h"

namespace trainyard::inline proto {
namespace {

Json minimal_command() { return Json{{"name", "train"}, {"command", {{"argv", {"/bin/true"}}}}}; }

// Returns the field named by the InvalidInput that parsing `spec` throws.
std::string rejected_field(const Json& spec) {
  try {
    parse_job_spec(spec);
  } catch (const InvalidInput& e) {
    return e.field();
  }
  return "<accepted>";
}

TEST(JobSpec, MinimalCommandJobGetsDefaults) {
  const JobSpec s = parse_job_spec(minimal_command());
  EXPECT_EQ(s.name, "train");
  EXPECT_EQ(s.share, "default");
  EXPECT_EQ(s.nodes, 1);
  EXPECT_EQ(s.kind, JobKind::command);
  EXPECT_FALSE(s.stuck_after_s.has_value()) << "learned unless given";
  EXPECT_EQ(s.retry.attempts, 1);
  EXPECT_FALSE(s.preflight_enabled());
  EXPECT_FALSE(s.cores_per_node.has_value());
}

TEST(JobSpec, MultiNodeJobsPreflightByDefault) {
  Json j = minimal_command();
  j["nodes"] = 4;
  EXPECT_TRUE(parse_job_spec(j).preflight_enabled());
  j["preflight"] = false;
  EXPECT_FALSE(parse_job_spec(j).preflight_enabled());
}

TEST(JobSpec, WaitingForCapacityIsOptInAndStoredWithTheSpec) {
  Json j = minimal_command();
  EXPECT_FALSE(parse_job_spec(j).wait_for_capacity);
  EXPECT_FALSE(to_json(parse_job_spec(j)).contains("wait_for_capacity"));
  j["wait_for_capacity"] = true;
  const JobSpec s = parse_job_spec(j);
  EXPECT_TRUE(s.wait_for_capacity);
  EXPECT_TRUE(parse_job_spec(to_json(s), SpecOrigin::stored).wait_for_capacity);
  j["wait_for_capacity"] = "yes";
  EXPECT_EQ(rejected_field(j), "wait_for_capacity");
}

TEST(JobSpec, ReplacingStragglersIsOptInAndStoredWithTheSpec) {
  Json j = minimal_command();
  EXPECT_FALSE(parse_job_spec(j).replace_stragglers);
  EXPECT_FALSE(to_json(parse_job_spec(j)).contains("replace_stragglers"));
  j["replace_stragglers"] = true;
  EXPECT_TRUE(parse_job_spec(to_json(parse_job_spec(j)), SpecOrigin::stored).replace_stragglers);
  j["replace_stragglers"] = 1;
  EXPECT_EQ(rejected_field(j), "replace_stragglers");
}

TEST(JobSpec, HeldSubmissionsAndTheirJobsRoundTrip) {
  Json spec = minimal_command();
  spec["hold"] = true;
  const JobSpec s = parse_job_spec(spec);
  EXPECT_TRUE(s.hold);
  EXPECT_TRUE(parse_job_spec(to_json(s)).hold);
  spec["hold"] = "yes";
  EXPECT_EQ(rejected_field(spec), "hold");

  Job job;
  job.id = 3;
  job.spec = s;
  job.held = Hold::admin;
  job.stopping_to = StopIntent::preempt;
  job.requeues = 2;
  const Job back = job_from_json(to_json(job));
  EXPECT_EQ(back.held, Hold::admin);
  EXPECT_EQ(back.stopping_to, StopIntent::preempt);
  EXPECT_EQ(back.requeues, 2);
  EXPECT_FALSE(to_json(Job{}).contains("held_by")) << "a job that is not held says nothing of it";
  EXPECT_EQ(parse_attempt_state("preempted"), AttemptState::preempted);
  EXPECT_TRUE(is_terminal(AttemptState::requeued));
}

TEST(JobSpec, RoundTripsThroughJson) {
  Json j = {{"name", "sim"},
            {"share", "team-a"},
            {"priority", 7},
            {"nodes", 4},
            {"nodes_min", 2},
            {"cores_per_node", 8},
            {"kind", "simulated"},
            {"workload", {{"steps", 50}, {"precision", "bf16_sr"}, {"checkpoint_every", 10}}},
            {"retry", {{"attempts", 3}, {"evaluate_on_exit", {{{"on_exit_code", "3*"}, {"action", "EXIT"}}}}}},
            {"timeout_s", 600},
            {"labels", {{"team", "a"}}},
            {"code_version", "abc123"},
            {"storage_limit_mb", 2048},
            {"memory_mb", 4096}};
  const JobSpec s = parse_job_spec(j);
  const JobSpec again = parse_job_spec(to_json(s));
  EXPECT_EQ(to_json(again), to_json(s));
  EXPECT_EQ(s.workload.precision, Precision::bf16_sr);
  EXPECT_EQ(s.retry.evaluate_on_exit.at(0).action, RetryAction::exit);
  EXPECT_EQ(again.storage_limit_mb, 2048);
  EXPECT_EQ(again.memory_mb, 4096);
}

TEST(JobSpec, ACommandsWorkingDirectoryRoundTrips) {
  Json j = minimal_command();
  j["command"]["workdir"] = "/home/ana/exp";
  const JobSpec s = parse_job_spec(j);
  EXPECT_EQ(s.command.workdir, "/home/ana/exp");
  EXPECT_EQ(parse_job_spec(to_json(s)).command.workdir, "/home/ana/exp");
  EXPECT_FALSE(parse_job_spec(minimal_command()).command.workdir) << "none: the attempt's own directory";
  EXPECT_FALSE(to_json(parse_job_spec(minimal_command()))["command"].contains("workdir"));
}

TEST(JobSpec, ABatchScriptRoundTrips) {
  Json j = minimal_command();
  j["command"]["script"] = "#!/bin/sh\necho hi\n";
  const JobSpec s = parse_job_spec(j);
  EXPECT_EQ(s.command.script, "#!/bin/sh\necho hi\n");
  EXPECT_EQ(parse_job_spec(to_json(s)).command.script, s.command.script);
  EXPECT_FALSE(to_json(parse_job_spec(minimal_command()))["command"].contains("script"));
}

TEST(JobSpec, AStoredSpecIsReadUnderTheRulesItWasWrittenWith) {
  // Written when dependencies were bare ids and names need not be printable: still readable.
  Json j = minimal_command();
  j["name"] = "old\x1b[2Jname";
  j["labels"] = {{"bad key", "v"}};
  j["depends_on"] = {1, 2};
  const JobSpec s = parse_job_spec(j, SpecOrigin::stored);
  EXPECT_EQ(s.depends_on, (std::vector<Dependency>{{1, DependencyCondition::afterok}, {2, DependencyCondition::afterok}}));
  EXPECT_EQ(to_json(parse_job_spec(to_json(s), SpecOrigin::stored)), to_json(s));
  EXPECT_THROW(parse_job_spec(j), InvalidInput);
}

struct BadSpec {
  const char* what;
  Json patch;  // merged into a valid command spec
  const char* field;
};

class JobSpecRejects : public ::testing::TestWithParam<BadSpec> {};

TEST_P(JobSpecRejects, NamesTheField) {
  Json j = minimal_command();
  j.merge_patch(GetParam().patch);
  EXPECT_EQ(rejected_field(j), GetParam().field) << GetParam().what;
}

INSTANTIATE_TEST_SUITE_P(
    Fields, JobSpecRejects,
    ::testing::Values(BadSpec{"unknown field", {{"nodez", 2}}, "nodez"},
                      BadSpec{"nodes zero", {{"nodes", 0}}, "nodes"},
                      BadSpec{"nodes too many", {{"nodes", 1025}}, "nodes"},
                      BadSpec{"nodes as string", {{"nodes", "2"}}, "nodes"},
                      BadSpec{"fractional nodes", {{"nodes", 1.5}}, "nodes"},
                      BadSpec{"priority range", {{"priority", 10000}}, "priority"},
                      BadSpec{"empty name", {{"name", ""}}, "name"},
                      BadSpec{"bad share", {{"share", "a b"}}, "share"},
                      BadSpec{"bad kind", {{"kind", "docker"}}, "kind"},
                      BadSpec{"empty argv", {{"command", {{"argv", Json::array()}}}}, "command.argv"},
                      BadSpec{"argv not strings", {{"command", {{"argv", {1}}}}}, "command.argv[0]"},
                      BadSpec{"retry attempts", {{"retry", {{"attempts", 11}}}}, "retry.attempts"},
                      BadSpec{"rule action", {{"retry", {{"evaluate_on_exit", {{{"on_exit_code", "1"}, {"action", "maybe"}}}}}}},
                              "retry.evaluate_on_exit[0].action"},
                      BadSpec{"nodes_min above nodes", {{"nodes_min", 2}}, "nodes_min"},
                      BadSpec{"negative timeout", {{"timeout_s", -1}}, "timeout_s"},
                      BadSpec{"a zero storage quota", {{"storage_limit_mb", 0}}, "storage_limit_mb"},
                      BadSpec{"a storage quota past 1 PiB", {{"storage_limit_mb", 1LL << 31}}, "storage_limit_mb"},
                      BadSpec{"a zero memory limit", {{"memory_mb", 0}}, "memory_mb"},
                      BadSpec{"a memory limit past 16 TiB", {{"memory_mb", (1LL << 24) + 1}}, "memory_mb"},
                      BadSpec{"a memory limit as text", {{"memory_mb", "4G"}}, "memory_mb"},
                      BadSpec{"workload on command job", {{"workload", {{"steps", 1}}}}, "workload"},
                      BadSpec{"a bare dependency id", {{"depends_on", {1}}}, "depends_on[0]"},
                      BadSpec{"an unknown condition", {{"depends_on", {{{"job", 1}, {"condition", "after"}}}}}, "depends_on[0].condition"},
                      BadSpec{"a dependency on id 0", {{"depends_on", {{{"job", 0}}}}}, "depends_on[0].job"},
                      BadSpec{"a bad array", {{"array", "0-x"}}, "array"},
                      BadSpec{"escape sequence in name", {{"name", "a\x1b]52;c;ZXZpbA==\x07"}}, "name"},
                      BadSpec{"newline in name", {{"name", "a\nb"}}, "name"},
                      BadSpec{"C1 control in name", {{"name", "a\xc2\x9b" "2J"}}, "name"},
                      BadSpec{"invalid UTF-8 in name", {{"name", "a\xff"}}, "name"},
                      BadSpec{"NUL in name", {{"name", std::string("a\0b", 3)}}, "name"},
                      BadSpec{"label key", {{"labels", {{"a\x1b" "b", "v"}}}}, "labels.a\x1b" "b"},
                      BadSpec{"label value", {{"labels", {{"team", "x\x1b[31m"}}}}, "labels.team"},
                      BadSpec{"NUL in argv", {{"command", {{"argv", {"/bin/echo", std::string("a\0b", 3)}}}}},
                              "command.argv[1]"},
                      BadSpec{"env name", {{"command", {{"argv", {"/bin/true"}}, {"env", {{"A-B", "1"}}}}}}, "command.env"},
                      BadSpec{"NUL in env", {{"command", {{"argv", {"/bin/true"}}, {"env", {{"A", std::string("1\0", 2)}}}}}},
                              "command.env.A"},
                      BadSpec{"array account by env",
                              {{"command", {{"argv", {"/bin/true"}}, {"env", {{"TRAINYARD_ARRAY_JOB_ID", "1"}}}}}},
                              "command.env.TRAINYARD_ARRAY_JOB_ID"},
                      BadSpec{"a relative working directory", {{"command", {{"argv", {"x"}}, {"workdir", "exp"}}}},
                              "command.workdir"},
                      BadSpec{"an empty working directory", {{"command", {{"argv", {"x"}}, {"workdir", ""}}}},
                              "command.workdir"},
                      BadSpec{"NUL in the working directory",
                              {{"command", {{"argv", {"x"}}, {"workdir", std::string("/a\0b", 4)}}}}, "command.workdir"},
                      BadSpec{"a working directory past 4096 bytes",
                              {{"command", {{"argv", {"x"}}, {"workdir", "/" + std::string(4096, 'a')}}}}, "command.workdir"},
                      BadSpec{"a script without an interpreter line",
                              {{"command", {{"argv", {"x"}}, {"script", "echo hi\n"}}}}, "command.script"},
                      BadSpec{"NUL in a script", {{"command", {{"argv", {"x"}}, {"script", std::string("#!/bin/sh\0", 10)}}}},
                              "command.script"},
                      BadSpec{"a script past 64 KiB",
                              {{"command", {{"argv", {"x"}}, {"script", "#!/bin/sh\n" + std::string(64 * 1024, '#')}}}},
                              "command.script"},
                      BadSpec{"an output pattern Trainyard does not fill in",
                              {{"command", {{"argv", {"x"}}, {"output", "out-%t.txt"}}}}, "command.output"},
                      BadSpec{"an error file ending in a lone %", {{"command", {{"argv", {"x"}}, {"error", "err%"}}}},
                              "command.error"},
                      BadSpec{"an empty output file", {{"command", {{"argv", {"x"}}, {"output", ""}}}}, "command.output"},
                      BadSpec{"escape in code_version", {{"code_version", "v\x1b"}}, "code_version"}));

TEST(JobSpec, PrintableNamesMayBeAnyLanguage) {
  Json j = minimal_command();
  j["name"] = "entraînement – 学習 🚀";
  j["labels"] = {{"team", "équipe α"}};
  EXPECT_EQ(parse_job_spec(j).name, "entraînement – 学習 🚀");
}

TEST(JobSpec, RejectsBadWorkloadFields) {
  Json j = {{"name", "sim"}, {"kind", "simulated"}, {"workload", {{"precision", "fp8"}}}};
  EXPECT_EQ(rejected_field(j), "workload.precision");
  j["workload"] = {{"lr", 0.001}, {"min_lr", 0.01}};
  EXPECT_EQ(rejected_field(j), "workload.min_lr");
  j["workload"] = {{"steps", 10}, {"warmup", 20}};
  EXPECT_EQ(rejected_field(j), "workload.warmup");
  j["workload"] = {{"widht", 10}};
  EXPECT_EQ(rejected_field(j), "workload.widht");
}

TEST(JobSpec, RejectsNonObjectBody) {
  EXPECT_THROW(parse_job_spec(Json::array()), InvalidInput);
  EXPECT_THROW(parse_json_text("{\"name\": "), InvalidInput);
}

// Found by fuzz/failure_rules: a number too large for a double escaped as nlohmann's out_of_range,
// which the API answered with 500 and which escaped the agent gateway's message handler.
TEST(JobSpec, NumberBeyondDoubleIsMalformedJson) {
  EXPECT_THROW(parse_json_text(R"({"name": "x", "priority": 1e999})"), InvalidInput);
  EXPECT_THROW(parse_json_text("-88e888"), InvalidInput);
}

}  // namespace
}  // namespace trainyard::inline proto
