// The job manager's storage side: free disk space on each node as a health check, checkpoint, log
// and work-directory bytes per job and share, and quotas that prune a job's oldest checkpoints
// (daemon/policy/storage_quota.h decides which; the deleting is done here, on the file worker) and stop a
// job that stays over its quota past the grace.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

#include "daemon/events/events.h"
#include "daemon/job_checkpoints.h"
#include "daemon/job_manager.h"
#include "daemon/policy/storage_quota.h"

namespace trainyard::daemon {

// What a scan of a job's checkpoint directory found and did.
struct JobManager::StorageScan {
  std::int64_t bytes_over = 0;             // before pruning
  std::int64_t checkpoint_bytes = 0;       // after pruning
  std::vector<std::int64_t> pruned_steps;  // oldest first
  std::int64_t pruned_bytes = 0;
  std::optional<std::int64_t> kept_step;   // the newest valid checkpoint, never pruned
};

std::optional<std::int64_t> JobManager::share_storage_limit_mb(const std::string& share) const {
  return shares_.storage_limit_mb(share);
}

void JobManager::note_storage(const std::string& node, const HeartbeatMsg& msg) {
  if (!msg.disks.empty()) {
    store::Change change;
    nodes_.record_disks(node, msg.disks, config_.disk_policy, change);
    if (!change.nodes.empty()) persist(std::move(change), [this] { request_schedule(); });
  }
  const MonoTime now = clock_.monotonic_now();
  for (const auto& report : msg.attempts) {
    const auto on = attempts_.rank_on(report.attempt_id, node);
    if (!on) continue;  // fenced by on_heartbeat
    const JobId id = on->attempt->record.job_id;
    const Job& job = active_jobs_.at(id);
    storage_.note_rank_bytes(id, job.spec.share, report.attempt_id, node, report.log_bytes, report.work_bytes);
    const auto share_limit = share_storage_limit_mb(job.spec.share);
    if (!job.spec.storage_limit_mb && !share_limit) continue;
    const bool over = bytes_over_quota(storage_.of_job(id).total(), job.spec.storage_limit_mb,
                                       storage_.of_share(job.spec.share).total(), share_limit) > 0;
    // Logs or work files pushed it over (its checkpoints are what can give way), or its checkpoint
    // directory is due a measurement: a command writes there without telling us.
    if ((over && !storage_.over_quota(id)) ||
        storage_.scan_due(id, job.spec.share, now, config_.storage_scan_interval)) {
      check_storage(id);
    }
  }
}

void JobManager::check_storage(JobId id) {
  if (checkpoint_dir_of(id).empty()) {
    const Job& job = active_jobs_.at(id);
    const StorageBytes mine = storage_.of_job(id);
    StorageScan scan;
    scan.bytes_over = bytes_over_quota(mine.total(), job.spec.storage_limit_mb, storage_.of_share(job.spec.share).total(),
                                       share_storage_limit_mb(job.spec.share));
    return storage_scanned(id, scan);
  }
  store_.read(
      [this, id](store::Store& store) {
        return StoreWorker::Continuation(
            [this, id, recorded = store.checkpoints_of(id)]() mutable { scan_storage(id, std::move(recorded)); });
      },
      [id](const Error& error) {
        spdlog::error("event=storage_check_failed job={} error=\"{}\"", id, error.during("reading recorded checkpoints").message);
      });
}

void JobManager::scan_storage(JobId id, std::vector<store::CheckpointRecord> recorded) {
  const Job* job = active_job(id);
  if (!job) return;
  const StorageBytes mine = storage_.of_job(id);
  const StorageBytes share = storage_.of_share(job->spec.share);
  // What the rest of the job and share keep besides this directory, which the scan measures afresh.
  const std::int64_t job_besides = mine.total() - mine.checkpoint_bytes;
  const std::int64_t share_besides = share.total() - mine.checkpoint_bytes;
  files_.run(
      [this, id, job_besides, share_besides, kind = job->spec.kind, job_limit = job->spec.storage_limit_mb,
       share_limit = share_storage_limit_mb(job->spec.share), dir = checkpoint_dir_of(id),
       recorded = std::move(recorded)] {
        const auto statuses = inspect_checkpoints(dir, recorded, kind);
        std::vector<CheckpointUsage> usage;
        StorageScan scan;
        for (const auto& s : statuses) {
          usage.push_back({s.step, directory_bytes(s.path), s.valid});
          scan.checkpoint_bytes += usage.back().bytes;
          if (s.valid) scan.kept_step = s.step;
        }
        scan.bytes_over = bytes_over_quota(job_besides + scan.checkpoint_bytes, job_limit, share_besides + scan.checkpoint_bytes,
                                           share_limit);
        for (const std::int64_t step : checkpoints_to_prune(usage, scan.bytes_over)) {
          const auto at = std::find_if(usage.begin(), usage.end(), [step](const CheckpointUsage& u) { return u.step == step; });
          std::error_code ec;
          std::filesystem::remove_all(statuses[static_cast<std::size_t>(at - usage.begin())].path, ec);
          if (ec) {
            spdlog::error("event=checkpoint_prune_failed job={} step={} error=\"{}\"", id, step, ec.message());
            continue;
          }
          scan.pruned_steps.push_back(step);
          scan.pruned_bytes += at->bytes;
          scan.checkpoint_bytes -= at->bytes;
        }
        return FileWorker::Continuation([this, id, scan] { storage_scanned(id, scan); });
      },
      [id](const Error& error) {
        spdlog::error("event=storage_check_failed job={} error=\"{}\"", id, error.during("measuring checkpoints").message);
      });
}

void JobManager::storage_scanned(JobId id, const StorageScan& scan) {
  const Job* job = active_job(id);
  if (!job) return;
  if (!checkpoint_dir_of(id).empty()) storage_.note_checkpoint_bytes(id, job->spec.share, scan.checkpoint_bytes);
  const bool was_over = storage_.over_quota(id);
  storage_.set_over_quota(id, scan.bytes_over > 0, clock_.monotonic_now());
  if (scan.bytes_over == 0 || (was_over && scan.pruned_steps.empty())) return;
  const StorageBytes now = storage_.of_job(id);
  std::string message = "job " + job_ref_text(*job) + " is " + std::to_string(scan.bytes_over) +
                        " bytes over its storage quota; ";
  message += scan.pruned_steps.empty() ? "no checkpoint could be pruned"
                                       : "pruned " + std::to_string(scan.pruned_steps.size()) + " oldest checkpoint(s), " +
                                             std::to_string(scan.pruned_bytes) + " bytes";
  if (scan.kept_step) message += "; kept the newest valid one, step " + std::to_string(*scan.kept_step);
  Json details = {{"bytes_over", scan.bytes_over},
                  {"pruned_steps", scan.pruned_steps},
                  {"pruned_bytes", scan.pruned_bytes},
                  {"kept_step", scan.kept_step ? Json(*scan.kept_step) : Json(nullptr)},
                  {"checkpoint_bytes", now.checkpoint_bytes},
                  {"log_bytes", now.log_bytes},
                  {"work_bytes", now.work_bytes},
                  {"job_limit_mb", job->spec.storage_limit_mb ? Json(*job->spec.storage_limit_mb) : Json(nullptr)}};
  if (auto share_limit = share_storage_limit_mb(job->spec.share)) details["share_limit_mb"] = *share_limit;
  spdlog::warn("event=storage_over_quota job={} share={} bytes_over={} pruned_steps={} pruned_bytes={}", id, job->spec.share,
               scan.bytes_over, scan.pruned_steps.size(), scan.pruned_bytes);
  store::Change change;
  change.events.push_back(job_event(clock_.system_now(), "job.storage_over_quota", *job, attempts_.current_id(id), "",
                                    message, std::move(details)));
  persist(std::move(change), nullptr);
}

void JobManager::enforce_storage_quota(ActiveAttempt& attempt, MonoTime now) {
  if (attempt.stopping() || attempt.record.state != AttemptState::running) return;
  const Job& job = active_jobs_.at(attempt.record.job_id);
  const std::optional<MonoTime> since = storage_.over_quota_since(job.id);
  if (!since || now - *since < config_.storage_grace) return;
  const StorageBytes bytes = storage_.of_job(job.id);
  const std::string why = "storage_quota: over its storage quota for " +
                          std::to_string(std::chrono::duration_cast<std::chrono::seconds>(now - *since).count()) +
                          " s (checkpoints " + std::to_string(bytes.checkpoint_bytes) + " bytes, logs " +
                          std::to_string(bytes.log_bytes) + ", work directory " + std::to_string(bytes.work_bytes) + ")";
  spdlog::warn("event=storage_quota_exceeded job={} attempt={} checkpoint_bytes={} log_bytes={} work_bytes={}", job.id,
               attempt.record.id, bytes.checkpoint_bytes, bytes.log_bytes, bytes.work_bytes);
  store::Change change;
  change.events.push_back(job_event(clock_.system_now(), "job.storage_over_quota", job, attempt.record.id, "",
                                    "job " + job_ref_text(job) + " stayed over its storage quota past the grace and is being stopped",
                                    {{"stopped", true},
                                     {"checkpoint_bytes", bytes.checkpoint_bytes},
                                     {"log_bytes", bytes.log_bytes},
                                     {"work_bytes", bytes.work_bytes},
                                     {"grace_s", std::chrono::duration_cast<std::chrono::seconds>(config_.storage_grace).count()}}));
  persist(std::move(change), nullptr);
  kill_attempt(attempt, why, StopCause::quota_exceeded);
}

}  // namespace trainyard::daemon
