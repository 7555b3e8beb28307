// `trainyard submit train.sbatch`: a batch script's #SBATCH lines become the job's options as
// sbatch reads them, the command line wins over them, and what we do not take is named by its line.
#include <gtest/gtest.h>

#include "cli/batch_script.h"
#include "tests/unit/cli/command_line_helpers.h"

namespace trainyard::cli {
namespace {

using testing::requests_of;

TEST(BatchScript, IsTheFileThatBeginsWithAnInterpreterLine) {
  EXPECT_TRUE(is_batch_script("#!/bin/bash\necho hi\n"));
  EXPECT_FALSE(is_batch_script("{\"name\": \"x\"}"));
  EXPECT_FALSE(is_batch_script(" #!/bin/bash\n"));
  EXPECT_FALSE(is_batch_script("#SBATCH -N 2\n"));
}

TEST(BatchScript, DirectivesAreReadUpToTheFirstCommandAsSbatchReadsThem) {
  const std::string text =
      "#!/bin/bash\n"
      "# a comment\n"
      "\n"
      "#SBATCH -N 2 --time=30   # two nodes\n"
      "##SBATCH --mem 9G\n"
      "# SBATCH --mem 8G\n"
      "#SBATCHED notes\n"
      "  #SBATCH --job-name \"my run\"\n"
      "#SBATCH -J 'it''s'\n"
      "echo start\n"
      "#SBATCH --nodes 9\n";
  const std::vector<Directive> directives = sbatch_directives("t.sbatch", text);
  ASSERT_EQ(directives.size(), 2u);
  EXPECT_EQ(directives[0].line, 4);
  EXPECT_EQ(directives[0].words, (std::vector<std::string>{"-N", "2", "--time=30"}));
  EXPECT_EQ(directives[1].line, 9);
  EXPECT_EQ(directives[1].words, (std::vector<std::string>{"-J", "its"}));
}

TEST(BatchScript, AnUnterminatedQuoteNamesItsLine) {
  try {
    sbatch_directives("t.sbatch", "#!/bin/sh\n#SBATCH -J \"open\n");
    FAIL() << "accepted";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.field(), "t.sbatch:2");
    EXPECT_NE(e.message().find("unterminated"), std::string::npos) << e.message();
  }
}

const std::string kTrainScript =
    "#!/bin/sh\n"
    "#SBATCH -N 2\n"
    "#SBATCH --time 1:00:00 --mem 2G\n"
    "#SBATCH -J train --ntasks-per-node 4\n"
    "#SBATCH --dependency afterok:7 --array 0-3%2\n"
    "#SBATCH --chdir /data/run --env A=1 --env B=2\n"
    "python3 train.py \"$@\"\n";

Json submitted_script(const std::vector<std::string>& args, const std::string& text = kTrainScript) {
  const auto requests = requests_of(args, [&](const std::string&) { return text; });
  EXPECT_EQ(requests.size(), 1u);
  return *requests.at(0).body;
}

TEST(BatchScript, ItsOptionsBecomeTheJobsAndItRunsWithItsArguments) {
  const Json spec = submitted_script({"submit", "train.sbatch", "data", "--", "--lr", "0.1"});
  EXPECT_EQ(spec["name"], "train");
  EXPECT_EQ(spec["nodes"], 2);
  EXPECT_EQ(spec["timeout_s"], 3600);
  EXPECT_EQ(spec["memory_mb"], 2048);
  EXPECT_EQ(spec["array"], "0-3%2");
  EXPECT_EQ(spec["depends_on"], Json::parse(R"([{"job": 7, "condition": "afterok"}])"));
  EXPECT_EQ(spec["command"]["procs_per_node"], 4);
  EXPECT_EQ(spec["command"]["workdir"], "/data/run");
  EXPECT_EQ(spec["command"]["env"], Json({{"A", "1"}, {"B", "2"}}));
  EXPECT_EQ(spec["command"]["argv"], Json::array({"train.sbatch", "data", "--lr", "0.1"}));
  EXPECT_EQ(spec["command"]["script"], kTrainScript);
  EXPECT_FALSE(spec.contains("hold"));
}

TEST(BatchScript, TheCommandLineWinsOverItsLinesAndAddsToItsEnvironment) {
  const Json spec = submitted_script({"submit", "-N", "3", "--name", "other", "--env", "B=3", "--hold", "train.sbatch"});
  EXPECT_EQ(spec["nodes"], 3);
  EXPECT_EQ(spec["name"], "other");
  EXPECT_EQ(spec["timeout_s"], 3600);  // still the script's
  EXPECT_EQ(spec["command"]["env"], Json({{"A", "1"}, {"B", "3"}}));
  EXPECT_EQ(spec["hold"], true);
}

TEST(BatchScript, WithoutDirectivesItIsAOneNodeJobNamedAfterItsFile) {
  const Json spec = submitted_script({"submit", "/home/u/jobs/run.sh"}, "#!/usr/bin/python3\nprint('hi')\n");
  EXPECT_EQ(spec["name"], "run.sh");
  EXPECT_FALSE(spec.contains("nodes"));
  EXPECT_EQ(spec["command"]["argv"], Json::array({"/home/u/jobs/run.sh"}));
}

// The field an InvalidInput names, and its message, for a script with `line` after the #! line.
std::pair<std::string, std::string> script_refusal(const std::string& line, std::vector<std::string> args = {"submit", "t.sbatch"}) {
  try {
    submitted_script(args, "#!/bin/sh\n" + line + "\ntrue\n");
  } catch (const InvalidInput& e) {
    return {e.field(), e.message()};
  }
  return {"<accepted>", ""};
}

TEST(BatchScript, AnOptionItDoesNotTakeIsNamedWithItsLineNeverIgnored) {
  EXPECT_EQ(script_refusal("#SBATCH -p gpu").first, "t.sbatch:2");
  EXPECT_NE(script_refusal("#SBATCH -p gpu").second.find("-p"), std::string::npos) << script_refusal("#SBATCH -p gpu").second;
  EXPECT_EQ(script_refusal("#SBATCH --wait").first, "t.sbatch:2");
  EXPECT_EQ(script_refusal("#SBATCH train.py").first, "t.sbatch:2");
  EXPECT_EQ(script_refusal("#SBATCH --nodes").first, "t.sbatch:2");
}

TEST(BatchScript, OutputAndErrorFilesAreTheJobsWithSlurmsPatterns) {
  const Json both = submitted_script({"submit", "t.sbatch"}, "#!/bin/sh\n#SBATCH -o slurm-%j.out\n#SBATCH --error=%x-%N.err\ntrue\n");
  EXPECT_EQ(both["command"]["output"], "slurm-%j.out");
  EXPECT_EQ(both["command"]["error"], "%x-%N.err");
  const Json overridden = submitted_script({"submit", "-o", "mine.log", "t.sbatch"}, "#!/bin/sh\n#SBATCH -o slurm-%j.out\ntrue\n");
  EXPECT_EQ(overridden["command"]["output"], "mine.log") << "the command line wins";
  EXPECT_FALSE(overridden["command"].contains("error"));
  // A pattern Slurm has and Trainyard does not fill in is refused by its line, never written as is.
  const auto [field, message] = script_refusal("#SBATCH -o out-%t.txt");
  EXPECT_EQ(field, "t.sbatch:2 #SBATCH --output");
  EXPECT_NE(message.find("%t"), std::string::npos) << message;
}

TEST(BatchScript, ABadValueOnALineNamesTheLineAndTheOption) {
  const auto [field, message] = script_refusal("#SBATCH --mem lots");
  EXPECT_EQ(field, "t.sbatch:2 #SBATCH --mem");
  EXPECT_FALSE(message.empty());
  EXPECT_EQ(script_refusal("#SBATCH -t forever").first, "t.sbatch:2 #SBATCH --time");
  // Given on the command line, it is the command line's mistake.
  EXPECT_EQ(script_refusal("#SBATCH -N 2", {"submit", "--nodes", "0", "t.sbatch"}).first, "--nodes");
}

TEST(BatchScript, AJsonSpecTakesNeitherArgumentsNorQuickFlags) {
  const std::string spec = R"({"name": "x", "command": {"argv": ["/bin/true"]}})";
  const auto field_for = [&](const std::vector<std::string>& args) {
    try {
      submitted_script(args, spec);
    } catch (const InvalidInput& e) {
      return e.field();
    }
    return std::string("<accepted>");
  };
  EXPECT_EQ(field_for({"submit", "a.json", "b"}), "a.json");
  EXPECT_EQ(field_for({"submit", "a.json", "--nodes", "2"}), "--nodes");
  EXPECT_EQ(field_for({"submit", "a.json", "--array", "0-3", "--chdir", "/x"}), "<accepted>");
}

}  // namespace
}  // namespace trainyard::cli
