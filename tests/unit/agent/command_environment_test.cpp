#include <gtest/gtest.h>

#include <set>

#include "agent/command_run.h"
#include "agent/job_network.h"

namespace trainyard::agent {
namespace {

TEST(CommandEnvironment, PassesOnlyAllowListedAgentVariablesPlusTheJobsOwn) {
  std::string path = "PATH=/usr/bin:/bin", lc = "LC_ALL=C.UTF-8", home = "HOME=/home/agent";
  std::string secret = "TRAINYARD_ADMIN_TOKEN=s3cret", aws = "AWS_SECRET_ACCESS_KEY=xyz";
  std::string preload = "LD_PRELOAD=/tmp/evil.so", noequals = "JUNK";
  std::vector<char*> environ_like{path.data(), lc.data(), secret.data(), aws.data(), home.data(), preload.data(),
                                  noequals.data(), nullptr};
  LaunchMsg launch;
  launch.job_id = 7;
  launch.attempt_id = 9;
  launch.rank = 1;
  launch.world_size = 2;
  launch.command.env = {{"LR", "3e-4"}, {"PATH", "/opt/job/bin"}};
  launch.data_plane_secret = "data-plane-secret-0123456789abcdef";

  const auto env = command_environment(launch, {"/w/rank-1.progress", "/w/rank-1.provenance.json"}, environ_like.data());

  EXPECT_EQ(env.at("PATH"), "/opt/job/bin");  // the spec's own wins over the agent's
  EXPECT_EQ(env.at("LC_ALL"), "C.UTF-8");
  EXPECT_EQ(env.at("HOME"), "/home/agent");
  EXPECT_EQ(env.at("LR"), "3e-4");
  EXPECT_EQ(env.at("RANK"), "1");
  EXPECT_EQ(env.at("TRAINYARD_PROGRESS_FILE"), "/w/rank-1.progress");
  EXPECT_EQ(env.at("TRAINYARD_PROVENANCE_FILE"), "/w/rank-1.provenance.json");
  EXPECT_FALSE(env.contains("TRAINYARD_ADMIN_TOKEN"));
  EXPECT_FALSE(env.contains("AWS_SECRET_ACCESS_KEY"));
  EXPECT_FALSE(env.contains("LD_PRELOAD"));
  EXPECT_FALSE(env.contains("JUNK"));
  for (const auto& [name, value] : env) EXPECT_EQ(value.find("data-plane-secret"), std::string::npos) << name;
  for (const auto& [name, value] : env) {
    const std::set<std::string> launch_variables = {"RANK",       "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
                                                    "NODE_RANK",  "GROUP_RANK", "GROUP_WORLD_SIZE", "ROLE_RANK",
                                                    "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                                                    "NEURON_RT_VISIBLE_CORES", "LR", "PATH", "PYTHONFAULTHANDLER"};
    const bool ours = name.starts_with("TRAINYARD_") || name.starts_with("LC_") || launch_variables.contains(name);
    const bool inherited =
        std::find(kInheritedEnvironment.begin(), kInheritedEnvironment.end(), name) != kInheritedEnvironment.end();
    EXPECT_TRUE(ours || inherited) << name;
  }
}

TEST(CommandEnvironment, ARankInItsAttemptsOwnNetworkIsToldItsAddressAndInterface) {
  std::vector<char*> environ_like{nullptr};
  LaunchMsg launch;
  launch.rank = 1;
  launch.world_size = 2;
  launch.master_addr = "10.240.0.4";
  launch.job_network = JobNetworkPlan{parse_ipv4_network("10.240.0.0/16", "pool"), parse_ipv4_network("10.240.0.4/31", "block"),
                                      {*parse_ipv4("10.240.0.4"), *parse_ipv4("10.240.0.5")}};
  launch.command.env = {{"NCCL_SOCKET_IFNAME", "=eth0"}};
  const auto env = command_environment(launch, {}, environ_like.data());
  EXPECT_EQ(env.at("MASTER_ADDR"), "10.240.0.4");
  EXPECT_EQ(env.at("TRAINYARD_JOB_ADDR"), "10.240.0.5");
  EXPECT_EQ(env.at("GLOO_SOCKET_IFNAME"), "eth0") << "gloo would pick the host name's address, not the namespace's";
  EXPECT_EQ(env.at("NCCL_SOCKET_IFNAME"), "=eth0") << "the job's own setting wins";
  launch.job_network.reset();
  EXPECT_FALSE(command_environment(launch, {}, environ_like.data()).contains("GLOO_SOCKET_IFNAME"));
}

TEST(JobNetworkHost, TheHostOfADataPlaneAddressIsWhatARouteGoesThrough) {
  EXPECT_EQ(host_of_address("10.77.0.2:7000"), "10.77.0.2");
  EXPECT_EQ(host_of_address("[fd00::1]:7000"), "fd00::1");
  EXPECT_EQ(host_of_address("node-1"), "node-1");
}

// Root's PATH starts with root's own directories, which a job's account cannot search: a job gets a
// standard PATH, never the agent's, unless its spec sets one.
TEST(CommandEnvironment, GivesTheJobAStandardPathNotTheAgents) {
  std::string path = "PATH=/root/.pyenv/shims:/root/.local/bin:/usr/bin";
  std::vector<char*> environ_like{path.data(), nullptr};
  LaunchMsg launch;
  EXPECT_EQ(command_environment(launch, {}, environ_like.data()).at("PATH"), "/usr/local/bin:/usr/bin:/bin");
  launch.command.env = {{"PATH", "/opt/venv/bin:/usr/bin:/bin"}};
  EXPECT_EQ(command_environment(launch, {}, environ_like.data()).at("PATH"), "/opt/venv/bin:/usr/bin:/bin");
  EXPECT_EQ(command_environment(launch, {}, environ_like.data()).at("PYTHONFAULTHANDLER"), "1");
}

// The agent's Python directory (its sitecustomize dumps stacks on the agent's signal) leads the
// job's PYTHONPATH, before the spec's own entries; each process has its own stacks file.
TEST(CommandEnvironment, PutsTheAgentsPythonFirstOnThePathAndNamesTheStacksFileAndSignal) {
  std::vector<char*> no_environment{nullptr};
  LaunchMsg launch;
  const RankFiles files{"/w/rank-0.progress", "/w/rank-0.provenance.json", "/w/rank-0.stacks"};
  auto env = command_environment(launch, files, no_environment.data(), nullptr, 0, "/var/lib/trainyard/python");
  EXPECT_EQ(env.at("PYTHONPATH"), "/var/lib/trainyard/python");
  EXPECT_EQ(env.at("TRAINYARD_STACKS_FILE"), "/w/rank-0.stacks");
  EXPECT_EQ(env.at("TRAINYARD_STACKS_SIGNAL"), std::to_string(stacks_signal()));
  launch.command.env = {{"PYTHONPATH", "/home/u/src"}};
  env = command_environment(launch, files, no_environment.data(), nullptr, 0, "/var/lib/trainyard/python");
  EXPECT_EQ(env.at("PYTHONPATH"), "/var/lib/trainyard/python:/home/u/src");
  EXPECT_EQ(rank_files("/w", 3).stacks, "/w/rank-3.stacks");
}

// How long a command has after SIGUSR1 (a requeue or preemption asking for a checkpoint) to save
// and exit, in whole seconds.
TEST(CommandEnvironment, TellsTheProcessItsPreemptionGrace) {
  std::vector<char*> no_environment{nullptr};
  LaunchMsg launch;
  launch.preempt_grace_ms = 30'000;
  EXPECT_EQ(command_environment(launch, {}, no_environment.data()).at("TRAINYARD_PREEMPT_GRACE_S"), "30");
  launch.preempt_grace_ms = 2'500;
  EXPECT_EQ(command_environment(launch, {}, no_environment.data()).at("TRAINYARD_PREEMPT_GRACE_S"), "2");
}

TEST(CommandEnvironment, NamesTheJobsAccountNotTheAgents) {
  std::string home = "HOME=/root", user = "USER=root";
  std::vector<char*> environ_like{home.data(), user.data(), nullptr};
  LaunchMsg launch;
  launch.command.env = {{"HOME", "/scratch"}};
  const JobAccount account{"nobody", 65534, 65534, false, {}, "/nonexistent"};
  const auto env = command_environment(launch, {"/w/rank-0.progress", "/w/rank-0.provenance.json"}, environ_like.data(), &account);
  EXPECT_EQ(env.at("USER"), "nobody");
  EXPECT_EQ(env.at("LOGNAME"), "nobody");
  EXPECT_EQ(env.at("HOME"), "/scratch") << "the job's own spec still wins";
}

}  // namespace
}  // namespace trainyard::agent
