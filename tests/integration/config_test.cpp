// The real binaries' settings: a config file given to an agent, a bad one refused at start naming
// the file and key, and --print-config / --version answered without starting anything.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Runs a binary to its exit; returns its exit code and writes its output to `log`.
int exit_code_of(const std::vector<std::string>& argv, const std::string& log) {
  Process p(argv, log);
  const auto status = p.wait_exit(std::chrono::seconds(20));
  if (!status || !WIFEXITED(*status)) return -1;
  return WEXITSTATUS(*status);
}

TEST(Config, AnAgentTakesItsLabelsFromTheFileAndItsCoresFromTheFlag) {
  Cluster cluster;
  cluster.start_daemon();
  const std::string config = cluster.dir() + "/agent.json";
  write_text(config, R"(// labels here; the test's --cores 4 flag beats "cores"
    {"label": ["rack=from-file"], "cores": 64})");
  cluster.start_agent("n1", AgentSpec{.extra_flags = {"--config", config}});
  cluster.wait_for_nodes(1);
  const Json node = cluster.api("GET", "/v1/nodes/n1").body;
  EXPECT_EQ(node["labels"]["rack"], "from-file") << node.dump();
  EXPECT_EQ(node["cores"], 4) << node.dump();
}

TEST(Config, ABadFileStopsTheAgentAtStartNamingFileAndKey) {
  Cluster cluster;
  const std::string config = cluster.dir() + "/agent.json";
  write_text(config, R"({"server": "http://127.0.0.1:1", "join-token-file": "/dev/null", "name": "n1",
                         "work-dir": "/tmp/unused", "cores": 0})");
  const std::string log = cluster.dir() + "/agent.log";
  EXPECT_EQ(exit_code_of({TRAINYARD_AGENT_BIN, "--config", config}, log), 2);
  EXPECT_NE(read_text(log).find(config + ": cores: must be an integer from 1 to 4096"), std::string::npos)
      << read_text(log);
}

TEST(Config, PrintConfigAndVersionAnswerWithoutStarting) {
  Cluster cluster;
  const std::string config = cluster.dir() + "/daemon.json";
  write_text(config, R"({"data-dir": "/nonexistent/never-created", "tick-ms": 250})");
  const std::string log = cluster.dir() + "/print.log";
  ASSERT_EQ(exit_code_of({TRAINYARD_DAEMON_BIN, "--config", config, "--tick-ms", "100", "--print-config"}, log), 0)
      << read_text(log);
  const std::string printed = read_text(log);
  EXPECT_NE(printed.find(R"("data-dir": "/nonexistent/never-created",)"), std::string::npos) << printed;
  EXPECT_NE(printed.find(R"("tick-ms": 100,)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("// flag --tick-ms"), std::string::npos) << printed;
  EXPECT_FALSE(std::filesystem::exists("/nonexistent/never-created"));

  const std::string version_log = cluster.dir() + "/version.log";
  ASSERT_EQ(exit_code_of({TRAINYARD_AGENT_BIN, "--version"}, version_log), 0);
  EXPECT_EQ(read_text(version_log).rfind("trainyard-agent " TRAINYARD_VERSION " (commit ", 0), 0u)
      << read_text(version_log);
}

}  // namespace
}  // namespace trainyard::testing
