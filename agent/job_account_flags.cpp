#include "agent/job_account_flags.h"

#include <spdlog/spdlog.h>

namespace trainyard::agent {

void add_job_account_flags(FlagParser& flags, JobAccountSettings& settings) {
  flags.add_string("job-user",
                   "one Unix account every command job of an unmapped user runs as, shared by all of them (default: "
                   "each job its own uid, see --job-uid-base)",
                   &settings.job_user);
  flags.add_int("job-uid-base",
                "uid of job 0's own account; job J runs as BASE + J, attempt A with gid BASE + COUNT + A mod COUNT",
                &settings.job_uids.first, 1, 0xFFFFFFFE);
  flags.add_int("job-uid-count",
                "how many per-job uids from --job-uid-base (and attempt gids after them); a job id past them is "
                "refused at launch",
                &settings.job_uids.count, 1, 0xFFFFFFFE);
  flags.add_string("job-uid-registry",
                   "directory, shared by every agent of the host, recording which cluster's job holds each per-job uid; "
                   "a job whose uid another cluster's job (or an older database's) holds is refused, not run as it",
                   &settings.job_uid_registry);
  flags.add_string("user-map",
                   "JSON file mapping Trainyard users to Unix accounts, e.g. {\"alice\": \"alice\"}; other users' jobs "
                   "run as accounts of their own (or --job-user)",
                   &settings.user_map_file);
  flags.add_bool("allow-root-jobs", "let command jobs run as root (without --job-user: as the agent, root)",
                 &settings.allow_root_jobs);
}

JobAccounts job_accounts(const JobAccountSettings& settings, bool agent_is_root) {
  JobAccountOptions options;
  options.job_uids = settings.job_uids;
  if (settings.job_uid_registry.empty()) throw InvalidInput("--job-uid-registry", "must name a directory");
  options.job_uid_registry = settings.job_uid_registry;
  if (!agent_is_root) {
    if (!settings.job_user.empty() || !settings.user_map_file.empty()) {
      spdlog::warn("event=job_accounts_ignored reason=\"the agent is not root and cannot switch accounts\"");
    }
    return JobAccounts(options, false);
  }
  if (!settings.job_user.empty()) options.job_user = settings.job_user;
  if (!settings.user_map_file.empty()) options.user_map = read_user_map(settings.user_map_file);
  options.allow_root_jobs = settings.allow_root_jobs;
  return JobAccounts(options, true);
}

}  // namespace trainyard::agent
