#pragma once
// Which cluster's job holds each per-job uid on this host (issue 56), in a directory that every
// agent of the host shares (--job-uid-registry): a file per uid, named by it, holding "CLUSTER
// JOB". A uid is claimed at its job's first launch on the host and never given up, since the job's
// files (its work and checkpoint directories, anything it left elsewhere) may outlive it and
// whoever ran as that uid next could read them. Two clusters whose shifted uid ranges meet
// (agent/job_account.h), or a database that reuses an old one's empty name, are caught here: the
// second job is refused as the node's problem, never run as the first one's uid.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace trainyard::agent {

// Records `uid` as job `job` of cluster `cluster` unless it is recorded already; then returns what
// holds it when that is another job. Throws std::runtime_error when the registry cannot be written.
std::optional<std::string> claim_job_uid(const std::string& registry_dir, uid_t uid, const std::string& cluster,
                                         std::int64_t job);

}  // namespace trainyard::agent
