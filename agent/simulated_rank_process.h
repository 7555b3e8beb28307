#pragma once
// A simulated rank's own process: `trainyard-agent --simulated-rank`, started by the agent for
// every rank of a simulated job (agent/simulated_run.h) as a command job's process is, in the
// attempt's cgroup and under the job's account, with its channel to the agent on descriptor 3
// (agent/rank_channel.h) and the rank's log as stdout. It trains the data-parallel kernel
// (neuron/trainer.h) on its own simulated device, seeded and faulted as the agent's, and reaches
// the other ranks over TCP; its left neighbour's connection arrives at the agent's data-plane port
// and is handed over through the channel.
//
// Stopping: SIGTERM stops training at the next operation (within a step); SIGUSR1 first asks rank
// 0 to checkpoint the step it stopped at; the channel closing (the agent gone) stops it too. The
// agent's kill grace and SIGKILL of the cgroup bound what a wedged process could hold.
namespace trainyard::agent {

inline constexpr const char* kSimulatedRankFlag = "--simulated-rank";

// Runs the rank whose start message arrives on `channel_fd`; the process's exit status.
int run_simulated_rank(int channel_fd);

}  // namespace trainyard::agent
