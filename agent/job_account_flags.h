#pragma once
// Whom command jobs run as, as the agent's flags and config-file keys, and the accounts they name.
#include <string>

#include "agent/job_account.h"
#include "proto/flag_parser.h"

namespace trainyard::agent {

struct JobAccountSettings {
  std::string job_user;       // one account for every unmapped user's jobs; empty: each job its own
  std::string user_map_file;  // JSON: Trainyard user -> Unix account
  bool allow_root_jobs = false;
  JobUidRange job_uids;
  std::string job_uid_registry = "/var/lib/trainyard/job-uids";  // agent/job_uid_registry.h
};

void add_job_account_flags(FlagParser& flags, JobAccountSettings& settings);

// The accounts the settings name, the user map read and every account resolved (JobAccounts says
// what it refuses). An agent that is not root cannot switch accounts: its jobs run as itself, and
// settings that name accounts are logged as ignored.
JobAccounts job_accounts(const JobAccountSettings& settings, bool agent_is_root);

}  // namespace trainyard::agent
