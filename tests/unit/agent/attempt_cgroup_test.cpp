// The pure parts of an attempt's cgroup (agent/attempt_cgroup.h), on the texts the kernel writes:
// /proc/PID/cgroup of both versions, memory.oom_control (v1), memory.events (v2), cgroup.procs.
// The cgroups themselves are exercised by tests/integration/attempt_cgroups_test.cpp (root only).
#include "agent/attempt_cgroup.h"

#include <gtest/gtest.h>

namespace trainyard::agent {
namespace {

// As on a v1 host with a hybrid v2 mount (the unified line names no controller).
constexpr std::string_view kV1Self =
    "9:name=systemd:/\n8:pids:/user.slice\n4:memory:/process_api/03e2\n3:cpu,cpuacct:/\n1:freezer:/\n0::/\n";

TEST(CgroupOf, FindsAControllersPathAlsoInAListOfSeveral) {
  EXPECT_EQ(cgroup_of(kV1Self, "memory"), "/process_api/03e2");
  EXPECT_EQ(cgroup_of(kV1Self, "pids"), "/user.slice");
  EXPECT_EQ(cgroup_of(kV1Self, "cpu"), "/");
  EXPECT_EQ(cgroup_of(kV1Self, "cpuacct"), "/");
  EXPECT_EQ(cgroup_of(kV1Self, "blkio"), std::nullopt);
  EXPECT_EQ(cgroup_of(kV1Self, "systemd"), std::nullopt) << "name=systemd is not the systemd controller";
}

TEST(CgroupOf, TheEmptyControllerIsTheV2Line) {
  EXPECT_EQ(cgroup_of("0::/system.slice/trainyard-agent@n1.service\n", ""), "/system.slice/trainyard-agent@n1.service");
  EXPECT_EQ(cgroup_of(kV1Self, ""), "/");
  EXPECT_EQ(cgroup_of("4:memory:/a\n", ""), std::nullopt);
  EXPECT_EQ(cgroup_of("", "memory"), std::nullopt);
  EXPECT_EQ(cgroup_of("garbage\n4:memory\n", "memory"), std::nullopt) << "lines without two colons are skipped";
}

TEST(KeyedValue, ReadsOomKillsOfBothVersions) {
  const std::string_view v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n";
  EXPECT_EQ(keyed_value(v1, "oom_kill"), 3) << "not oom_kill_disable's 0";
  EXPECT_EQ(keyed_value(v1, "under_oom"), 0);
  const std::string_view v2 = "low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 0\n";
  EXPECT_EQ(keyed_value(v2, "oom_kill"), 1);
  EXPECT_EQ(keyed_value(v2, "oom"), 2) << "a key is a whole word";
  EXPECT_EQ(keyed_value("oom_kill 7", "oom_kill"), 7) << "no final newline";
  EXPECT_EQ(keyed_value("under_oom 0\n", "oom_kill"), std::nullopt) << "before 4.13, v1 has no oom_kill";
  EXPECT_EQ(keyed_value("oom_kill many\n", "oom_kill"), std::nullopt);
}

TEST(PidList, IsOnePidPerLine) {
  EXPECT_EQ(parse_pid_list("12\n345\n"), (std::vector<pid_t>{12, 345}));
  EXPECT_EQ(parse_pid_list(""), std::vector<pid_t>{});
  EXPECT_EQ(parse_pid_list("7\n\nx\n-3\n0\n9"), (std::vector<pid_t>{7, 9}));
}

TEST(AgentCgroupName, IsTheNodeAndAStableHashOfTheWorkDir) {
  EXPECT_EQ(agent_cgroup_name("n1", "/var/lib/trainyard-agent/n1"), agent_cgroup_name("n1", "/var/lib/trainyard-agent/n1"));
  EXPECT_NE(agent_cgroup_name("n1", "/tmp/a/agents/n1"), agent_cgroup_name("n1", "/tmp/b/agents/n1"))
      << "two agents of one name on a host (tests) get two parents";
  EXPECT_EQ(agent_cgroup_name("n1", ""), "n1-811c9dc5") << "FNV-1a's offset basis: the same in every build";
}

TEST(Cgroups, UnavailableSaysWhy) {
  const Cgroups none = Cgroups::set_up("/nonexistent-cgroup-root", "n1-0", 64);
  EXPECT_FALSE(none.available());
  EXPECT_TRUE(none.describe().starts_with("unavailable: /nonexistent-cgroup-root")) << none.describe();
  EXPECT_EQ(none.remove_leftovers(), 0);
}

}  // namespace
}  // namespace trainyard::agent
