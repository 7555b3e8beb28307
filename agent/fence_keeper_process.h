#pragma once
// The fence keeper's process (agent/fence_keeper.h): `trainyard-agent --fence-keeper`, with its
// channel from the agent on descriptor 3 (agent/rank_channel.h framing):
//
//   {"start": {"node", "processes_dir", "cgroup_root", "cgroup_name"}}   first
//   {"deadline": {"at_steady_ms", "grace_ms"}}   stop the attempts then, unless told later
//   {"clear": {}}                                 no deadline
//   {"stand_down": {}}                            exit now (the agent stops cleanly)
//
// When a deadline passes it sends SIGTERM to every process group the agent recorded
// (agent/process_registry.h: read, never written), waits until they are gone or the grace has
// passed, sends SIGKILL, then kills and removes every attempt cgroup of the agent
// (agent/attempt_cgroup.h), and logs event=fence_keeper_fenced. A thawed agent finds its
// attempts' processes exited and reports them. When the agent's end closes (it died) and attempts
// were running, the keeper stops what is left of them at once (their leaders died with the agent;
// what left their process groups is still in their cgroups), then exits; with nothing pending it
// exits at once.
namespace trainyard::agent {

inline constexpr const char* kFenceKeeperFlag = "--fence-keeper";

// The keeper's whole life; the process's exit status.
int run_fence_keeper(int channel_fd);

}  // namespace trainyard::agent
