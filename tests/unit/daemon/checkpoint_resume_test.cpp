// Which checkpoint a retry resumes from: only one an attempt of the same job reported, whose
// manifest still has the digest it reported (daemon/job_checkpoints.h). The job's directory is
// the job's to write, so a planted checkpoint, or one rewritten by an attempt that was fenced off,
// must be passed over however valid it looks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "checkpoint/checkpoint.h"
#include "daemon/job_checkpoints.h"
#include "tests/unit/daemon/harness.h"

namespace trainyard::daemon::testing {
namespace {
namespace fs = std::filesystem;

JobSpec simulated_spec(int attempts) {
  JobSpec spec = command_spec(1, attempts);
  spec.kind = JobKind::simulated;
  return spec;
}

// A small, self-consistent training state; `seed` makes two states of one step differ.
checkpoint::TrainingState state_at(std::int64_t step, float seed) {
  checkpoint::TrainingState s;
  s.step = step;
  s.dims = {1, 1};
  s.params = {seed, seed};
  s.adam_m = {0, 0};
  s.adam_v = {0, 0};
  return s;
}

// What a rank 0 reports after publishing `written` (agent: MetricsMsg::checkpoints).
void report_checkpoint(Cluster& c, const std::string& node, AttemptId attempt, std::int64_t step, const fs::path& written) {
  MetricsMsg msg;
  msg.attempt_id = attempt;
  msg.checkpoints.push_back(CheckpointReport{step, checkpoint::manifest_sha256(written).value()});
  c.send(node, msg);
}

// Moves time past the retry backoff, `node` heartbeating, and returns its newest launch.
LaunchMsg launch_after_backoff(Cluster& c, const std::string& node) {
  const std::size_t before = c.agents.at(node)->launches().size();
  for (int i = 0; i < 20 && c.agents.at(node)->launches().size() == before; ++i) {
    c.advance(Millis(1000));
    c.heartbeat(node);
    c.jobs.tick();
    c.settle();
  }
  const auto launches = c.agents.at(node)->launches();
  EXPECT_GT(launches.size(), before) << "no retry was launched";
  return launches.back();
}

TEST(CheckpointResume, ARetryResumesOnlyFromACheckpointItsJobRecordedWithThatDigest) {
  Cluster c;
  c.connect("n1");
  const Job job = c.submit(simulated_spec(3));
  const LaunchMsg first = c.agents["n1"]->launches().at(0);
  c.started("n1", first.attempt_id);
  const fs::path dir = first.checkpoint_dir;
  ASSERT_FALSE(dir.empty());

  const fs::path step10 = checkpoint::write_checkpoint(dir, state_at(10, 1));
  report_checkpoint(c, "n1", first.attempt_id, 10, step10);
  const fs::path step20 = checkpoint::write_checkpoint(dir, state_at(20, 1));
  report_checkpoint(c, "n1", first.attempt_id, 20, step20);
  checkpoint::write_checkpoint(dir, state_at(20, 2));  // rewritten since it was reported: valid, other digest
  checkpoint::write_checkpoint(dir, state_at(50, 3));  // planted: newest and self-consistent, never reported
  ASSERT_TRUE(checkpoint::verify_checkpoint(dir / "step-0000000050").ok());

  c.exited("n1", first.attempt_id, 1);
  const LaunchMsg second = launch_after_backoff(c, "n1");
  ASSERT_EQ(second.attempt_number, 2);
  EXPECT_EQ(second.resume_from, step10.string());
  EXPECT_EQ(c.stored_attempts(job.id).back().resumed_from, step10.string());
}

TEST(CheckpointResume, OnlyARetryClaimsTheDirectoryAFirstAttemptHasNothingToFence) {
  Cluster c;
  c.connect("n1");
  c.submit(simulated_spec(3));
  const LaunchMsg first = c.agents["n1"]->launches().at(0);
  const fs::path dir = first.checkpoint_dir;
  // Whoever writes makes the directory (the agent, a CheckpointWriter): a first attempt costs the
  // daemon no mkdir.
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir))) << "the daemon made a first attempt's directory";
  EXPECT_FALSE(checkpoint::checkpoint_owner(dir)) << "a first attempt was named (two fsyncs it does not need)";
  c.started("n1", first.attempt_id);
  c.exited("n1", first.attempt_id, 1);
  const LaunchMsg second = launch_after_backoff(c, "n1");
  EXPECT_EQ(checkpoint::checkpoint_owner(dir), second.attempt_id) << "the retry does not fence the first attempt";
}

TEST(CheckpointResume, AClaimLeftByAWipedStoresJobOfTheSameIdIsGoneBeforeTheFirstLaunch) {
  Cluster c;
  c.connect("n1");
  const fs::path dir = checkpoint::job_checkpoint_dir(c.checkpoint_root.path, 1);
  checkpoint::claim_checkpoints(dir, 9);
  const Job job = c.submit(simulated_spec(3));
  ASSERT_EQ(job.id, 1);
  ASSERT_EQ(c.agents["n1"]->launches().size(), 1u);
  EXPECT_FALSE(checkpoint::checkpoint_owner(dir)) << "the leftover claim would fence the new job's writer";
}

TEST(CheckpointResume, WhatAFencedOffAttemptReportsAfterItsSuccessorStartedIsNeverResumedFrom) {
  Cluster c;
  c.connect("n1");
  c.submit(simulated_spec(3));
  const LaunchMsg first = c.agents["n1"]->launches().at(0);
  c.started("n1", first.attempt_id);
  const fs::path dir = first.checkpoint_dir;
  report_checkpoint(c, "n1", first.attempt_id, 10, checkpoint::write_checkpoint(dir, state_at(10, 1)));
  c.exited("n1", first.attempt_id, 1);
  const LaunchMsg second = launch_after_backoff(c, "n1");
  c.started("n1", second.attempt_id);

  // The first attempt's rank, still running after its agent lost it, publishes and reports a newer
  // step (on disk past the OWNER check, as a shared filesystem allows); the successor reports its own.
  report_checkpoint(c, "n1", first.attempt_id, 60, checkpoint::write_checkpoint(dir, state_at(60, 1)));
  const fs::path step30 = checkpoint::write_checkpoint(dir, state_at(30, 2));
  report_checkpoint(c, "n1", second.attempt_id, 30, step30);
  c.exited("n1", second.attempt_id, 1);
  const LaunchMsg third = launch_after_backoff(c, "n1");
  ASSERT_EQ(third.attempt_number, 3);
  EXPECT_EQ(third.resume_from, step30.string()) << "resumed from what a fenced-off attempt wrote";
}

TEST(CheckpointResume, ListsEveryStepDirectoryWithWhyItIsNotResumable) {
  Cluster c;
  const fs::path dir = fs::path(c.checkpoint_root.path) / "listed";
  checkpoint::create_checkpoint_dir(dir);
  const fs::path recorded = checkpoint::write_checkpoint(dir, state_at(10, 1));
  const fs::path rewritten = checkpoint::write_checkpoint(dir, state_at(20, 1));
  const std::string reported_20 = checkpoint::manifest_sha256(rewritten).value();
  checkpoint::write_checkpoint(dir, state_at(20, 2));
  checkpoint::write_checkpoint(dir, state_at(30, 1));
  fs::create_directory(dir / "step-0000000040");  // the command's own format: no manifest
  fs::create_directory(dir / "step-0000000050");  // the same, that no current attempt reported
  const std::vector<store::CheckpointRecord> records{{1, 7, 10, checkpoint::manifest_sha256(recorded).value(), TimePoint{}},
                                                     {1, 8, 20, reported_20, TimePoint{}},
                                                     {1, 8, 40, "", TimePoint{}}};

  const auto simulated = inspect_checkpoints(dir, records, JobKind::simulated);
  ASSERT_EQ(simulated.size(), 5u);
  EXPECT_TRUE(simulated[0].valid);
  EXPECT_EQ(simulated[0].recorded_by, 7);
  EXPECT_EQ(simulated[1].problem, "manifest.json differs from the one attempt 8 reported");
  EXPECT_EQ(simulated[2].problem, "not recorded: no attempt of this job reported writing it");
  EXPECT_FALSE(simulated[2].recorded_by);
  EXPECT_EQ(simulated[3].problem, "manifest.json: missing");
  EXPECT_EQ(resume_point(simulated)->step, 10);

  const auto command = inspect_checkpoints(dir, records, JobKind::command);
  EXPECT_TRUE(command[3].valid) << "a command job's own format is its to resume from, once reported";
  EXPECT_FALSE(command[2].valid) << "a manifest nobody reported is not, even in a command job";
  EXPECT_EQ(command[4].problem, "not recorded: no attempt of this job reported writing it while it was current");
  EXPECT_EQ(resume_point(command)->step, 40);
}

// A command's step directory is recorded when its current attempt's agent reports it
// (agent/command_checkpoints.h): one that an attempt writes after it was replaced is reported by
// nobody current, and stays on disk unresumable, however new its step.
TEST(CheckpointResume, ACommandsStepDirectoryWrittenByAFencedOffAttemptIsNeverResumedFrom) {
  Cluster c;
  c.connect("n1");
  c.submit(command_spec(1, 3));
  const LaunchMsg first = c.agents["n1"]->launches().at(0);
  c.started("n1", first.attempt_id);
  const fs::path dir = first.checkpoint_dir;
  checkpoint::create_checkpoint_dir(dir);
  fs::create_directory(dir / "step-0000000010");
  c.send("n1", MetricsMsg{first.attempt_id, {}, {CheckpointReport{10, ""}}});
  c.exited("n1", first.attempt_id, 1);
  const LaunchMsg second = launch_after_backoff(c, "n1");
  ASSERT_EQ(second.resume_from, (dir / "step-0000000010").string());
  c.started("n1", second.attempt_id);

  // The first attempt's rank, still running after it was replaced, writes a newer step, and its
  // agent reports it: not current, the report is dropped.
  fs::create_directory(dir / "step-0000000060");
  c.send("n1", MetricsMsg{first.attempt_id, {}, {CheckpointReport{60, ""}}});
  fs::create_directory(dir / "step-0000000030");
  c.send("n1", MetricsMsg{second.attempt_id, {}, {CheckpointReport{30, ""}}});
  c.exited("n1", second.attempt_id, 1);
  const LaunchMsg third = launch_after_backoff(c, "n1");
  ASSERT_EQ(third.attempt_number, 3);
  EXPECT_EQ(third.resume_from, (dir / "step-0000000030").string()) << "resumed from what a fenced-off attempt wrote";
}

TEST(CheckpointResume, ACommandsStepDirectoryAnotherAccountPlantedIsNotResumedFrom) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving directories to other accounts needs root";
  Cluster c;
  const fs::path dir = fs::path(c.checkpoint_root.path) / "job-1";
  checkpoint::create_checkpoint_dir(dir, checkpoint::DirOwner{1610612737, 1610612737});
  fs::create_directory(dir / "step-0000000005");
  ASSERT_EQ(::lchown((dir / "step-0000000005").c_str(), 1610612737, 1610612737), 0);
  fs::create_directory(dir / "step-0000999999");
  ASSERT_EQ(::lchown((dir / "step-0000999999").c_str(), 1610612738, 1610612738), 0);

  const std::vector<store::CheckpointRecord> reported{{1, 7, 5, "", TimePoint{}}, {1, 7, 999999, "", TimePoint{}}};
  const auto command = inspect_checkpoints(dir, reported, JobKind::command);
  ASSERT_EQ(command.size(), 2u);
  EXPECT_TRUE(command[0].valid) << command[0].problem;
  EXPECT_FALSE(command[1].valid);
  EXPECT_NE(command[1].problem.find("written by uid 1610612738, not by the job's account (uid 1610612737"),
            std::string::npos)
      << command[1].problem;
  EXPECT_EQ(resume_point(command)->step, 5);
}

}  // namespace
}  // namespace trainyard::daemon::testing
