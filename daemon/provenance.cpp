#include "daemon/provenance.h"

#include "daemon/auth.h"
#include "proto/provenance.h"
#include "proto/text.h"
#include "proto/version.h"

namespace trainyard::daemon {
namespace {

// The spec as recorded: the values of secret-looking variables masked, like the environment.
Json recorded_spec(const JobSpec& spec) {
  Json j = to_json(spec);
  if (j.contains("command") && j["command"].contains("env")) {
    j["command"]["env"] = mask_secrets(spec.command.env);
  }
  return j;
}

Json* rank_record(Json& provenance, int rank) {
  if (!provenance.is_object() || !provenance.contains("ranks")) return nullptr;
  Json& ranks = provenance["ranks"];
  if (rank < 0 || static_cast<std::size_t>(rank) >= ranks.size()) return nullptr;
  return &ranks[static_cast<std::size_t>(rank)];
}

}  // namespace

std::string spec_sha256(const JobSpec& spec) { return sha256_hex(json_text(to_json(spec))); }

Json launch_provenance(const Job& job, const Attempt& attempt, const std::vector<RankAdmission>& ranks,
                       const std::optional<ResumedCheckpoint>& checkpoint) {
  Json record = {{"job", job.id},
                 {"attempt", attempt.number},
                 {"attempt_id", attempt.id},
                 {"user", job.user},
                 {"daemon", {{"version", build_version()}, {"commit", build_commit()}}},
                 {"spec_sha256", spec_sha256(job.spec)},
                 {"spec", recorded_spec(job.spec)}};
  if (job.spec.code_version) record["code_version"] = *job.spec.code_version;
  if (job.spec.kind == JobKind::simulated) record["kernel"] = to_json(job.spec.workload);
  if (checkpoint) {
    Json resumed = {{"path", checkpoint->path}, {"step", checkpoint->step}};
    if (!checkpoint->manifest_sha256.empty()) resumed["manifest_sha256"] = checkpoint->manifest_sha256;
    record["checkpoint"] = std::move(resumed);
  }
  Json rank_records = Json::array();
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const RankAdmission& a = ranks[r];
    Json rank = {{"rank", r}, {"node", a.node}, {"agent_version", a.agent_version}};
    if (a.health_check > 0) rank["admitted_by"] = {{"health_check", a.health_check}, {"verdict", a.verdict}};
    rank_records.push_back(std::move(rank));
  }
  record["ranks"] = std::move(rank_records);
  return record;
}

void record_rank_environment(Json& provenance, int rank, const std::map<std::string, std::string>& environment) {
  if (Json* r = rank_record(provenance, rank); r && !environment.empty()) (*r)["environment"] = environment;
}

void record_user_facts(Json& provenance, int rank, const Json& facts, const std::string& error) {
  Json* r = rank_record(provenance, rank);
  if (!r) return;
  if (!facts.is_null()) (*r)["user_facts"] = facts;
  if (!error.empty()) (*r)["user_facts_error"] = error;
}

}  // namespace trainyard::daemon
