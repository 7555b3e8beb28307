// Provenance as the CLI shows it: the pure diff behind `trainyard diff A B`, the rendering of one
// record (`trainyard job ID --provenance`), and the requests and arguments of both.
#include "cli/provenance_diff.h"

#include <gtest/gtest.h>

#include "tests/unit/cli/command_line_helpers.h"

namespace trainyard::cli {
namespace {

using testing::get;
using testing::rejected;
using testing::requests_of;

Json record(int attempt) {
  return {{"job", 5},
          {"attempt", attempt},
          {"attempt_id", 100 + attempt},
          {"user", "alice"},
          {"daemon", {{"version", "0.1.0"}, {"commit", "abc"}}},
          {"spec_sha256", "aa"},
          {"spec", {{"name", "train"}, {"workload", {{"lr", 0.001}, {"steps", 200}}}}},
          {"ranks",
           {{{"rank", 0},
             {"node", "n1"},
             {"agent_version", "0.1.0 (commit abc)"},
             {"admitted_by", {{"health_check", 3}, {"verdict", "HEALTHY"}}},
             {"environment", {{"LR", "1"}, {"HF_TOKEN", "<masked>"}}},
             {"user_facts", {{"torch", "2.3.1"}}}}}}};
}

TEST(ProvenanceDiff, IdenticalRunsDifferOnlyInIdentityWhichIsNotReported) {
  EXPECT_TRUE(diff_records(record(1), record(2)).empty());
  EXPECT_NE(render_diff(record(1), record(2)).find("no differences"), std::string::npos);
}

TEST(ProvenanceDiff, ReportsAddedRemovedAndChangedKeysInKeyOrder) {
  Json b = record(2);
  b["checkpoint"] = {{"path", "/ck/job-5/step-20"}, {"step", 20}};
  b["spec"]["workload"]["lr"] = 0.002;
  b["ranks"][0]["environment"].erase("LR");
  b["ranks"][0]["user_facts"]["torch"] = "2.4.0";
  const auto changes = diff_records(record(1), b);
  ASSERT_EQ(changes.size(), 5u);
  EXPECT_EQ(changes[0], (FactChange{"checkpoint.path", std::nullopt, Json("/ck/job-5/step-20")}));
  EXPECT_EQ(changes[1], (FactChange{"checkpoint.step", std::nullopt, Json(20)}));
  EXPECT_EQ(changes[2], (FactChange{"ranks.0.environment.LR", Json("1"), std::nullopt}));
  EXPECT_EQ(changes[3], (FactChange{"ranks.0.user_facts.torch", Json("2.3.1"), Json("2.4.0")}));
  EXPECT_EQ(changes[4], (FactChange{"spec.workload.lr", Json(0.001), Json(0.002)}));
}

TEST(ProvenanceDiff, RendersEachChangeUnderItsSection) {
  Json b = record(2);
  b["checkpoint"] = {{"step", 20}};
  b["daemon"]["commit"] = "def";
  b["ranks"][0]["node"] = "n2";
  b["ranks"][0]["admitted_by"]["health_check"] = 9;
  b["spec"]["workload"]["lr"] = 0.002;
  b["ranks"][0]["environment"]["EXTRA"] = "x";
  b["ranks"][0]["user_facts"].erase("torch");
  const std::string text = render_diff(record(1), b);
  EXPECT_EQ(text,
            "--- job 5 attempt 1\n"
            "+++ job 5 attempt 2\n"
            "spec:\n"
            "  ~ spec.workload.lr: 0.001 -> 0.002\n"
            "versions:\n"
            "  ~ daemon.commit: \"abc\" -> \"def\"\n"
            "checkpoint:\n"
            "  + checkpoint.step: 20\n"
            "nodes:\n"
            "  ~ ranks.0.admitted_by.health_check: 3 -> 9\n"
            "  ~ ranks.0.node: \"n1\" -> \"n2\"\n"
            "environment:\n"
            "  + ranks.0.environment.EXTRA: \"x\"\n"
            "user facts:\n"
            "  + ranks.0.user_facts: {}\n"
            "  - ranks.0.user_facts.torch: \"2.3.1\"\n");
}

TEST(ProvenanceDiff, AStringAndANumberAreNotTheSameFact) {
  Json b = record(2);
  b["ranks"][0]["user_facts"]["torch"] = 2.3;
  ASSERT_EQ(diff_records(record(1), b).size(), 1u);
}

TEST(ProvenanceDiff, MoreRanksShowAsAddedNodes) {
  Json b = record(2);
  b["ranks"].push_back({{"rank", 1}, {"node", "n2"}});
  const auto changes = diff_records(record(1), b);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].key, "ranks.1.node");
  EXPECT_EQ(section_of(changes[0].key), "nodes");
}

TEST(ProvenanceDiff, AJobsHostileKeysCannotReachTheTerminalOrPassForAPath) {
  Json b = record(2);
  b["ranks"][0]["user_facts"]["\x1b[2Jx"] = "y";
  b["ranks"][0]["user_facts"]["spec.workload.lr"] = "fake";
  const std::string text = render_diff(record(1), b);
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_NE(text.find("ranks.0.user_facts.\"spec.workload.lr\""), std::string::npos) << text;
}

TEST(ProvenanceRecord, RendersGroupedLinesWithoutIdentityFacts) {
  const std::string text = render_record(record(1));
  EXPECT_EQ(text.rfind("provenance of job 5 attempt 1\nspec:\n", 0), 0u) << text;
  EXPECT_NE(text.find("  ranks.0.environment.HF_TOKEN: \"<masked>\"\n"), std::string::npos) << text;
  EXPECT_NE(text.find("user facts:\n  ranks.0.user_facts.torch: \"2.3.1\"\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("attempt_id"), std::string::npos) << text;
}

TEST(ProvenanceCommands, JobProvenanceAsksForTheLatestOrTheNamedAttempt) {
  EXPECT_EQ(requests_of({"job", "7", "--provenance"}), std::vector{get("/v1/jobs/7/attempts/last/provenance")});
  EXPECT_EQ(requests_of({"job", "7", "--provenance", "--attempt", "2"}),
            std::vector{get("/v1/jobs/7/attempts/2/provenance")});
}

TEST(ProvenanceCommands, DiffTakesJobsOrJobSlashAttempt) {
  EXPECT_EQ(requests_of({"diff", "7", "8/3"}),
            (std::vector{get("/v1/jobs/7/attempts/last/provenance"), get("/v1/jobs/8/attempts/3/provenance")}));
}

TEST(ProvenanceCommands, BadArgumentsNameTheirField) {
  EXPECT_EQ(rejected({"diff", "7"}), "B");
  EXPECT_EQ(rejected({"diff", "7", "8", "9"}), "A B");
  EXPECT_EQ(rejected({"diff", "x", "8"}), "A");
  EXPECT_EQ(rejected({"diff", "7", "8/0"}), "B");
  EXPECT_EQ(rejected({"diff", "7", "8/"}), "B");
  EXPECT_EQ(rejected({"job", "7", "--attempt", "2"}), "--attempt");
}

TEST(ProvenanceCommands, DiffJsonListsTheChanges) {
  Json b = record(2);
  b["code_version"] = "git:1234";
  const Command cmd = std::get<Command>(parse_command_line({"diff", "5/1", "5/2"}).action);
  const Json out = render_json(cmd, {record(1), b});
  ASSERT_EQ(out["changes"].size(), 1u);
  EXPECT_EQ(out["changes"][0], (Json{{"key", "code_version"}, {"before", nullptr}, {"after", "git:1234"}}));
}

}  // namespace
}  // namespace trainyard::cli
