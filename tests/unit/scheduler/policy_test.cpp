// The policy as state in, decisions out. Before each expectation a comment states the shares.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "proto/errors.h"
#include "scheduler/fair_share.h"
#include "scheduler/scheduler.h"
#include "tests/unit/scheduler/scheduler_fixtures.h"

namespace trainyard::scheduler {
namespace {

using namespace fixtures;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr double kHour = 3600;  // expected usage of a 1-core job with the default horizon

TEST(Order, HigherFairShareFactorGoesFirstAndIsRechargedAfterEachStart) {
  Scheduler s{Config{}};
  s.upsert_node(node("n1", 4));
  s.import_usage({"A", 10000, at_s(0)});
  s.queue(job(1, {.share = "A"}));
  s.queue(job(3, {.share = "A"}));
  s.queue(job(2, {.share = "B", .submitted_s = 5}));
  s.queue(job(4, {.share = "B", .submitted_s = 6}));
  // A: usage 10000, weight 1. B: usage 0, weight 1. Each start charges 3600 to its share, so B
  // starts two jobs (usage 7200) before A's 10000 comes next.
  EXPECT_THAT(started(s.schedule(at_s(0))), ElementsAre(2, 4, 1, 3));
}

TEST(Order, WeightDividesUsage) {
  Scheduler s{Config{}};
  s.upsert_node(node("n1", 1));
  s.set_share("A", {.weight = 3});
  s.import_usage({"A", 3000, at_s(0)});
  s.import_usage({"B", 2000, at_s(0)});
  s.queue(job(1, {.share = "B"}));
  s.queue(job(2, {.share = "A", .submitted_s = 9}));
  // A: usage 3000, weight 3 (1000 per weight). B: usage 2000, weight 1.
  EXPECT_THAT(started(s.schedule(at_s(0))), ElementsAre(2));
}

TEST(Order, WithinAShareHigherPriorityThenEarlierSubmissionThenLowerId) {
  Scheduler s{Config{}};
  s.upsert_node(node("n1", 4));
  s.queue(job(3, {.submitted_s = 0}));
  s.queue(job(1, {.submitted_s = 0}));
  s.queue(job(2, {.priority = 5, .submitted_s = 10}));
  s.queue(job(4, {.submitted_s = -5}));
  // One share, "default": only the jobs' own keys order them.
  EXPECT_THAT(started(s.schedule(at_s(10))), ElementsAre(2, 4, 1, 3));
}

TEST(Order, EqualFactorsFallBackToJobPriorityAcrossShares) {
  Scheduler s{Config{}};
  s.upsert_node(node("n1", 1));
  s.queue(job(1, {.share = "A", .priority = 1}));
  s.queue(job(2, {.share = "B", .priority = 5, .submitted_s = 10}));
  // A and B: no usage, weight 1 each: equal factors.
  EXPECT_THAT(started(s.schedule(at_s(10))), ElementsAre(2));
}

TEST(Order, SystemShareGoesFirstWhenItsJobFitsAndNeverHoldsTheCluster) {
  Scheduler s{Config{}};
  s.upsert_node(node("n1", 1));
  s.import_usage({"system", 1e9, at_s(0)});
  s.queue(job(1, {.share = "A"}));
  s.queue(job(2, {.share = "system", .submitted_s = 50}));
  // system: usage 1e9. A: usage 0. The system share still goes first.
  EXPECT_THAT(started(s.schedule(at_s(50))), ElementsAre(2));

  Scheduler t{Config{}};
  t.upsert_node(node("n1", 1));
  t.queue(job(1, {.share = "system", .cores_per_node = 2}));
  t.queue(job(2, {.share = "A"}));
  // system: a canary that cannot fit. A: no usage. A starts; nothing is reserved for the canary.
  const PassResult pass = t.schedule(at_s(0));
  EXPECT_THAT(started(pass), ElementsAre(2));
  EXPECT_FALSE(pass.reservation.has_value());
}

TEST(Order, ABurstIsChargedAsItStartsSoItCannotTakeMoreThanItsShare) {
  Scheduler s{Config{}};
  s.upsert_node(node("n1", 4));
  for (JobId id = 1; id <= 10; ++id) s.queue(job(id, {.share = "A", .submitted_s = id}));
  s.queue(job(11, {.share = "B", .submitted_s = 100}));
  // A: no usage, ten jobs submitted first. B: no usage, one job submitted later. A's first start
  // charges A an hour, so B's job is next.
  EXPECT_THAT(started(s.schedule(at_s(100))), ElementsAre(1, 11, 2, 3));
}

TEST(Order, QueuePositionsFollowShareOrderThenJobOrder) {
  Scheduler s{Config{}};
  s.import_usage({"B", 100, at_s(0)});
  s.queue(job(3, {.share = "B"}));
  s.queue(job(1, {.share = "A", .priority = 1}));
  s.queue(job(2, {.share = "A"}));
  PendingJob blocked = job(4, {.share = "A"});
  blocked.waiting_for = {1};
  s.queue(blocked);
  s.schedule(at_s(0));  // no nodes: nothing starts
  // A: usage 0. B: usage 100. All of A's ready jobs come first.
  EXPECT_EQ(s.queue_position(1), 1);
  EXPECT_EQ(s.queue_position(2), 2);
  EXPECT_EQ(s.queue_position(3), 3);
  EXPECT_EQ(s.queue_position(4), std::nullopt);
  EXPECT_EQ(s.queue_position(99), std::nullopt);
}

TEST(Reasons, PriorityNamesTheShareAheadWithItsFactor) {
  Scheduler s{Config{.max_jobs_examined = 1}};
  s.upsert_node(node("n1", 2));
  s.import_usage({"B", 10000, at_s(0)});
  s.queue(job(1, {.share = "A"}));
  s.queue(job(2, {.share = "A"}));
  s.queue(job(3, {.share = "B"}));
  // A: usage 0, B: usage 10000. The pass looks at one job only: A's first starts (A is charged an
  // hour), and the other two get their reasons on demand.
  const PassResult pass = s.schedule(at_s(0));
  EXPECT_THAT(started(pass), ElementsAre(1));
  EXPECT_EQ(pass.examined, 1);
  EXPECT_TRUE(pass.hit_limit);
  const double fa = fair_share_factor(kHour, kHour + 10000, 1, 2);
  const double fb = fair_share_factor(10000, kHour + 10000, 1, 2);
  char expected[128];
  std::snprintf(expected, sizeof expected, "behind share A whose fair-share factor %.2f is higher than this share's %.2f",
                fa, fb);
  const auto why = s.why_pending(3);
  ASSERT_TRUE(why);
  EXPECT_EQ(why->code, ReasonCode::priority);
  EXPECT_EQ(why->message, expected);
  EXPECT_EQ(s.why_pending(2)->code, ReasonCode::priority);
  EXPECT_EQ(s.why_pending(1), std::nullopt);  // running, not pending
}

TEST(Reasons, ResourcesSaysHowManyNodesFitNow) {
  Scheduler s{Config{}};
  s.upsert_node(node("n1", 32));
  s.upsert_node(node("n2", 32));
  s.queue(job(1, {.nodes = 4, .cores_per_node = 32}));
  const PassResult pass = s.schedule(at_s(0));
  EXPECT_TRUE(pass.starts.empty());
  EXPECT_FALSE(pass.hit_limit);
  EXPECT_FALSE(pass.reservation.has_value());  // it could not fit even on an idle cluster
  EXPECT_EQ(s.why_pending(1)->code, ReasonCode::nodes_unavailable);
  EXPECT_THAT(s.why_pending(1)->message, HasSubstr("needs 4 nodes that can hold its ranks and only 2 in service could"));

  // Four nodes in service, all busy (job 1 took them): it waits for cores, not for an admin.
  s.upsert_node(node("n3", 32));
  s.upsert_node(node("n4", 32));
  s.queue(job(2, {.nodes = 2, .cores_per_node = 32}));
  s.queue(job(3, {.nodes = 4, .cores_per_node = 32}));
  s.schedule(at_s(1));
  EXPECT_EQ(s.why_pending(3)->code, ReasonCode::resources);
  EXPECT_EQ(s.why_pending(3)->message, "needs 4 nodes with 32 free cores, 0 fit now");
}

// As Slurm's ReqNodeNotAvail: three nodes wanted, one drained and one failed its check, so only two
// are in service; no amount of waiting for cores starts it.
TEST(Reasons, AJobWiderThanTheNodesInServiceWaitsForNodesNotForCores) {
  Scheduler s{Config{}};
  for (const char* name : {"n1", "n2", "n3", "n4"}) s.upsert_node(node(name, 8));
  NodeInfo drained = node("n3", 8);
  drained.accepts_work = false;
  s.upsert_node(drained);
  NodeInfo unhealthy = node("n4", 8);
  unhealthy.accepts_work = false;
  s.upsert_node(unhealthy);
  s.queue(job(1, {.nodes = 3, .cores_per_node = 8}));
  EXPECT_TRUE(s.schedule(at_s(0)).starts.empty());
  const auto why = s.why_pending(1);
  EXPECT_EQ(why->code, ReasonCode::nodes_unavailable);
  EXPECT_THAT(why->message, HasSubstr("only 2 in service could, even idle"));
  EXPECT_EQ(to_string(why->code), "nodes_unavailable");
  s.upsert_node(node("n3", 8));  // undrained
  EXPECT_EQ(s.schedule(at_s(1)).starts.size(), 1u);
}

TEST(Reasons, DependencyAndBackoffHoldJobsOutOfTheQueueUntilReleased) {
  Scheduler s{Config{}};
  s.upsert_node(node("n1", 4));
  PendingJob waiting = job(1, {});
  waiting.waiting_for = {7};
  PendingJob retry = job(2, {});
  retry.not_before = at_s(100);
  s.queue(waiting);
  s.queue(retry);
  EXPECT_TRUE(s.schedule(at_s(50)).starts.empty());
  EXPECT_EQ(s.why_pending(1)->code, ReasonCode::dependency);
  EXPECT_EQ(s.why_pending(1)->message, "waiting for job 7 to succeed");
  EXPECT_EQ(s.why_pending(2)->code, ReasonCode::backoff);
  EXPECT_EQ(s.why_pending(2)->message, "retry backoff: not before " + format_time(at_s(100)));

  EXPECT_THAT(started(s.schedule(at_s(100))), ElementsAre(2));
  waiting.waiting_for.clear();
  s.queue(waiting);
  EXPECT_THAT(started(s.schedule(at_s(101))), ElementsAre(1));
}

TEST(Limits, ShareCapStopsAShareAtItsRunningCores) {
  Scheduler s{Config{}};
  s.upsert_node(node("n1", 8));
  s.set_share("A", {.weight = 1, .max_running_cores = 4});
  s.import_usage({"B", 1e6, at_s(0)});
  s.queue(job(1, {.share = "A", .cores_per_node = 4}));
  s.queue(job(2, {.share = "A", .cores_per_node = 4}));
  s.queue(job(3, {.share = "B", .cores_per_node = 4}));
  // A: usage 0, cap 4 cores. B: usage 1e6. A's second job would exceed the cap; B's job starts.
  EXPECT_THAT(started(s.schedule(at_s(0))), ElementsAre(1, 3));
  EXPECT_EQ(s.why_pending(2)->code, ReasonCode::share_cap);
  EXPECT_EQ(s.why_pending(2)->message, "share cap of 4 running cores reached (4 running)");
}

TEST(Limits, ComputeReservationKeepsCoresForSharesWithNoRunningWork) {
  Scheduler s{Config{.compute_reservation = 0.5}};
  s.upsert_node(node("n1", 8));
  s.start_running({.id = 9, .share = "A", .nodes = {{"n1", 2}}, .started_at = at_s(0), .timeout_s = 60}, at_s(0));
  s.import_usage({"B", 1e6, at_s(0)});
  s.queue(job(1, {.share = "A", .cores_per_node = 4}));
  s.queue(job(2, {.share = "B", .cores_per_node = 4}));
  // A: 2 cores running, low usage. B: nothing running, usage 1e6. Half the 8 cores are kept for
  // idle shares: A may not take 4 of the 6 free, B may.
  EXPECT_THAT(started(s.schedule(at_s(0))), ElementsAre(2));
  EXPECT_EQ(s.why_pending(1)->code, ReasonCode::compute_reservation);
}

TEST(Placement, BestFitFillsPartlyUsedNodesAndKeepsWholeNodesFree) {
  Scheduler s{Config{}};
  s.upsert_node(node("n1", 8));
  s.upsert_node(node("n2", 8));
  s.start_running({.id = 9, .nodes = {{"n2", 6}}, .started_at = at_s(0), .timeout_s = 60}, at_s(0));
  s.queue(job(1, {.cores_per_node = 2}));
  s.queue(job(2, {.cores_per_node = std::nullopt}));
  const PassResult pass = s.schedule(at_s(0));
  ASSERT_EQ(pass.starts.size(), 2u);
  EXPECT_THAT(pass.starts[0].nodes, ElementsAre(NodeCores{"n2", 2}));
  EXPECT_THAT(pass.starts[1].nodes, ElementsAre(NodeCores{"n1", 8}));  // whole node
}

TEST(Placement, MultiNodeJobsStayWithinOnePlacementGroupWhenTheyCan) {
  Scheduler s{Config{}};
  for (const char* name : {"a1", "a2"}) s.upsert_node(node(name, 4, "a"));
  for (const char* name : {"b1", "b2", "b3"}) s.upsert_node(node(name, 4, "b"));
  s.queue(job(1, {.nodes = 3, .cores_per_node = 4}));
  s.queue(job(2, {.nodes = 2, .cores_per_node = 4}));
  const PassResult pass = s.schedule(at_s(0));
  ASSERT_EQ(pass.starts.size(), 2u);
  EXPECT_THAT(node_names(pass.starts[0]), ElementsAre("b1", "b2", "b3"));
  EXPECT_THAT(node_names(pass.starts[1]), ElementsAre("a1", "a2"));

  Scheduler wide{Config{}};
  for (const char* name : {"a1", "a2"}) wide.upsert_node(node(name, 4, "a"));
  for (const char* name : {"b1", "b2", "b3"}) wide.upsert_node(node(name, 4, "b"));
  wide.queue(job(1, {.nodes = 4, .cores_per_node = 4}));
  // No rack holds four: the job spreads rather than waits.
  EXPECT_THAT(started(wide.schedule(at_s(0))), ElementsAre(1));
}

TEST(Placement, NodesThatDoNotAcceptWorkOrFailedTheJobAreAvoided) {
  Scheduler s{Config{}};
  NodeInfo sick = node("n1", 4);
  sick.accepts_work = false;
  s.upsert_node(sick);
  s.upsert_node(node("n2", 4));
  s.upsert_node(node("n3", 4));
  PendingJob one = job(1, {});
  one.excluded_nodes = {"n2"};
  PendingJob two = job(2, {.nodes = 2, .priority = -1});
  two.excluded_nodes = {"n3"};
  s.queue(one);
  s.queue(two);
  const PassResult pass = s.schedule(at_s(0));
  ASSERT_EQ(pass.starts.size(), 2u);
  EXPECT_THAT(node_names(pass.starts[0]), ElementsAre("n3"));
  // Two nodes accept work: the one it avoids as well, since it is needed; never the sick one.
  EXPECT_THAT(node_names(pass.starts[1]), ::testing::UnorderedElementsAre("n2", "n3"));
}

TEST(Placement, AnAvoidedNodeIsLeftOutEvenWhenItFitsBest) {
  Scheduler s{Config{}};
  s.upsert_node(node("n1", 4));
  s.upsert_node(node("n2", 8));
  s.start_running({.id = 9, .share = "X", .nodes = {{"n1", 2}}, .started_at = at_s(0)}, at_s(0));
  PendingJob one = job(1, {.cores_per_node = 2});
  one.excluded_nodes = {"n1"};  // the tightest fit
  s.queue(one);
  const PassResult pass = s.schedule(at_s(0));
  ASSERT_EQ(pass.starts.size(), 1u);
  EXPECT_THAT(node_names(pass.starts[0]), ElementsAre("n2"));
}

TEST(Placement, AJobThatFitsOnlyWithAvoidedNodesTakesAsFewAsItNeedsRatherThanWait) {
  Scheduler s{Config{}};
  for (const char* name : {"n1", "n2", "n3", "n4"}) s.upsert_node(node(name, 4));
  s.start_running({.id = 9, .share = "X", .nodes = {{"n4", 4}}, .started_at = at_s(0)}, at_s(0));
  // It failed on n1 and n2; of the three free nodes only n3 is not one of them.
  PendingJob two = job(1, {.nodes = 2, .cores_per_node = 4});
  two.excluded_nodes = {"n1", "n2"};
  s.queue(two);
  const PassResult pass = s.schedule(at_s(0));
  ASSERT_EQ(pass.starts.size(), 1u);
  const auto nodes = node_names(pass.starts[0]);
  EXPECT_THAT(nodes, ::testing::Contains("n3"));
  EXPECT_THAT(nodes, ::testing::Not(::testing::Contains("n4")));
}

TEST(Placement, AJobThatAvoidsEveryNodeStillRuns) {
  // Failures met on every node of a small cluster must not leave a job pending for ever.
  Scheduler s{Config{}};
  s.upsert_node(node("n1", 4));
  s.upsert_node(node("n2", 4));
  PendingJob one = job(1, {.nodes = 2, .cores_per_node = 4});
  one.excluded_nodes = {"n1", "n2"};
  s.queue(one);
  EXPECT_THAT(started(s.schedule(at_s(0))), ElementsAre(1));
}

NodeInfo node_with_memory(const std::string& name, int cores, std::int64_t memory_mb) {
  NodeInfo n = node(name, cores);
  n.memory_mb = memory_mb;
  return n;
}

PendingJob job_with_memory(JobId id, std::int64_t memory_mb, const JobArgs& args) {
  PendingJob p = job(id, args);
  p.memory_mb = memory_mb;
  return p;
}

TEST(Placement, AJobGoesWhereItsMemoryIsFreeAndWaitsWhenNoNodeHasItNow) {
  Scheduler s{Config{}};
  s.upsert_node(node_with_memory("small", 8, 16384));
  s.upsert_node(node_with_memory("big", 8, 65536));
  // Both have the cores; best fit alone would take "small", the lower index.
  s.queue(job_with_memory(1, 32768, {}));
  PassResult pass = s.schedule(at_s(0));
  ASSERT_EQ(pass.starts.size(), 1u);
  EXPECT_THAT(node_names(pass.starts[0]), ElementsAre("big"));

  // 32 GiB of "big" are held: 40 GiB fit nowhere now, though cores are free on both.
  s.queue(job_with_memory(2, 40960, {}));
  pass = s.schedule(at_s(1));
  EXPECT_TRUE(pass.starts.empty());
  EXPECT_EQ(s.why_pending(2)->code, ReasonCode::resources);
  EXPECT_THAT(s.why_pending(2)->message, HasSubstr("needs 1 node with 1 free cores and 40960 MiB free memory, 0 fit now"));

  // A job asking for no memory still shares the node.
  s.queue(job(3, {}));
  EXPECT_THAT(started(s.schedule(at_s(2))), ElementsAre(3));

  s.finish(1, at_s(10));
  pass = s.schedule(at_s(10));
  ASSERT_EQ(pass.starts.size(), 1u);
  EXPECT_EQ(pass.starts[0].job, 2);
  EXPECT_THAT(node_names(pass.starts[0]), ElementsAre("big"));
}

TEST(Placement, WholeNodeAndMultiNodeJobsNeedTheirMemoryOnEveryNode) {
  Scheduler s{Config{}};
  s.upsert_node(node_with_memory("a", 4, 8192));
  s.upsert_node(node_with_memory("b", 4, 32768));
  s.upsert_node(node_with_memory("c", 4, 32768));
  s.queue(job_with_memory(1, 16384, {.nodes = 2, .cores_per_node = std::nullopt}));
  PassResult pass = s.schedule(at_s(0));
  ASSERT_EQ(pass.starts.size(), 1u);
  EXPECT_THAT(node_names(pass.starts[0]), ::testing::UnorderedElementsAre("b", "c"));
  // A node that reports no memory is not refused for it (as the submit check counts it).
  s.upsert_node(node_with_memory("unknown", 4, 0));
  s.queue(job_with_memory(2, 16384, {}));
  pass = s.schedule(at_s(1));
  ASSERT_EQ(pass.starts.size(), 1u);
  EXPECT_THAT(node_names(pass.starts[0]), ElementsAre("unknown"));
}

TEST(Placement, RunningWorkRebuiltAfterARestartHoldsItsMemory) {
  Scheduler s{Config{}};
  s.upsert_node(node_with_memory("n1", 8, 16384));
  s.start_running({.id = 9, .nodes = {{"n1", 1}}, .started_at = at_s(0), .memory_mb = 12288}, at_s(0));
  s.queue(job_with_memory(1, 8192, {}));
  EXPECT_TRUE(s.schedule(at_s(0)).starts.empty());
  s.finish(9, at_s(5));
  EXPECT_THAT(started(s.schedule(at_s(5))), ElementsAre(1));
}

TEST(Backfill, TheReservationHoldsMemoryAsItHoldsCores) {
  Scheduler s{Config{}};
  s.upsert_node(node_with_memory("n1", 8, 10240));
  s.start_running({.id = 9, .share = "X", .nodes = {{"n1", 1}}, .started_at = at_s(0), .timeout_s = 100, .memory_mb = 4096},
                  at_s(0));
  s.queue(job_with_memory(1, 8192, {.priority = 9}));
  s.queue(job_with_memory(2, 4096, {.timeout_s = std::nullopt, .priority = 5}));
  s.queue(job_with_memory(3, 4096, {.timeout_s = 50, .priority = 4}));
  s.queue(job_with_memory(4, 2048, {.timeout_s = std::nullopt, .priority = 3}));
  // Job 1 needs 8 GiB of n1's 10, 6 are free until job 9 ends at 100 s: it is reserved 8 GiB from
  // then. Job 2 would still hold 4 GiB then, leaving 6: it waits. Job 3 ends before 100 s; job 4
  // keeps 2 GiB past it, which the reservation leaves.
  const PassResult pass = s.schedule(at_s(0));
  EXPECT_THAT(started(pass), ElementsAre(3, 4));
  ASSERT_TRUE(pass.reservation);
  EXPECT_EQ(pass.reservation->job, 1);
  EXPECT_EQ(pass.reservation->at, at_s(100));
  EXPECT_EQ(s.why_pending(2)->code, ReasonCode::reservation);
}

TEST(Backfill, OnlyJobsThatCannotDelayTheReservationStart) {
  Scheduler s{Config{}};
  s.upsert_node(node("n1", 4));
  s.upsert_node(node("n2", 8));
  s.start_running({.id = 9, .share = "X", .nodes = {{"n1", 4}}, .started_at = at_s(0), .timeout_s = 100}, at_s(0));
  s.queue(job(1, {.nodes = 2, .cores_per_node = 4, .timeout_s = 1000, .priority = 9}));
  s.queue(job(2, {.cores_per_node = 8, .timeout_s = 500, .priority = 5}));
  s.queue(job(5, {.cores_per_node = 8, .timeout_s = std::nullopt, .priority = 5}));
  s.queue(job(3, {.cores_per_node = 4, .timeout_s = std::nullopt, .priority = 4}));
  s.queue(job(4, {.cores_per_node = 4, .timeout_s = 50, .priority = 3}));
  // One share. Job 1 (2 nodes x 4 cores) fits on n2 only until job 9 ends at 100 s: it is
  // reserved n1 and half of n2 from 100 s. Jobs 2 and 5 would hold all of n2 past 100 s; job 3
  // has no timeout but fits on the half of n2 the reservation leaves; job 4 ends at 60 s.
  const PassResult pass = s.schedule(at_s(10));
  EXPECT_THAT(started(pass), ElementsAre(3, 4));
  ASSERT_TRUE(pass.reservation);
  EXPECT_EQ(pass.reservation->job, 1);
  EXPECT_EQ(pass.reservation->at, at_s(100));
  EXPECT_THAT(pass.reservation->nodes, ElementsAre(NodeCores{"n1", 4}, NodeCores{"n2", 4}));
  EXPECT_EQ(s.why_pending(2)->code, ReasonCode::reservation);
  EXPECT_EQ(s.why_pending(2)->message, "held for reserved job 1 until " + format_time(at_s(100)));
  EXPECT_EQ(s.why_pending(5)->code, ReasonCode::reservation);
  EXPECT_EQ(s.why_pending(1)->message,
            "needs 2 nodes with 4 free cores, 1 fit now; reserved to start by " + format_time(at_s(100)));
}

TEST(Backfill, AJobThatCanNeverFitDoesNotTakeTheReservation) {
  Scheduler s{Config{}};
  s.upsert_node(node("n1", 4));
  s.upsert_node(node("n2", 4));
  s.start_running({.id = 9, .nodes = {{"n1", 4}}, .started_at = at_s(0), .timeout_s = 100}, at_s(0));
  s.queue(job(1, {.nodes = 3, .cores_per_node = 4, .priority = 9}));
  s.queue(job(2, {.nodes = 2, .cores_per_node = 4, .priority = 5}));
  s.queue(job(3, {.cores_per_node = 4, .timeout_s = 500}));
  // One share. Job 1 wants 3 of the 2 nodes; job 2 fits when job 9 ends at 100 s and is the one
  // reserved, so job 3 (past 100 s, on a node job 2 needs) waits.
  const PassResult pass = s.schedule(at_s(0));
  EXPECT_TRUE(pass.starts.empty());
  ASSERT_TRUE(pass.reservation);
  EXPECT_EQ(pass.reservation->job, 2);
  EXPECT_EQ(s.why_pending(3)->code, ReasonCode::reservation);
}

TEST(Usage, ExpectedUsageIsChargedAtStartAndTruedUpAtTheEnd) {
  Scheduler s{Config{}};
  s.upsert_node(node("n1", 4));
  s.queue(job(1, {.cores_per_node = 4, .timeout_s = 600}));
  s.schedule(at_s(0));
  EXPECT_DOUBLE_EQ(row(s.shares(at_s(0)), "default").expected_usage, 4 * 600);
  EXPECT_EQ(row(s.shares(at_s(0)), "default").running_cores, 4);
  s.finish(1, at_s(10));
  const ShareRow after = row(s.shares(at_s(10)), "default");
  EXPECT_NEAR(after.usage, 40, 0.01);
  EXPECT_EQ(after.expected_usage, 0);
  EXPECT_EQ(after.running_cores, 0);
}

TEST(Usage, PersistedUsageSurvivesARestartAndKeepsDecaying) {
  const Config config{.usage_half_life = std::chrono::seconds(1000)};
  Scheduler before{config};
  before.upsert_node(node("n1", 2));
  before.queue(job(1, {.share = "A", .cores_per_node = 2}));
  before.schedule(at_s(0));
  before.finish(1, at_s(500));
  const std::vector<UsageRecord> saved = before.export_usage(at_s(500));

  Scheduler after{config};
  for (const UsageRecord& r : saved) after.import_usage(r);
  EXPECT_NEAR(row(after.shares(at_s(1500)), "A").usage, row(before.shares(at_s(1500)), "A").usage, 1e-9);
  EXPECT_NEAR(row(after.shares(at_s(1500)), "A").usage, row(after.shares(at_s(500)), "A").usage / 2, 1e-9);
}

TEST(Events, ARestartRebuiltFromEventsDecidesLikeTheSchedulerItReplaces) {
  const auto cluster = [](Scheduler& s) {
    for (const char* name : {"n1", "n2", "n3"}) s.upsert_node(node(name, 4));
  };
  Scheduler before{Config{}};
  cluster(before);
  for (JobId id = 1; id <= 6; ++id) before.queue(job(id, {.share = id % 2 ? "A" : "B", .cores_per_node = 2}));
  const PassResult first = before.schedule(at_s(0));
  ASSERT_EQ(first.starts.size(), 6u);
  before.finish(first.starts[0].job, at_s(100));
  for (JobId id = 7; id <= 10; ++id) before.queue(job(id, {.share = id % 2 ? "A" : "B", .cores_per_node = 2}));

  // What the daemon persisted and reloads: usage, the work still running, the pending jobs.
  Scheduler after{Config{}};
  cluster(after);
  for (const UsageRecord& r : before.export_usage(at_s(100))) after.import_usage(r);
  for (std::size_t i = 1; i < first.starts.size(); ++i) {
    const JobId id = first.starts[i].job;
    after.start_running({.id = id, .share = id % 2 ? "A" : "B", .nodes = first.starts[i].nodes, .started_at = at_s(0),
                         .timeout_s = 3600},
                        at_s(100));
  }
  for (JobId id = 7; id <= 10; ++id) after.queue(job(id, {.share = id % 2 ? "A" : "B", .cores_per_node = 2}));

  const PassResult expected = before.schedule(at_s(100));
  const PassResult rebuilt = after.schedule(at_s(100));
  ASSERT_EQ(expected.starts.size(), 1u);
  EXPECT_EQ(started(rebuilt), started(expected));
  EXPECT_THAT(rebuilt.starts[0].nodes, ElementsAre(expected.starts[0].nodes[0]));
  for (JobId id = 7; id <= 10; ++id) EXPECT_EQ(after.queue_position(id), before.queue_position(id)) << id;
}

TEST(Events, RemovedJobsAndNodesAreNoLongerConsidered) {
  Scheduler s{Config{}};
  s.upsert_node(node("n1", 4));
  s.upsert_node(node("n2", 4));
  s.queue(job(1, {.cores_per_node = 4}));
  s.queue(job(2, {.cores_per_node = 4}));
  s.queue(job(3, {.cores_per_node = 4}));
  s.remove(1);
  s.remove_node("n1");
  EXPECT_FALSE(s.is_pending(1));
  const PassResult pass = s.schedule(at_s(0));
  ASSERT_EQ(pass.starts.size(), 1u);
  EXPECT_EQ(pass.starts[0].job, 2);
  EXPECT_THAT(node_names(pass.starts[0]), ElementsAre("n2"));
  EXPECT_TRUE(s.is_running(2));
  EXPECT_EQ(s.why_pending(3)->message, "needs 1 node with 4 free cores, 0 fit now");
  s.upsert_node(node("n1", 4));
  EXPECT_THAT(started(s.schedule(at_s(1))), ElementsAre(3));
}

TEST(Config, BadValuesAreRejectedNamingTheField) {
  const auto field = [](auto&& f) {
    try {
      f();
    } catch (const InvalidInput& e) {
      return e.field();
    }
    return std::string("<accepted>");
  };
  EXPECT_EQ(field([] { Scheduler s{Config{.compute_reservation = 1.0}}; }), "compute_reservation");
  EXPECT_EQ(field([] { Scheduler s{Config{.usage_half_life = Millis(0)}}; }), "usage_half_life");
  Scheduler s{Config{}};
  EXPECT_EQ(field([&] { s.set_share("A", {.weight = 0}); }), "weight");
  EXPECT_EQ(field([&] { s.set_share("A", {.weight = 1, .max_running_cores = -1}); }), "max_running_cores");
}

}  // namespace
}  // namespace trainyard::scheduler
