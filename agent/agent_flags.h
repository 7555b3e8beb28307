#pragma once
// The agent process's settings as flags, TRAINYARD_AGENT_* variables and config-file keys: its own
// (the daemons and how to reach them, its join token, name, labels, directories and memory), and
// those the parts it runs declare (job accounts, agent/job_account_flags.h; the simulated node,
// neuron/node_flags.h), and the AgentConfig they make.
#include <cstdint>
#include <string>
#include <vector>

#include "agent/agent.h"
#include "agent/job_account_flags.h"
#include "net/tls.h"
#include "neuron/node_flags.h"
#include "proto/flag_parser.h"

namespace trainyard::agent {

struct AgentSettings {
  std::string server;  // URL1,URL2,...: the daemons, tried in turn
  net::TlsClientFiles tls;
  std::string join_token_file;
  std::string name;
  std::int64_t memory_mb = 0;  // what jobs may have; main sets the host's when the flag is not given
  std::string work_dir;
  std::string checkpoint_root;
  std::vector<std::string> labels;   // KEY=VALUE
  std::int64_t job_pids_max = 4096;  // each attempt's cgroup's pids.max
  std::int64_t job_disk_floor_mb = 512;
  JobAccountSettings accounts;
  neuron::SimulatedNodeSettings node;
};

void add_agent_flags(FlagParser& flags, AgentSettings& settings);

// The agent's config: the server list checked, the TLS files and the join token read, name, labels
// and checkpoint root checked, the job accounts resolved. Its data address and cgroups are filled
// in once those are set up. Throws InvalidInput naming the flag.
AgentConfig agent_config(const AgentSettings& settings, bool agent_is_root);

// What the kernel says the host has (MemTotal), which is what a job's cgroup limit can at most give.
std::int64_t host_memory_mb();

}  // namespace trainyard::agent
