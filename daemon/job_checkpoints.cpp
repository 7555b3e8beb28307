#include "daemon/job_checkpoints.h"

#include <algorithm>

#include "checkpoint/checkpoint.h"

namespace trainyard::daemon {
namespace {

const store::CheckpointRecord* record_of(const std::vector<store::CheckpointRecord>& recorded, std::int64_t step) {
  const auto it = std::find_if(recorded.begin(), recorded.end(), [step](const auto& r) { return r.step == step; });
  return it == recorded.end() ? nullptr : &*it;
}

// A command's own format proves nothing about who wrote it, so its step directory counts only when
// the job's account made it: the agent gives the job's directory to that account (refusing one
// another account made), and another account's step directory in it was planted.
Result<void> written_by_the_job(const std::filesystem::path& job_dir, const std::filesystem::path& step_dir) {
  const auto job_uid = checkpoint::owner_uid(job_dir);
  const auto step_uid = checkpoint::owner_uid(step_dir);
  if (job_uid && step_uid && *job_uid == *step_uid) return {};
  return Error::invalid_input("", "written by uid " + (step_uid ? std::to_string(*step_uid) : "?") +
                                      ", not by the job's account (uid " +
                                      (job_uid ? std::to_string(*job_uid) : "?") + ", the owner of " +
                                      job_dir.string() + ")");
}

Result<void> verify(const std::filesystem::path& dir, const store::CheckpointRecord* record, JobKind kind) {
  const auto bad = [](std::string why) { return Error::invalid_input("", std::move(why)); };
  if (!checkpoint::has_manifest(dir)) {
    if (kind != JobKind::command) return bad("manifest.json: missing");
    if (auto own = written_by_the_job(dir.parent_path(), dir); !own) return own;
    if (!record) return bad("not recorded: no attempt of this job reported writing it while it was current");
    if (!record->manifest_sha256.empty()) {
      return bad("manifest.json: removed since attempt " + std::to_string(record->attempt_id) + " reported it");
    }
    return {};
  }
  if (!record) return bad("not recorded: no attempt of this job reported writing it");
  const auto digest = checkpoint::manifest_sha256(dir);
  if (!digest) return bad("manifest.json: not a readable regular file of sane size");
  if (*digest != record->manifest_sha256) {
    return bad("manifest.json differs from the one attempt " + std::to_string(record->attempt_id) + " reported");
  }
  return checkpoint::verify_checkpoint(dir);
}

}  // namespace

std::vector<CheckpointStatus> inspect_checkpoints(const std::filesystem::path& dir,
                                                  const std::vector<store::CheckpointRecord>& recorded, JobKind kind) {
  std::vector<CheckpointStatus> statuses;
  for (const auto& info : checkpoint::list_checkpoints(dir)) {
    CheckpointStatus status{info.step, info.path.string(), std::nullopt, false, ""};
    const store::CheckpointRecord* record = record_of(recorded, info.step);
    if (record) status.recorded_by = record->attempt_id;
    const auto verified = verify(info.path, record, kind);
    status.valid = verified.ok();
    if (!verified) status.problem = verified.error().message;
    statuses.push_back(std::move(status));
  }
  return statuses;
}

std::int64_t directory_bytes(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::int64_t bytes = 0;
  std::error_code ec;
  // A file vanishing under the walk (the writer prunes too) skips it rather than failing the sum.
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code size_ec;
    if (!it->is_symlink(size_ec) && it->is_regular_file(size_ec)) {
      const auto size = it->file_size(size_ec);
      if (!size_ec) bytes += static_cast<std::int64_t>(size);
    }
  }
  return bytes;
}

std::optional<CheckpointStatus> resume_point(const std::vector<CheckpointStatus>& statuses) {
  const auto newest = std::find_if(statuses.rbegin(), statuses.rend(), [](const auto& s) { return s.valid; });
  if (newest == statuses.rend()) return std::nullopt;
  return *newest;
}

}  // namespace trainyard::daemon
