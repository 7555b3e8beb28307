// Hostile names and output: escape sequences, control characters and NUL in what a user
// submits are refused naming the field; what a job prints reaches an operator's terminal escaped.
#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

class HostileNames : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster.start_daemon();
    cluster.start_agent("node-a");
    cluster.wait_for_nodes(1);
  }
  Cluster cluster;
};

TEST_F(HostileNames, ControlCharactersAndNulAreRefusedNamingTheField) {
  struct Case {
    std::string what;
    Json spec;
    std::string field;
  };
  Json osc52 = argv_job("x\x1b]52;c;ZXZpbA==\x07", {"/bin/true"});
  Json label_value = argv_job("ok", {"/bin/true"});
  label_value["labels"] = {{"team", "\x1b[2J"}};
  Json label_key = argv_job("ok", {"/bin/true"});
  label_key["labels"] = {{"te am", "a"}};
  const Json nul_argv = argv_job("ok", {"/bin/echo", std::string("a\0b", 3)});
  Json nul_env = argv_job("ok", {"/bin/true"});
  nul_env["command"]["env"] = {{"A", std::string("1\0" "2", 3)}};
  Json share = argv_job("ok", {"/bin/true"});
  share["share"] = "a\nb";
  const std::vector<Case> cases = {{"OSC 52 in the name", osc52, "name"},
                                   {"escape in a label value", label_value, "labels.team"},
                                   {"space in a label key", label_key, "labels.te am"},
                                   {"NUL in argv", nul_argv, "command.argv[1]"},
                                   {"NUL in env", nul_env, "command.env.A"},
                                   {"newline in the share", share, "share"}};
  for (const auto& c : cases) {
    const auto reply = cluster.api("POST", "/v1/jobs", c.spec.dump());
    EXPECT_EQ(reply.status, 400) << c.what << ": " << reply.body.dump();
    EXPECT_EQ(reply.body["error"]["field"], c.field) << c.what << ": " << reply.body.dump();
  }
  EXPECT_TRUE(cluster.api("GET", "/v1/jobs").body["jobs"].empty()) << "a refused job was stored";
  // Names in other languages are text, not control characters.
  const auto id = cluster.submit(argv_job("entraînement 学習", {"/bin/true"}));
  EXPECT_EQ(cluster.wait_job_state(id, "SUCCEEDED", 30s)["name"], "entraînement 学習");
}

TEST_F(HostileNames, AJobsEscapeSequencesAreEscapedOnATerminalAndPassedRawToAPipe) {
  const auto id = cluster.submit(argv_job("printer", {"/usr/bin/printf", "before \\033]52;c;ZXZpbA==\\007 after\\n"}));
  cluster.wait_job_state(id, "SUCCEEDED", 30s);
  const std::string cli = std::string(TRAINYARD_CLI_BIN) + " --server " + cluster.url();
  const std::string token_file = cluster.dir() + "/data/admin.token";
  const std::string out = cluster.dir() + "/logs.out";
  const std::string logs = cli + " --token-file " + token_file + " logs " + std::to_string(id);
  // A pipe (a file here) gets the job's own bytes, as `kubectl logs` gives them.
  ASSERT_EQ(std::system((logs + " > " + out + " 2>&1").c_str()), 0) << read_text(out);
  EXPECT_NE(read_text(out).find("before \x1b]52;c;ZXZpbA==\x07 after"), std::string::npos) << read_text(out);
  // A terminal (script(1) gives the CLI a pty) gets them escaped.
  const std::string typescript = cluster.dir() + "/tty.out";
  ASSERT_EQ(std::system(("script -qec '" + logs + "' " + typescript + " > /dev/null 2>&1").c_str()), 0)
      << read_text(typescript);
  const std::string seen = read_text(typescript);
  EXPECT_NE(seen.find("before \\x1b]52;c;ZXZpbA==\\x07 after"), std::string::npos) << seen;
  EXPECT_EQ(seen.find('\x07'), std::string::npos) << seen;
}

}  // namespace
}  // namespace trainyard::testing
