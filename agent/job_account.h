#pragma once
// The Unix account a command job runs as (README "What a job runs as").
//
// An agent running as root never runs a command job as root unless told to (--allow-root-jobs):
// each job runs as the account its submitting Trainyard user maps to (--user-map), or else as
// --job-user (default `nobody`). Accounts are resolved once, at start, so a launch makes no
// name-service calls and a missing account stops the agent before it takes work. An agent that is
// not root cannot switch: its jobs run as itself.
#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trainyard::agent {

struct JobAccount {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups, from the group database (as initgroups)
  std::string home;
};

// Looks `name` up in the password and group databases; throws InvalidInput(field, ...) when there
// is no such account.
JobAccount resolve_account(const std::string& field, const std::string& name);

// A --user-map file: a JSON object from Trainyard user to Unix user name, e.g. {"alice": "alice"}.
// Throws InvalidInput("--user-map", ...) naming the key when the file or an entry is bad.
std::map<std::string, std::string> read_user_map(const std::string& path);

struct JobAccountOptions {
  std::optional<std::string> job_user;  // unset: nobody, or root with allow_root_jobs
  std::map<std::string, std::string> user_map;  // Trainyard user -> Unix user
  bool allow_root_jobs = false;
};

class JobAccounts {
 public:
  // Resolves every account named; throws InvalidInput naming the flag (and key) when one is
  // missing, or is root without `allow_root_jobs`. `agent_is_root` false: jobs run as the agent.
  JobAccounts(const JobAccountOptions& options, bool agent_is_root);
  JobAccounts() = default;  // jobs run as the agent

  // The account to switch to for a job `user` submitted; empty when the job runs as the agent.
  std::optional<JobAccount> account_for(const std::string& user) const;
  // One line for the start-up log: who jobs run as.
  std::string describe() const;

 private:
  std::optional<JobAccount> default_account_;  // empty: jobs of unmapped users run as the agent
  std::map<std::string, JobAccount> mapped_;
};

// In the job's child process, before exec: supplementary groups, gid, uid, then checks that root
// cannot be regained and no capability is left, and sets PR_SET_NO_NEW_PRIVS. Async-signal-safe,
// and safe in a child that shares the agent's memory (agent/process_spawn.h): the credential calls
// are raw system calls, which change only the calling process, where glibc's wrappers would signal
// every thread of the agent to change its credentials too. Returns nullptr on success, else what
// failed (the child reports it and exits).
const char* drop_privileges(const JobAccount& account);

}  // namespace trainyard::agent
