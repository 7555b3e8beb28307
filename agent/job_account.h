#pragma once
// The Unix account a command job runs as (README "What a job runs as").
//
// An agent running as root never runs a command job as root unless told to (--allow-root-jobs):
// each job runs as the account its submitting Trainyard user maps to (--user-map), or else, by
// default, as an account of its own that no other job shares: uid = the range's first uid + the
// job id, shifted round the range by the cluster's name (proto WelcomeMsg::cluster), so every node
// and every attempt of a job agree on it without asking anyone (like systemd's DynamicUser) and
// another cluster's job of the same id, or an older database's, has another uid; the node records
// which cluster's job holds each uid (agent/job_uid_registry.h) and refuses a second. Its primary group is the attempt's own, from the gids just past the uid
// range, so what each attempt writes carries its gid: a replaced attempt still running cannot make
// a file that passes for its successor's (agent/command_checkpoints.h). An explicit --job-user runs all unmapped users' jobs as that one account
// instead, and then they can reach each other's files and processes. Named accounts are resolved
// once, at start, so a launch makes no name-service calls and a missing account stops the agent
// before it takes work. An agent that is not root cannot switch: its jobs run as itself.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trainyard::agent {

struct JobAccount {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  bool gid_is_the_attempts = false;  // a per-job account's: no other attempt has this gid
  std::vector<gid_t> groups;  // supplementary groups, from the group database (as initgroups)
  std::string home;
};

// Looks `name` up in the password and group databases; throws InvalidInput(field, ...) when there
// is no such account.
JobAccount resolve_account(const std::string& field, const std::string& name);

// A --user-map file: a JSON object from Trainyard user to Unix user name, e.g. {"alice": "alice"}.
// Throws InvalidInput("--user-map", ...) naming the key when the file or an entry is bad.
std::map<std::string, std::string> read_user_map(const std::string& path);

// The uids of per-job accounts: job J of a cluster whose name gives `shift` runs as
// `first + (shift + J) mod count`; and then the `count` gids after them, one per attempt: attempt
// A's group is `first + count + (shift + A) mod count`. The default range starts at 0x60000000, far
// above the accounts a system allocates, and holds 2^28 job ids (and as many attempts before a gid
// comes round again).
struct JobUidRange {
  std::uint32_t first = 0x60000000;
  std::uint32_t count = 0x10000000;
};

// Where a cluster's jobs start in the range: its name's first 16 hex digits as a number; 0 for the
// empty name (the uids its jobs had before clusters were named).
std::uint64_t cluster_uid_shift(const std::string& cluster);

// Job `job`'s own account for attempt `attempt` in cluster `cluster`: uid = range.first + (shift +
// job) mod count, the attempt's gid, no supplementary groups, named "trainyard-job-J", HOME `home`.
// Throws InvalidInput("job_id", ...) for a job id outside the range.
JobAccount per_job_account(const JobUidRange& range, const std::string& cluster, std::int64_t job,
                           std::int64_t attempt, const std::string& home);

struct JobAccountOptions {
  std::optional<std::string> job_user;  // unset: per-job accounts, or root with allow_root_jobs
  std::map<std::string, std::string> user_map;  // Trainyard user -> Unix user
  bool allow_root_jobs = false;
  JobUidRange job_uids;
  std::string job_uid_registry;  // where per-job uids are claimed (agent/job_uid_registry.h)
};

class JobAccounts {
 public:
  // Resolves every account named; throws InvalidInput naming the flag (and key) when one is
  // missing, is root without `allow_root_jobs`, or has a uid inside the per-job range (it would
  // share it with a job), or when the range itself is bad. `agent_is_root` false: jobs run as the
  // agent.
  JobAccounts(const JobAccountOptions& options, bool agent_is_root);
  JobAccounts() = default;  // jobs run as the agent

  // The account to switch to for attempt `attempt` of job `job` of cluster `cluster`, which `user`
  // submitted and which works in `work_dir` (a per-job account's HOME); empty when the job runs as
  // the agent. Throws InvalidInput("job_id") when the job's own account would fall outside the range.
  std::optional<JobAccount> account_for(const std::string& user, const std::string& cluster, std::int64_t job,
                                        std::int64_t attempt, const std::string& work_dir) const;
  // One line for the start-up log: who jobs run as.
  std::string describe() const;
  // Every account a job may run as, one of them standing for all per-job accounts (they differ only
  // in uid and gid, and own no files outside their attempts); none when jobs run as the agent.
  std::vector<JobAccount> possible_accounts() const;
  // Refuses (InvalidInput "job_id", a "node files: " reason) a per-job `account` whose uid this
  // host's registry records for another job than job `job` of `cluster`, after claiming it when
  // it records none; other accounts are not recorded.
  void claim(const JobAccount& account, const std::string& cluster, std::int64_t job) const;

 private:
  enum class Default { agent, named, per_job };
  Default default_kind_ = Default::agent;  // who runs the jobs of users the map does not name
  std::optional<JobAccount> named_;        // --job-user
  JobUidRange job_uids_;
  std::string job_uid_registry_;
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
