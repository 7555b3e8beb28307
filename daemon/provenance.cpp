#include "daemon/provenance.h"

#include "daemon/base/auth.h"
#include "proto/provenance.h"
#include "proto/text.h"
#include "proto/version.h"

namespace trainyard::daemon {
namespace {

// The spec as recorded (`stored` is to_json(spec)): the values of secret-looking variables masked,
// like the environment.
Json recorded_spec(const JobSpec& spec, Json stored) {
  if (stored.contains("command") && stored["command"].contains("env")) {
    stored["command"]["env"] = mask_secrets(spec.command.env);
  }
  return stored;
}

std::string sha256_of(const Json& stored_spec) { return sha256_hex(json_text(stored_spec)); }

bool has_rank(const Json& provenance, int rank) {
  return provenance.is_object() && provenance.contains("ranks") && rank >= 0 &&
         static_cast<std::size_t>(rank) < provenance["ranks"].size();
}

Json& rank_record(Json& provenance, int rank) { return provenance["ranks"][static_cast<std::size_t>(rank)]; }

}  // namespace

std::string spec_sha256(const JobSpec& spec) { return sha256_of(to_json(spec)); }

Json launch_provenance(const Job& job, const Attempt& attempt, const std::vector<RankAdmission>& ranks,
                       const std::optional<ResumedCheckpoint>& checkpoint) {
  Json stored_spec = to_json(job.spec);
  std::string digest = sha256_of(stored_spec);
  Json record = {{"job", job.id},
                 {"attempt", attempt.number},
                 {"attempt_id", attempt.id},
                 {"user", job.user},
                 {"daemon", {{"version", build_version()}, {"commit", build_commit()}}},
                 {"spec_sha256", std::move(digest)},
                 {"spec", recorded_spec(job.spec, std::move(stored_spec))}};
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

void record_rank_environment(AttemptProvenance& provenance, int rank,
                             const std::map<std::string, std::string>& environment) {
  if (environment.empty() || !has_rank(provenance.json(), rank)) return;
  provenance.amend([&](Json& p) { rank_record(p, rank)["environment"] = environment; });
}

void record_user_facts(AttemptProvenance& provenance, int rank, const Json& facts, const std::string& error) {
  if ((facts.is_null() && error.empty()) || !has_rank(provenance.json(), rank)) return;
  provenance.amend([&](Json& p) {
    Json& r = rank_record(p, rank);
    if (!facts.is_null()) r["user_facts"] = facts;
    if (!error.empty()) r["user_facts_error"] = error;
  });
}

}  // namespace trainyard::daemon
