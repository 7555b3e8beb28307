// Storage with fake agents: free disk space as a health check, checkpoint and
// log bytes per job and share, quotas that prune the oldest checkpoints and never the newest valid
// one, and ENOSPC classified as the node's disk or the job's own quota.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "checkpoint/checkpoint.h"
#include "tests/unit/daemon/harness.h"
#include "tests/unit/daemon/job_manager_helpers.h"

namespace trainyard::daemon::testing {
namespace {
namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::int64_t kMiB = 1024 * 1024;

JobSpec limited_simulated_spec(std::optional<std::int64_t> storage_limit_mb, std::string share = "default") {
  JobSpec spec = command_spec(1, 3);
  spec.kind = JobKind::simulated;
  spec.share = std::move(share);
  spec.storage_limit_mb = storage_limit_mb;
  return spec;
}

// A checkpoint of about 1.2 MiB: three vectors of 100,000 floats.
fs::path write_checkpoint_at(const fs::path& dir, std::int64_t step) {
  checkpoint::TrainingState s;
  s.step = step;
  s.dims = {1, 1};
  s.params.assign(100'000, 1.0f);
  s.adam_m.assign(100'000, 0.0f);
  s.adam_v.assign(100'000, 0.0f);
  return checkpoint::write_checkpoint(dir, s);
}

void report_checkpoints(Cluster& c, const std::string& node, AttemptId attempt, const std::vector<fs::path>& written) {
  MetricsMsg msg;
  msg.attempt_id = attempt;
  for (const auto& path : written) {
    msg.checkpoints.push_back(CheckpointReport{*checkpoint::step_of(path), checkpoint::manifest_sha256(path).value()});
  }
  c.send(node, msg);
}

std::vector<std::int64_t> steps_on_disk(const fs::path& dir) {
  std::vector<std::int64_t> steps;
  for (const auto& info : checkpoint::list_checkpoints(dir)) steps.push_back(info.step);
  return steps;
}

std::vector<store::Event> events_of_type(Cluster& c, const std::string& type) {
  std::vector<store::Event> out;
  for (const auto& e : c.memory.events_after(0, 10'000)) {
    if (e.kind == type) out.push_back(e);
  }
  return out;
}

// Lets `seconds` pass with the node heartbeating `report` and the daemon ticking every second (a
// silent node would be lost).
void run_for(Cluster& c, const std::string& node, const AttemptReport& report, int seconds) {
  for (int s = 0; s < seconds; ++s) {
    c.advance(Millis(1000));
    c.heartbeat(node, {report});
    c.jobs.tick();
    c.settle();
  }
}

HeartbeatMsg disks(std::int64_t work_free_mb, std::int64_t checkpoint_free_mb) {
  HeartbeatMsg hb;
  hb.disks = {DiskSpace{"work", work_free_mb, 100'000}, DiskSpace{"checkpoint", checkpoint_free_mb, 100'000}};
  return hb;
}

TEST(Storage, AJobOverItsQuotaLosesItsOldestCheckpointsAndKeepsTheNewestValidOne) {
  Cluster c;
  c.connect("n1");
  const Job job = c.submit(limited_simulated_spec(2));
  const LaunchMsg launch = c.agents["n1"]->launches().at(0);
  c.started("n1", launch.attempt_id);
  const fs::path dir = launch.checkpoint_dir;
  report_checkpoints(c, "n1", launch.attempt_id,
                     {write_checkpoint_at(dir, 10), write_checkpoint_at(dir, 20), write_checkpoint_at(dir, 30)});

  EXPECT_THAT(steps_on_disk(dir), ElementsAre(30));
  const auto over = events_of_type(c, "job.storage_over_quota");
  ASSERT_EQ(over.size(), 1u);
  EXPECT_EQ(over[0].job_id, job.id);
  EXPECT_EQ(over[0].details["pruned_steps"], Json::array({10, 20}));
  EXPECT_EQ(over[0].details["kept_step"], 30);
  EXPECT_THAT(over[0].message, HasSubstr("kept the newest valid one, step 30"));
  const StorageBytes bytes = c.jobs.storage().of_job(job.id);
  EXPECT_GT(bytes.checkpoint_bytes, kMiB);
  EXPECT_LT(bytes.checkpoint_bytes, 2 * kMiB);
  EXPECT_EQ(c.jobs.storage().of_share("default"), bytes);
}

TEST(Storage, TheNewestValidCheckpointStaysEvenWhenItAloneIsOverTheQuota) {
  Cluster c;
  c.connect("n1");
  const Job job = c.submit(limited_simulated_spec(1));
  const LaunchMsg launch = c.agents["n1"]->launches().at(0);
  c.started("n1", launch.attempt_id);
  const fs::path dir = launch.checkpoint_dir;
  report_checkpoints(c, "n1", launch.attempt_id, {write_checkpoint_at(dir, 10)});
  EXPECT_THAT(steps_on_disk(dir), ElementsAre(10));
  const auto over = events_of_type(c, "job.storage_over_quota");
  ASSERT_EQ(over.size(), 1u);
  EXPECT_THAT(over[0].message, HasSubstr("no checkpoint could be pruned"));
  EXPECT_TRUE(c.jobs.storage().over_quota(job.id));

  // Over its own quota, a full disk is the job's doing: not retried as infrastructure.
  c.exited("n1", launch.attempt_id, 1, std::nullopt, "checkpoint write: No space left on device");
  const Attempt failed = c.stored_attempts(job.id).back();
  EXPECT_EQ(failed.failure_class, "disk_full");
  EXPECT_FALSE(failed.infrastructure);
}

TEST(Storage, AShareQuotaPrunesTheJobThatWentOverIt) {
  Cluster c;
  c.connect("n1");
  bool stored = false;
  c.jobs.set_share("vision", scheduler::ShareSettings{1.0, std::nullopt, 2}, std::nullopt, [&stored](const Result<void>& set) { stored = set.ok(); });
  c.settle();
  ASSERT_TRUE(stored);
  EXPECT_EQ(c.jobs.share_storage_limit_mb("vision"), 2);
  const Job job = c.submit(limited_simulated_spec(std::nullopt, "vision"));
  const LaunchMsg launch = c.agents["n1"]->launches().at(0);
  c.started("n1", launch.attempt_id);
  const fs::path dir = launch.checkpoint_dir;
  report_checkpoints(c, "n1", launch.attempt_id, {write_checkpoint_at(dir, 10), write_checkpoint_at(dir, 20)});
  EXPECT_THAT(steps_on_disk(dir), ElementsAre(20));
  const auto over = events_of_type(c, "job.storage_over_quota");
  ASSERT_EQ(over.size(), 1u);
  EXPECT_EQ(over[0].details["share_limit_mb"], 2);
  const auto shares = c.memory.load().shares;
  const auto vision = std::find_if(shares.begin(), shares.end(), [](const store::ShareRecord& s) { return s.name == "vision"; });
  ASSERT_NE(vision, shares.end());
  EXPECT_EQ(vision->storage_limit_mb, 2) << "the share's quota is stored";
}

TEST(Storage, LogBytesFromHeartbeatsAddUpPerJobAndShare) {
  Cluster c;
  connect_nodes(c, 2);
  RunningJob r = start_job(c, command_spec(2));
  for (int rank = 0; rank < 2; ++rank) {
    AttemptReport report{r.attempt, r.job.id};
    report.log_bytes = 1000 * (rank + 1);
    c.heartbeat(r.nodes[static_cast<std::size_t>(rank)], {report});
  }
  AttemptReport grown{r.attempt, r.job.id};
  grown.log_bytes = 5000;
  c.heartbeat(r.nodes[0], {grown});
  EXPECT_EQ(c.jobs.storage().of_job(r.job.id).log_bytes, 7000);
  EXPECT_EQ(c.jobs.storage().of_share("default").log_bytes, 7000);
  EXPECT_FALSE(c.jobs.storage().over_quota(r.job.id)) << "no quota, never over it";
}

// A quota covers the work directory too: a command that writes 20 MB of files besides its logs,
// under storage_limit_mb 1, is over; once it has stayed over past the grace it is stopped, and the
// attempt fails as disk_full, its own doing (not retried as the node's).
TEST(Storage, AJobThatStaysOverItsQuotaPastTheGraceIsStoppedAsItsOwnDiskFull) {
  Cluster c;
  c.connect("n1");
  JobSpec spec = command_spec(1, 2);
  spec.storage_limit_mb = 1;
  RunningJob r = start_job(c, spec);
  AttemptReport report{r.attempt, r.job.id};
  report.log_bytes = 1000;
  report.work_bytes = 20 * kMiB;
  c.heartbeat("n1", {report});
  EXPECT_EQ(c.jobs.storage().of_job(r.job.id).work_bytes, 20 * kMiB);
  EXPECT_EQ(c.jobs.storage().of_share("default").work_bytes, 20 * kMiB);
  EXPECT_TRUE(c.jobs.storage().over_quota(r.job.id));
  run_for(c, "n1", report, 30);
  EXPECT_TRUE(c.agents.at("n1")->kills().empty()) << "stopped before the grace";
  run_for(c, "n1", report, 31);
  const auto kills = c.agents.at("n1")->kills();
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_EQ(kills[0].attempt_id, r.attempt);
  c.exited("n1", r.attempt, std::nullopt, 15);
  const Attempt stopped = c.stored_attempts(r.job.id).back();
  EXPECT_EQ(stopped.failure_class, "disk_full");
  EXPECT_FALSE(stopped.infrastructure);
  EXPECT_THAT(stopped.reason, HasSubstr("storage_quota: over its storage quota for 6"));
  EXPECT_THAT(stopped.reason, HasSubstr("work directory 20971520"));
  const auto events = events_of_type(c, "job.storage_over_quota");
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().details.value("stopped", false), true);
}

// A job that goes back under its quota before the grace ends is not stopped.
TEST(Storage, AJobBackUnderItsQuotaWithinTheGraceRunsOn) {
  Cluster c;
  c.connect("n1");
  JobSpec spec = command_spec(1);
  spec.storage_limit_mb = 1;
  RunningJob r = start_job(c, spec);
  AttemptReport report{r.attempt, r.job.id};
  report.work_bytes = 20 * kMiB;
  c.heartbeat("n1", {report});
  ASSERT_TRUE(c.jobs.storage().over_quota(r.job.id));
  run_for(c, "n1", report, 20);
  report.work_bytes = 1000;
  run_for(c, "n1", report, 11);  // its next measurement is due within 10 s
  EXPECT_FALSE(c.jobs.storage().over_quota(r.job.id));
  run_for(c, "n1", report, 60);
  EXPECT_TRUE(c.agents.at("n1")->kills().empty());
}

TEST(Storage, ANodeShortOfDiskSpaceIsSuspectAndTakesNoWorkUntilSpaceReturns) {
  JobManagerConfig config = test_config();
  config.disk_policy = {1024, 0};
  Cluster c(config);
  c.connect("n1");
  c.send("n1", disks(50'000, 500));
  EXPECT_EQ(c.jobs.node("n1")->node.state, NodeState::suspect);
  EXPECT_THAT(c.jobs.node("n1")->node.state_reason, HasSubstr("checkpoint filesystem: 500 MiB free"));
  ASSERT_EQ(events_of_type(c, "node.suspect").size(), 1u);
  c.send("n1", disks(50'000, 400));
  EXPECT_EQ(events_of_type(c, "node.suspect").size(), 1u) << "one event while it stays low";

  const Job job = c.submit(command_spec(1));
  c.jobs.tick();
  c.settle();
  EXPECT_TRUE(c.agents["n1"]->launches().empty()) << "a node short of space takes no new jobs";

  c.send("n1", disks(50'000, 5000));
  EXPECT_EQ(c.jobs.node("n1")->node.state, NodeState::healthy);
  EXPECT_EQ(c.jobs.node("n1")->node.state_reason, "disk space recovered");
  c.jobs.tick();
  c.settle();
  ASSERT_EQ(c.agents["n1"]->launches().size(), 1u);
  EXPECT_EQ(c.agents["n1"]->launches()[0].job_id, job.id);
}

TEST(Storage, EnospcOnTheNodesDiskIsRetriedAsInfrastructure) {
  Cluster c;
  c.connect("n1");
  RunningJob r = start_job(c, command_spec(1));  // one attempt: an infrastructure retry must not use it
  c.exited("n1", r.attempt, 1, std::nullopt, "write /scratch/out: No space left on device");
  const Attempt failed = c.stored_attempts(r.job.id).back();
  EXPECT_EQ(failed.failure_class, "disk_full");
  EXPECT_TRUE(failed.infrastructure);
  const Job* job = c.jobs.active_job(r.job.id);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->state, JobState::pending);
  EXPECT_EQ(job->infra_retries, 1);
}

}  // namespace
}  // namespace trainyard::daemon::testing
