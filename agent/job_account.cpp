#include "agent/job_account.h"

#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "agent/job_uid_registry.h"
#include "proto/errors.h"
#include "proto/json_reader.h"

namespace trainyard::agent {

JobAccount resolve_account(const std::string& field, const std::string& name) {
  std::vector<char> buffer(16384);
  passwd pw{};
  passwd* found = nullptr;
  if (::getpwnam_r(name.c_str(), &pw, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) {
    throw InvalidInput(field, "no Unix account \"" + name + "\" on this node");
  }
  JobAccount account{name, pw.pw_uid, pw.pw_gid, false, {}, pw.pw_dir ? pw.pw_dir : "/"};
  int count = 64;
  account.groups.resize(static_cast<std::size_t>(count));
  while (::getgrouplist(name.c_str(), pw.pw_gid, account.groups.data(), &count) < 0) {
    account.groups.resize(static_cast<std::size_t>(count));
  }
  account.groups.resize(static_cast<std::size_t>(count));
  return account;
}

std::map<std::string, std::string> read_user_map(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidInput("--user-map", "cannot read " + path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Json json;
  try {
    json = parse_json_text(text);
  } catch (const InvalidInput& e) {
    throw InvalidInput("--user-map", path + ": " + e.what());
  }
  if (!json.is_object()) {
    throw InvalidInput("--user-map", path + " must hold a JSON object of Trainyard user to Unix user");
  }
  std::map<std::string, std::string> map;
  for (const auto& [user, account] : json.items()) {
    if (user.empty()) throw InvalidInput("--user-map", "an empty Trainyard user name in " + path);
    if (!account.is_string() || account.get<std::string>().empty()) {
      throw InvalidInput("--user-map", "\"" + user + "\" must map to a Unix user name (a non-empty string)");
    }
    map[user] = account.get<std::string>();
  }
  return map;
}

namespace {

JobAccount resolve_unprivileged(const std::string& field, const std::string& name, bool allow_root) {
  JobAccount account = resolve_account(field, name);
  if (account.uid == 0 && !allow_root) {
    throw InvalidInput(field, "\"" + name + "\" is root; command jobs run as root only with --allow-root-jobs");
  }
  return account;
}

// The last uid of the range, and the last of the attempts' gids after it; (uid_t)-1 is no id
// (setresuid's "unchanged"), so the ranges stop short of it.
std::uint64_t last_uid(const JobUidRange& range) { return std::uint64_t{range.first} + range.count - 1; }
std::uint64_t last_gid(const JobUidRange& range) { return last_uid(range) + range.count; }

void check_range(const JobUidRange& range) {
  if (range.first == 0) throw InvalidInput("--job-uid-base", "must not be 0 (root)");
  if (range.count == 0) throw InvalidInput("--job-uid-count", "must be at least 1");
  if (last_gid(range) >= std::uint64_t{static_cast<uid_t>(-1)}) {
    throw InvalidInput("--job-uid-count", "--job-uid-base " + std::to_string(range.first) + " + " +
                                              std::to_string(range.count) + " uids and as many attempt gids pass the largest id, " +
                                              std::to_string(static_cast<uid_t>(-1) - 1));
  }
}

bool in_range(const JobUidRange& range, std::uint64_t id) { return id >= range.first && id <= last_gid(range); }

// A named account with a uid or gid a job may get would share its files and processes with that job.
void check_outside_range(const std::string& field, const JobAccount& account, const JobUidRange& range) {
  if (in_range(range, account.uid) || in_range(range, account.gid)) {
    throw InvalidInput(field, "\"" + account.name + "\" (uid " + std::to_string(account.uid) + ", gid " +
                                  std::to_string(account.gid) + ") is inside the per-job uid range " +
                                  std::to_string(range.first) + "-" + std::to_string(last_uid(range)) +
                                  " or the attempt gids after it, up to " + std::to_string(last_gid(range)) +
                                  " (--job-uid-base, --job-uid-count)");
  }
}

}  // namespace

std::uint64_t cluster_uid_shift(const std::string& cluster) {
  std::uint64_t shift = 0;
  for (const char c : cluster.substr(0, 16)) {
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : 0;
    shift = shift * 16 + static_cast<std::uint64_t>(digit);
  }
  return shift;
}

JobAccount per_job_account(const JobUidRange& range, const std::string& cluster, std::int64_t job,
                           std::int64_t attempt, const std::string& home) {
  if (job < 0 || static_cast<std::uint64_t>(job) >= range.count) {
    throw InvalidInput("job_id", "job " + std::to_string(job) + " has no account of its own: the per-job uid range " +
                                     std::to_string(range.first) + "-" + std::to_string(last_uid(range)) +
                                     " holds job ids 0-" + std::to_string(range.count - 1) +
                                     " (--job-uid-base, --job-uid-count)");
  }
  const std::uint64_t shift = cluster_uid_shift(cluster) % range.count;
  const auto uid = static_cast<uid_t>(range.first + (shift + static_cast<std::uint64_t>(job)) % range.count);
  const auto gid =
      static_cast<gid_t>(last_uid(range) + 1 + (shift + static_cast<std::uint64_t>(attempt) % range.count) % range.count);
  return JobAccount{"trainyard-job-" + std::to_string(job), uid, gid, true, {}, home};
}

JobAccounts::JobAccounts(const JobAccountOptions& options, bool agent_is_root)
    : job_uids_(options.job_uids), job_uid_registry_(options.job_uid_registry) {
  check_range(job_uids_);
  if (!agent_is_root) return;
  for (const auto& [user, name] : options.user_map) {
    try {
      mapped_[user] = resolve_unprivileged("--user-map", name, options.allow_root_jobs);
      check_outside_range("--user-map", mapped_[user], job_uids_);
    } catch (const InvalidInput& e) {
      throw InvalidInput("--user-map", "\"" + user + "\": " + e.message());
    }
  }
  if (options.job_user) {
    named_ = resolve_unprivileged("--job-user", *options.job_user, options.allow_root_jobs);
    check_outside_range("--job-user", *named_, job_uids_);
    default_kind_ = Default::named;
  } else if (!options.allow_root_jobs) {
    default_kind_ = Default::per_job;
  }
}

std::optional<JobAccount> JobAccounts::account_for(const std::string& user, const std::string& cluster,
                                                   std::int64_t job, std::int64_t attempt,
                                                   const std::string& work_dir) const {
  if (const auto it = mapped_.find(user); it != mapped_.end()) return it->second;
  switch (default_kind_) {
    case Default::agent: return std::nullopt;
    case Default::named: return named_;
    case Default::per_job: return per_job_account(job_uids_, cluster, job, attempt, work_dir);
  }
  return std::nullopt;
}

std::vector<JobAccount> JobAccounts::possible_accounts() const {
  std::vector<JobAccount> accounts;
  for (const auto& [user, account] : mapped_) accounts.push_back(account);
  if (default_kind_ == Default::named) accounts.push_back(*named_);
  // Job 0 is in every range (its count is at least 1).
  if (default_kind_ == Default::per_job) accounts.push_back(per_job_account(job_uids_, "", 0, 0, "/"));
  return accounts;
}

void JobAccounts::claim(const JobAccount& account, const std::string& cluster, std::int64_t job) const {
  if (!account.gid_is_the_attempts || job_uid_registry_.empty()) return;
  std::optional<std::string> held;
  try {
    held = claim_job_uid(job_uid_registry_, account.uid, cluster, job);
  } catch (const std::runtime_error& e) {
    held = e.what();
  }
  if (held) throw InvalidInput("job_id", "node files: " + *held);
}

std::string JobAccounts::describe() const {
  std::string text;
  switch (default_kind_) {
    case Default::agent: text = "the agent's own account"; break;
    case Default::named: text = named_->name + " (uid " + std::to_string(named_->uid) + ", shared by every job)"; break;
    case Default::per_job:
      text = "an account of each job's own (uid = " + std::to_string(job_uids_.first) +
             " + (the cluster's shift + job id) mod " + std::to_string(job_uids_.count) + ", up to " +
             std::to_string(last_uid(job_uids_)) + "; a gid of each attempt's own, up to " +
             std::to_string(last_gid(job_uids_)) + ")";
      break;
  }
  if (!mapped_.empty()) text += ", or the account --user-map gives the submitting user";
  return text;
}

const char* drop_privileges(const JobAccount& account) {
  if (::syscall(SYS_setgroups, account.groups.size(), account.groups.data()) != 0) return "setgroups";
  if (::syscall(SYS_setresgid, account.gid, account.gid, account.gid) != 0) return "setresgid";
  if (::syscall(SYS_setresuid, account.uid, account.uid, account.uid) != 0) return "setresuid";
  if (account.uid != 0) {
    const bool regained = ::syscall(SYS_setuid, 0) == 0 || (account.gid != 0 && ::syscall(SYS_setgid, 0) == 0);
    if (regained) return "root could be regained after dropping privileges";
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3] = {};
    if (::syscall(SYS_capget, &header, caps) != 0) return "capget";
    for (const auto& c : caps) {
      if (c.effective != 0 || c.permitted != 0 || c.inheritable != 0) return "capabilities left after dropping them";
    }
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) return "clearing ambient capabilities";
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return "PR_SET_NO_NEW_PRIVS";
  return nullptr;
}

}  // namespace trainyard::agent
