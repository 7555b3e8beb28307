#pragma once
// The fence keeper's process (agent/fence_keeper.h): `trainyard-agent --fence-keeper`, with its
// channel from the agent on descriptor 3 (agent/rank_channel.h framing):
//
//   {"start": {"node", "processes_dir", "cgroup_root", "cgroup_name",
//              "daemons": {"servers", "ca_file", "cert_file", "key_file", "credential_file"}}}   first
//   {"running": {"attempts", "grace_ms"}}        the attempts the agent runs now, and their kill grace
//   {"deadline": {"at_steady_ms"}}               stop the attempts then, unless told later
//   {"clear": {}}                                no deadline
//   {"stand_down": {}}                           exit now (the agent stops cleanly)
//
// When a deadline passes it sends SIGTERM to every process group the agent recorded
// (agent/process_registry.h: read, never written), waits until none of their processes runs (a
// zombie nobody reaps does not) or the grace has passed, sends SIGKILL, then kills and removes every attempt cgroup of the agent
// (agent/attempt_cgroup.h), and logs event=fence_keeper_fenced. A thawed agent finds its
// attempts' processes exited and reports them. When the agent's end closes (it died) and attempts
// were running, the keeper stops what is left of them the same way at once (their leaders died
// with the agent; what left their process groups is still in their cgroups), and once it finds
// them gone (no attempt cgroup left; without cgroups, no process of a recorded group running) reports them
// stopped to the daemon (agent/stop_report.h) and exits; with nothing running it exits at once.
namespace trainyard::agent {

inline constexpr const char* kFenceKeeperFlag = "--fence-keeper";

// The keeper's whole life; the process's exit status.
int run_fence_keeper(int channel_fd);

}  // namespace trainyard::agent
