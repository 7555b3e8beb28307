#include "agent/agent_flags.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

#include "proto/errors.h"
#include "tests/support/temp_dir.h"

namespace trainyard::agent {
namespace {

// The agent's flags read from a command line alone (no environment, no config file), and the
// config they make, as trainyard-agent's main does.
class AgentFlags : public ::testing::Test {
 protected:
  TempDir dir;
  std::string token_file = (dir.path() / "join-token").string();
  AgentSettings settings;
  FlagParser flags{"trainyard-agent", "", "TRAINYARD_AGENT_"};

  AgentFlags() {
    std::ofstream(token_file) << "tok-123 \r\n";
    add_agent_flags(flags, settings);
  }
  // The given flags after the required ones, into `into` (the fixture's own by default).
  void parse(std::vector<std::string> more, FlagParser* into = nullptr) {
    std::vector<std::string> args = {
        "trainyard-agent", "--server",   "http://10.0.0.1:8080/",       "--join-token-file", token_file, "--name",
        "trn-7",           "--work-dir", (dir.path() / "work").string()};
    args.insert(args.end(), more.begin(), more.end());
    std::vector<const char*> argv;
    for (const auto& a : args) argv.push_back(a.c_str());
    ASSERT_TRUE((into ? into : &flags)->parse(static_cast<int>(argv.size()), argv.data(), SettingSources{{}, nullptr}));
  }
  // The field named by the error that `more` leads to, from parsing or from making the config, on
  // settings of their own.
  std::string refused_field(std::vector<std::string> more) {
    AgentSettings own;
    FlagParser own_flags{"trainyard-agent", "", "TRAINYARD_AGENT_"};
    add_agent_flags(own_flags, own);
    try {
      parse(std::move(more), &own_flags);
      agent_config(own, false);
    } catch (const InvalidInput& e) {
      return e.field();
    }
    return "";
  }
};

TEST_F(AgentFlags, EachPartsFlagsSetItsOwnSettingsAndTheConfigIsMadeFromThem) {
  parse({"--cores",
         "8",
         "--seed",
         "42",
         "--fault",
         "core:1=hang",
         "--fault",
         "node=slow:2",
         "--data-listen",
         "10.0.0.7:0",
         "--collective-timeout-ms",
         "1500",
         "--job-uid-base",
         "70000",
         "--job-uid-count",
         "500",
         "--job-pids-max",
         "99",
         "--memory-mb",
         "2048",
         "--label",
         "rack=r1",
         "--label",
         "zone=a",
         "--checkpoint-root",
         "/ckpt//"});
  EXPECT_EQ(settings.node.cores, 8);
  EXPECT_EQ(settings.node.seed, 42u);
  EXPECT_EQ(settings.accounts.job_uids.first, 70000u);
  EXPECT_EQ(settings.accounts.job_uids.count, 500u);
  EXPECT_EQ(settings.job_pids_max, 99);

  const AgentConfig config = agent_config(settings, false);
  EXPECT_EQ(config.servers, std::vector<std::string>{"http://10.0.0.1:8080"}) << "the trailing '/' is dropped";
  EXPECT_EQ(config.join_token, "tok-123") << "the line's trailing blanks are not the token's";
  EXPECT_EQ(config.name, "trn-7");
  EXPECT_EQ(config.cores, 8);
  EXPECT_EQ(config.memory_mb, 2048);
  EXPECT_EQ(config.checkpoint_root, "/ckpt");
  EXPECT_EQ(config.labels, (std::map<std::string, std::string>{{"rack", "r1"}, {"zone", "a"}}));
  EXPECT_EQ(config.collective_timeout, std::chrono::milliseconds(1500));

  const FaultPlan faults = neuron::fault_plan(settings.node);
  EXPECT_EQ(faults.cores.at(1), CoreFault::hang);
  EXPECT_DOUBLE_EQ(faults.slow_node, 2);
  EXPECT_EQ(neuron::data_listen_address(settings.node), (neuron::HostPort{"10.0.0.7", 0})) << "port 0 picks one";
}

TEST_F(AgentFlags, ARelativeWorkDirIsTakenFromTheDirectoryTheAgentStartsIn) {
  parse({});
  EXPECT_EQ(agent_config(settings, false).work_dir, (dir.path() / "work").string());
  settings.work_dir = "rel/./work/";
  EXPECT_EQ(agent_config(settings, false).work_dir, (std::filesystem::current_path() / "rel/work").string())
      << "a job's HOME is its attempt directory under the work dir, and must mean the same from there";
}

TEST_F(AgentFlags, DefaultsAreTheDocumentedOnes) {
  parse({});
  const AgentConfig config = agent_config(settings, false);
  EXPECT_EQ(config.cores, 32);
  EXPECT_EQ(config.collective_timeout, std::chrono::milliseconds(30000));
  EXPECT_EQ(settings.job_pids_max, 4096);
  EXPECT_EQ(settings.accounts.job_uids.first, JobUidRange{}.first);
  EXPECT_EQ(neuron::data_listen_address(settings.node), (neuron::HostPort{"127.0.0.1", 0}));
  EXPECT_EQ(neuron::fault_plan(settings.node), FaultPlan{});
}

TEST_F(AgentFlags, EveryBadSettingIsRefusedNamingItsFlag) {
  EXPECT_EQ(refused_field({"--label", "no-equals"}), "--label");
  EXPECT_EQ(refused_field({"--label", "=value"}), "--label");
  EXPECT_EQ(refused_field({"--name", "bad name\x1b[31m"}), "--name");
  EXPECT_EQ(refused_field({"--checkpoint-root", "relative/dir"}), "--checkpoint-root");
  EXPECT_EQ(refused_field({"--ca-file", "/etc/ca.pem"}), "--ca-file") << "TLS files need an https:// server";
  EXPECT_EQ(refused_field({"--tls-key", "/etc/key.pem"}), "--tls-key");
  EXPECT_EQ(refused_field({"--server", "http://a:1,https://b:2"}), "--server") << "mixed schemes";
  EXPECT_EQ(refused_field({"--cores", "0"}), "--cores");
  EXPECT_EQ(refused_field({"--collective-timeout-ms", "5"}), "--collective-timeout-ms");
  EXPECT_EQ(refused_field({"--job-uid-base", "0"}), "--job-uid-base");
  EXPECT_EQ(refused_field({"--join-token-file", (dir.path() / "missing").string()}), "--join-token-file");
  std::ofstream(dir.path() / "empty");
  EXPECT_EQ(refused_field({"--join-token-file", (dir.path() / "empty").string()}), "--join-token-file");

  parse({"--data-listen", "no-port", "--fault", "core:99=hang"});
  EXPECT_THROW(neuron::data_listen_address(settings.node), InvalidInput);
  try {
    neuron::fault_plan(settings.node);
    ADD_FAILURE() << "a fault on a core the node does not have was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.field(), "fault");
  }
}

TEST_F(AgentFlags, AnAgentThatIsNotRootRunsJobsAsItselfWhateverAccountsAreNamed) {
  parse({"--job-user", "nobody"});
  EXPECT_EQ(agent_config(settings, false).job_accounts.describe(), JobAccounts().describe());
}

}  // namespace
}  // namespace trainyard::agent
