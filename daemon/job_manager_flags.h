#pragma once
// The job manager's settings as the daemon's flags and config-file keys (proto/flag_parser.h). Each
// flag is bound to the JobManagerConfig field it sets; `resolve` derives what depends on several.
#include <optional>
#include <string>
#include <utility>

#include "daemon/job_manager.h"
#include "proto/flag_parser.h"

namespace trainyard::daemon {

struct JobManagerSettings {
  // A daemon checks idle nodes every hour (the first within a minute) and runs a canary every hour;
  // a JobManagerConfig built in code does neither unless asked.
  JobManagerSettings();

  JobManagerConfig config;
  std::optional<Millis> fence;     // --fence-ms as given (daemon/policy/fence_timing.h); nullopt: derived
  std::string failure_rules_file;  // --failure-rules; empty: the built-in rules only
  std::string master_ports = "20000-39999";  // --master-ports, "FIRST-LAST"
  std::string job_network;                   // --job-network, a CIDR; empty: attempts share their nodes' network
};

void add_job_manager_flags(FlagParser& flags, JobManagerSettings& settings);

// "FIRST-LAST" as ports, 1024 <= FIRST <= LAST <= 65535; throws InvalidInput naming --master-ports.
std::pair<int, int> parse_master_ports(const std::string& text);

// --job-network's pool: an IPv4 network of 16 to 2^24 addresses (prefix 8 to 28); throws
// InvalidInput naming --job-network.
Ipv4Network parse_job_network_pool(const std::string& text);

// The config with what several flags decide: the fence time, how soon after the kill grace a lost
// node's attempts are surely stopped, and the failure rules read from their file. Throws
// InvalidInput naming the flag to change.
JobManagerConfig resolve(const JobManagerSettings& settings);

}  // namespace trainyard::daemon
