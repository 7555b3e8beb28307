#pragma once
// Attempt provenance (docs/DESIGN.md "Provenance"): everything an attempt
// depended on, as one JSON object kept with the attempt. Built when the attempt launches (versions,
// the spec and its SHA-256, the kernel configuration, the checkpoint it resumed from, the nodes and
// the health checks that admitted them), then completed by its ranks: the environment each
// process was given (masked by the agent) when it starts, the facts the job wrote about itself when
// it ends. Pure: the job manager supplies every fact.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proto/job.h"

namespace trainyard::daemon {

// The checkpoint a retry resumed from: a command job's own-format checkpoint has no manifest.
struct ResumedCheckpoint {
  std::string path;
  std::int64_t step = 0;
  std::string manifest_sha256;  // empty: no manifest
};

// What admitted a rank's node: the agent it ran and the node's last health check before launch
// (the pre-flight, when there was one).
struct RankAdmission {
  std::string node;
  std::string agent_version;
  std::int64_t health_check = 0;  // 0: never checked
  std::string verdict;
};

// Hex SHA-256 of the spec's canonical JSON (keys sorted, compact), the spec exactly as stored.
std::string spec_sha256(const JobSpec& spec);

// The record at launch. `ranks` is indexed by rank.
Json launch_provenance(const Job& job, const Attempt& attempt, const std::vector<RankAdmission>& ranks,
                       const std::optional<ResumedCheckpoint>& checkpoint);

// A rank's part, filled in as it reports; a record without the rank (an older one) is left alone.
// Nothing to record leaves the version as it is.
void record_rank_environment(AttemptProvenance& provenance, int rank,
                             const std::map<std::string, std::string>& environment);
void record_user_facts(AttemptProvenance& provenance, int rank, const Json& facts, const std::string& error);

}  // namespace trainyard::daemon
