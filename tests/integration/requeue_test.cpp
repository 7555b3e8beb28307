// Hold, release, requeue and checkpoint-aware preemption with real processes:
// a stopped simulated job writes a checkpoint when asked, queues again without using an attempt,
// resumes from that checkpoint and has its steps counted once in goodput.
#include <gtest/gtest.h>

#include <iostream>
#include <set>

#include "checkpoint/checkpoint.h"
#include "proto/time.h"
#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

Json simulated(const std::string& name, const std::string& share, int steps, int step_ms, int checkpoint_every) {
  return {{"name", name},
          {"share", share},
          {"kind", "simulated"},
          {"workload", {{"steps", steps}, {"step_ms", step_ms}, {"checkpoint_every", checkpoint_every}}}};
}

std::int64_t resumed_step(const Json& attempt) {
  if (!attempt.contains("resumed_from")) return 0;
  return checkpoint::step_of(attempt["resumed_from"].get<std::string>()).value_or(0);
}

TEST(Requeue, HeldReleasedAndRequeuedJobResumesFromTheCheckpointItWroteWhenAsked) {
  Cluster cluster;
  cluster.start_daemon();
  cluster.start_agent("trn-0");
  cluster.wait_for_nodes(1);
  Json spec = simulated("held", "default", 400, 10, 1000);  // no periodic checkpoint before the requeue
  spec["hold"] = true;
  const auto id = cluster.submit(spec);
  const Json held = cluster.api("GET", job_path(id)).body;
  EXPECT_EQ(held["pending_reason"]["message"], "held by its owner") << held.dump();
  EXPECT_EQ(held["held_by"], "owner");
  EXPECT_FALSE(eventually([&] { return cluster.api("GET", job_path(id)).body["state"] != "PENDING"; }, 1500ms))
      << "a held job was scheduled";

  ASSERT_EQ(cluster.api("POST", job_path(id) + "/release").status, 200);
  cluster.wait_job_state(id, "RUNNING", 20s);
  ASSERT_TRUE(eventually([&] { return attempts_of(cluster, id)[0].value("last_step", 0) >= 30; }, 20s));
  const auto requeued = cluster.api("POST", job_path(id) + "/requeue");
  ASSERT_EQ(requeued.status, 200) << requeued.body.dump();

  // The resume point is chosen while the new attempt is STARTING; read it once that is over.
  ASSERT_TRUE(eventually([&] {
    const Json a = attempts_of(cluster, id);
    return a.size() == 2 && a[1]["state"] != "STARTING";
  }, 20s)) << attempts_of(cluster, id).dump();
  const Json attempts = attempts_of(cluster, id);
  EXPECT_EQ(attempts[0]["state"], "REQUEUED") << attempts.dump();
  EXPECT_EQ(attempts[0]["failure_class"], "");
  EXPECT_GE(resumed_step(attempts[1]), 30) << "not resumed from the checkpoint the stop wrote: " << attempts.dump();
  EXPECT_EQ(resumed_step(attempts[1]), attempts[0]["steps_completed"]) << attempts.dump();

  const Json done = cluster.wait_job_state(id, "SUCCEEDED", 60s);
  EXPECT_EQ(done["attempts"], 1) << "the requeue used one of the job's attempts: " << done.dump();
  EXPECT_EQ(done["requeues"], 1);
  const Json goodput = cluster.api("GET", job_path(id)).body["goodput"];
  EXPECT_NEAR(goodput["lost_core_s"]["redone"].get<double>(), 0.0, 1e-6) << "steps counted twice: " << goodput.dump();
}

TEST(Preemption, AnOverServedSharesJobMakesRoomForAnUrgentOneAndResumesFromItsCheckpoint) {
  Cluster cluster;
  cluster.start_daemon({"--preempt", "--preempt-min-run-s", "0"});
  cluster.start_agent("trn-0");
  cluster.start_agent("trn-1");
  cluster.wait_for_nodes(2);
  ASSERT_EQ(cluster.api("PUT", "/v1/shares/big", R"({"weight":1})").status, 200);
  ASSERT_EQ(cluster.api("PUT", "/v1/shares/urgent", R"({"weight":1})").status, 200);
  const std::int64_t long_a = cluster.submit(simulated("long-a", "big", 600, 10, 1000));
  const std::int64_t long_b = cluster.submit(simulated("long-b", "big", 600, 10, 1000));
  cluster.wait_job_state(long_a, "RUNNING", 20s);
  cluster.wait_job_state(long_b, "RUNNING", 20s);
  ASSERT_TRUE(eventually([&] { return attempts_of(cluster, long_a)[0].value("last_step", 0) >= 50; }, 20s));

  const std::int64_t urgent = cluster.submit(simulated("urgent", "urgent", 20, 10, 10));
  const Json started = cluster.wait_job_state(urgent, "RUNNING", 20s);
  const auto submitted_at = parse_time(started["submitted_at"].get<std::string>());
  const auto started_at = parse_time(started["started_at"].get<std::string>());
  ASSERT_TRUE(submitted_at && started_at);
  const auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(*started_at - *submitted_at).count();
  std::cout << "[ figure ] urgent job: submit to start " << wait_ms << " ms\n";
  EXPECT_LE(wait_ms, 5000) << "target: checkpoint time + 5 s";

  // One of team big's jobs gave way: its attempt ended PREEMPTED, neither a failure nor a retry.
  std::int64_t victim = 0;
  ASSERT_TRUE(eventually([&] {
    for (std::int64_t id : {long_a, long_b}) {
      if (attempts_of(cluster, id)[0]["state"] == "PREEMPTED") victim = id;
    }
    return victim != 0;
  }, 20s));
  const Json done = cluster.wait_job_state(victim, "SUCCEEDED", 90s);
  EXPECT_EQ(done["attempts"], 1) << done.dump();
  const Json attempts = attempts_of(cluster, victim);
  ASSERT_EQ(attempts.size(), 2u) << attempts.dump();
  EXPECT_GT(resumed_step(attempts[1]), 0) << "started over: " << attempts.dump();
  EXPECT_EQ(resumed_step(attempts[1]), attempts[0]["steps_completed"]) << attempts.dump();
  EXPECT_NEAR(cluster.api("GET", job_path(victim)).body["goodput"]["lost_core_s"]["redone"].get<double>(), 0.0, 1e-6);
  const Json events = cluster.api("GET", "/v1/events?type=job.*&limit=1000").body["events"];
  std::set<std::string> types;
  for (const Json& e : events) types.insert(e["type"].get<std::string>());
  EXPECT_TRUE(types.contains("job.preempted")) << events.dump();
  EXPECT_TRUE(types.contains("job.waiting_on_preemption")) << events.dump();
  cluster.wait_job_state(urgent, "SUCCEEDED", 30s);
}

}  // namespace
}  // namespace trainyard::testing
