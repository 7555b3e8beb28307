#pragma once
// Whether the accounts jobs run as can reach the agent's directories. A job works in its attempt
// directory under --work-dir and keeps its checkpoints under --checkpoint-root; when a directory
// above them is not searchable by the job's account (/root, a home directory of mode 0700), a
// command job cannot open a file by its absolute path and every checkpoint write fails, while the
// node looks healthy and its jobs succeed or fail for reasons that point elsewhere. So a root agent
// checks, as each account its jobs may run as, before it takes work, and refuses to start with the
// directory to change.
#include <optional>
#include <string>

#include "agent/job_account.h"

namespace trainyard::agent {

// The first directory on `path` (from "/" down to `path` itself) that `account` may not search, as
// found by a child process that takes the account's credentials (which needs root) and asks the
// kernel with access(2), so ACLs count too; nullopt when it may search every one that exists (a
// missing directory ends the walk: whoever creates it chooses its mode). Throws
// std::runtime_error when the check itself cannot run.
std::optional<std::string> first_unsearchable(const JobAccount& account, const std::string& path);

// Throws InvalidInput(flag, ...) when an account jobs may run as cannot reach `dir`, naming the
// directory in the way, its mode and owner, and the account; does nothing when jobs run as the
// agent itself.
void check_jobs_can_reach(const JobAccounts& accounts, const std::string& flag, const std::string& dir);

}  // namespace trainyard::agent
