// The job manager's storage side (issue 17 item 7): free disk space on each node as a health
// check, checkpoint and log bytes per job and share, and quotas that prune a job's oldest
// checkpoints (daemon/storage_quota.h decides which; the deleting is done here, on the file worker).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

#include "daemon/events.h"
#include "daemon/job_checkpoints.h"
#include "daemon/job_manager.h"
#include "daemon/storage_quota.h"

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
  auto it = share_settings_.find(share);
  return it == share_settings_.end() ? std::nullopt : it->second.storage_limit_mb;
}

void JobManager::note_storage(const std::string& node, const HeartbeatMsg& msg) {
  if (!msg.disks.empty()) {
    store::Change change;
    nodes_.record_disks(node, msg.disks, config_.disk_policy, change);
    if (!change.nodes.empty()) persist(std::move(change), [this] { request_schedule(); });
  }
  for (const auto& report : msg.attempts) {
    auto attempt = attempts_.find(report.attempt_id);
    if (attempt == attempts_.end() || rank_of(attempt->second, node) < 0) continue;  // fenced by on_heartbeat
    const JobId id = attempt->second.record.job_id;
    const Job& job = active_jobs_.at(id);
    storage_.note_log_bytes(id, job.spec.share, report.attempt_id, node, report.log_bytes);
    const bool over = bytes_over_quota(storage_.of_job(id).total(), job.spec.storage_limit_mb,
                                       storage_.of_share(job.spec.share).total(),
                                       share_storage_limit_mb(job.spec.share)) > 0;
    // Logs alone pushed it over: its checkpoints are what can give way.
    if (over && !storage_.over_quota(id)) check_storage(id);
  }
}

void JobManager::check_storage(JobId id) {
  if (checkpoint_dir_of(id).empty()) return;
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
  const std::int64_t job_logs = mine.log_bytes;
  const std::int64_t share_besides = share.total() - mine.checkpoint_bytes;
  files_.run(
      [this, id, job_logs, share_besides, kind = job->spec.kind, job_limit = job->spec.storage_limit_mb,
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
        scan.bytes_over = bytes_over_quota(job_logs + scan.checkpoint_bytes, job_limit, share_besides + scan.checkpoint_bytes,
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
  storage_.note_checkpoint_bytes(id, job->spec.share, scan.checkpoint_bytes);
  const bool was_over = storage_.over_quota(id);
  storage_.set_over_quota(id, scan.bytes_over > 0);
  if (scan.bytes_over == 0 || (was_over && scan.pruned_steps.empty())) return;
  const StorageBytes now = storage_.of_job(id);
  std::string message = "job " + std::to_string(id) + " is " + std::to_string(scan.bytes_over) +
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
                  {"job_limit_mb", job->spec.storage_limit_mb ? Json(*job->spec.storage_limit_mb) : Json(nullptr)}};
  if (auto share_limit = share_storage_limit_mb(job->spec.share)) details["share_limit_mb"] = *share_limit;
  spdlog::warn("event=storage_over_quota job={} share={} bytes_over={} pruned_steps={} pruned_bytes={}", id, job->spec.share,
               scan.bytes_over, scan.pruned_steps.size(), scan.pruned_bytes);
  store::Change change;
  change.events.push_back(job_event(clock_.system_now(), "job.storage_over_quota", *job, current_attempt_.contains(id)
                                        ? std::optional<AttemptId>(current_attempt_.at(id)) : std::nullopt,
                                    "", message, std::move(details)));
  persist(std::move(change), nullptr);
}

}  // namespace trainyard::daemon
