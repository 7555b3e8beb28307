// The preemption decision (scheduler/preemption.h) without I/O or real time: who is chosen, who is
// never chosen, and a day of two shares competing for a cluster in which nothing thrashes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "proto/errors.h"
#include "scheduler/fair_share.h"
#include "scheduler/preemption.h"

namespace trainyard::scheduler {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TimePoint at_min(int m) { return from_unix_ms(1'800'000'000'000) + minutes(m); }

PreemptionConfig enabled() {
  PreemptionConfig config;
  config.enabled = true;
  config.min_run_time = minutes(10);
  return config;
}

// n nodes of 32 cores, the first `used` of them fully held.
std::vector<NodeRoom> nodes(int n, int used) {
  std::vector<NodeRoom> out;
  for (int i = 0; i < n; ++i) out.push_back({"n" + std::to_string(i), 32, i < used ? 0 : 32, true});
  return out;
}

PreemptionCandidate gang(JobId job, const std::string& share, std::vector<int> on, std::int64_t steps_lost,
                         int started_min = 0, int priority = 0) {
  PreemptionCandidate c{job, share, priority, {}, at_min(started_min), steps_lost};
  for (int n : on) c.nodes.push_back({"n" + std::to_string(n), 32});
  return c;
}

const std::vector<ShareStanding> kStandings = {{"team-a", 1.9}, {"team-b", 0.2}};
const PreemptionRequest kUrgent{100, "team-b", 0, 2, std::nullopt};

TEST(Preemption, OffByDefault) {
  EXPECT_FALSE(PreemptionConfig{}.enabled);
  EXPECT_FALSE(plan_preemption(kUrgent, {gang(1, "team-a", {0, 1}, 0)}, nodes(2, 2), kStandings, PreemptionConfig{},
                               at_min(60)));
}

TEST(Preemption, TakesTheWholeGangsThatLoseFewestStepsAndNoMore) {
  const std::vector<PreemptionCandidate> running = {gang(1, "team-a", {0}, 40), gang(2, "team-a", {1, 2}, 5),
                                                    gang(3, "team-a", {3}, 7)};
  const auto plan = plan_preemption(kUrgent, running, nodes(4, 4), kStandings, enabled(), at_min(60));
  ASSERT_TRUE(plan);
  // Job 2 alone frees two nodes; job 3 (the next cheapest) is then not needed and keeps running.
  EXPECT_THAT(plan->victims, ElementsAre(2));
  EXPECT_THAT(plan->reason, HasSubstr("job 100 of share team-b"));
  EXPECT_THAT(plan->reason, HasSubstr("5 steps since its checkpoint"));
}

TEST(Preemption, CountsFreeNodesAndPreemptsOnlyWhatIsMissing) {
  const std::vector<PreemptionCandidate> running = {gang(1, "team-a", {0}, 3), gang(2, "team-a", {1}, 1)};
  const auto plan = plan_preemption(kUrgent, running, nodes(3, 2), kStandings, enabled(), at_min(60));
  ASSERT_TRUE(plan);
  EXPECT_THAT(plan->victims, ElementsAre(2));
}

TEST(Preemption, NeverForAShareThatIsNotBelowItsFairShareNorFromOneNotFarAboveIt) {
  const std::vector<PreemptionCandidate> running = {gang(1, "team-a", {0, 1}, 0)};
  EXPECT_FALSE(plan_preemption(kUrgent, running, nodes(2, 2), {{"team-a", 1.9}, {"team-b", 1.0}}, enabled(), at_min(60)));
  EXPECT_FALSE(plan_preemption(kUrgent, running, nodes(2, 2), {{"team-a", 1.4}, {"team-b", 0.2}}, enabled(), at_min(60)));
}

TEST(Preemption, NeverBeforeTheMinimumRunTimeNorOfAnExemptShareNorWithinAShare) {
  const auto now = at_min(60);
  EXPECT_FALSE(plan_preemption(kUrgent, {gang(1, "team-a", {0, 1}, 0, 55)}, nodes(2, 2), kStandings, enabled(), now))
      << "preempted 5 minutes after it started";
  PreemptionConfig exempt = enabled();
  exempt.exempt_shares = {"team-a"};
  EXPECT_FALSE(plan_preemption(kUrgent, {gang(1, "team-a", {0, 1}, 0)}, nodes(2, 2), kStandings, exempt, now));
  EXPECT_FALSE(plan_preemption(kUrgent, {gang(1, "team-b", {0, 1}, 0)}, nodes(2, 2), {{"team-b", 0.2}}, enabled(), now));
}

TEST(Preemption, NeverForALowerPriorityJobOfAShareAtItsFairShare) {
  PreemptionConfig lenient = enabled();
  lenient.below_fair_share = 1.0;
  const PreemptionRequest low{100, "team-b", 1, 1, std::nullopt};
  const std::vector<ShareStanding> at_fair = {{"team-a", 1.9}, {"team-b", 1.0}};
  EXPECT_FALSE(plan_preemption(low, {gang(1, "team-a", {0}, 0, 0, 5)}, nodes(1, 1), at_fair, lenient, at_min(60)));
}

TEST(Preemption, NothingWhenEvenEveryCandidateWouldNotMakeRoomOrTheJobFitsAlready) {
  EXPECT_FALSE(plan_preemption(kUrgent, {gang(1, "team-a", {0}, 0)}, nodes(2, 2), kStandings, enabled(), at_min(60)))
      << "one node freed for a two-node job";
  EXPECT_FALSE(plan_preemption(kUrgent, {gang(1, "team-a", {0}, 0)}, nodes(3, 1), kStandings, enabled(), at_min(60)))
      << "it fits without preempting anyone";
}

TEST(Preemption, TheThresholdsAreValidatedNamingTheFlag) {
  PreemptionConfig config = enabled();
  config.below_fair_share = 1.5;
  try {
    validate(config);
    FAIL() << "accepted a waiting share above its fair share";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.field(), "preempt-below-fair-share-pct");
  }
  config = enabled();
  config.above_fair_share = 0.5;
  EXPECT_THROW(validate(config), InvalidInput);
  EXPECT_NO_THROW(validate(enabled()));
}

// A day, minute by minute, of two equal shares on 8 whole-node slots: team-a fills the cluster
// with 16 2-hour jobs, team-b arrives an hour later with 8. Jobs checkpoint every 10 minutes and
// lose what they did since when preempted; usage decays with the daemon's default half-life (a
// week; with a half-life of hours, the shares' standings swing within the day and nodes may then
// rightly go back, hours later, after the minimum run time). Preemption must
// start team-b at once and let it catch up, without thrashing: no job is preempted before its
// minimum run time nor more than twice, nodes only ever go from the over-served share to the
// under-served one (the shares never trade back), and the work lost stays small.
TEST(Preemption, ADayOfTwoSharesDoesNotThrash) {
  struct SimJob {
    JobId id;
    std::string share;
    int done_min = 0;        // work kept (checkpointed or not)
    int checkpoint_min = 0;  // work saved by the newest checkpoint
    std::optional<int> node;
    int started_min = 0;
    int preempted = 0;
    bool finished = false;
  };
  constexpr int kNodes = 8, kWork = 120, kCheckpointEvery = 10;
  const Millis half_life = hours(24 * 7);
  std::vector<SimJob> jobs;
  for (int i = 0; i < 16; ++i) jobs.push_back({i + 1, i < 8 ? "team-a" : "team-b"});
  // team-a's 8 jobs from minute 0 and 8 more at minute 0 as well; team-b's 8 at minute 60.
  for (int i = 16; i < 24; ++i) jobs.push_back({i + 1, "team-a"});
  const auto arrives = [](const SimJob& j) { return j.share == "team-b" ? 60 : 0; };
  std::map<std::string, double> usage{{"team-a", 0}, {"team-b", 0}};
  std::vector<std::optional<JobId>> on_node(kNodes);
  std::vector<int> preempted_at;  // minutes
  int team_b_first_start = -1;
  int lost_min = 0;  // node-minutes of work lost to preemption

  const PreemptionConfig config = enabled();
  for (int minute = 0; minute < 24 * 60; ++minute) {
    // Charge the minute's usage, then finish what is done.
    std::map<std::string, int> cores;
    for (const SimJob& j : jobs) {
      if (j.node) cores[j.share] += 32;
    }
    for (auto& [share, u] : usage) u = decayed_usage(u, cores[share], minutes(1), half_life);
    for (SimJob& j : jobs) {
      if (!j.node) continue;
      ++j.done_min;
      if (j.done_min % kCheckpointEvery == 0) j.checkpoint_min = j.done_min;
      if (j.done_min >= kWork) {
        j.finished = true;
        on_node[*j.node].reset();
        j.node.reset();
      }
    }
    // Standings of the shares with work.
    std::map<std::string, bool> active;
    for (const SimJob& j : jobs) {
      if (!j.finished && minute >= arrives(j)) active[j.share] = true;
    }
    const double total = usage["team-a"] + usage["team-b"];
    std::vector<ShareStanding> standings;
    for (const auto& [share, is_active] : active) {
      standings.push_back({share, total > 0 ? (usage[share] / total) / (1.0 / static_cast<double>(active.size())) : 0});
    }
    const auto standing = [&](const std::string& share) {
      for (const auto& s : standings) {
        if (s.share == share) return s.standing;
      }
      return 1.0;
    };
    // Start waiting jobs on free nodes, the lower-standing share first; preempt for the first that
    // does not fit.
    std::vector<SimJob*> waiting;
    for (SimJob& j : jobs) {
      if (!j.finished && !j.node && minute >= arrives(j)) waiting.push_back(&j);
    }
    std::stable_sort(waiting.begin(), waiting.end(),
                     [&](const SimJob* a, const SimJob* b) { return standing(a->share) < standing(b->share); });
    for (SimJob* j : waiting) {
      auto free = std::find(on_node.begin(), on_node.end(), std::nullopt);
      if (free == on_node.end()) {
        std::vector<PreemptionCandidate> running;
        std::vector<NodeRoom> room;
        for (int n = 0; n < kNodes; ++n) room.push_back({"n" + std::to_string(n), 32, on_node[n] ? 0 : 32, true});
        for (const SimJob& r : jobs) {
          if (r.node) {
            running.push_back({r.id, r.share, 0, {{"n" + std::to_string(*r.node), 32}}, at_min(r.started_min),
                               r.done_min - r.checkpoint_min});
          }
        }
        const auto plan = plan_preemption({j->id, j->share, 0, 1, std::nullopt}, running, room, standings, config,
                                          at_min(minute));
        if (!plan) break;
        for (JobId victim_id : plan->victims) {
          SimJob& victim = jobs[static_cast<std::size_t>(victim_id - 1)];
          EXPECT_GE(minute - victim.started_min, 10) << "job " << victim.id << " preempted before its minimum run time";
          EXPECT_EQ(victim.share, "team-a") << "nodes went back to the share that had them";
          lost_min += victim.done_min - victim.checkpoint_min;
          victim.done_min = victim.checkpoint_min;  // what it did since its checkpoint is lost
          ++victim.preempted;
          on_node[*victim.node].reset();
          victim.node.reset();
          preempted_at.push_back(minute);
        }
        free = std::find(on_node.begin(), on_node.end(), std::nullopt);
        if (free == on_node.end()) break;
      }
      j->node = static_cast<int>(free - on_node.begin());
      j->started_min = minute;
      *free = j->id;
      if (j->share == "team-b" && team_b_first_start < 0) team_b_first_start = minute;
    }
  }

  for (const SimJob& j : jobs) {
    EXPECT_TRUE(j.finished) << "job " << j.id << " never finished";
    EXPECT_LE(j.preempted, 2) << "job " << j.id << " preempted again and again";
  }
  EXPECT_EQ(team_b_first_start, 60) << "the under-served share waited although preemption is on";
  ASSERT_FALSE(preempted_at.empty());
  EXPECT_LE(preempted_at.size(), 16u) << "more preemptions than team-a has jobs";
  // No victim loses more than what it did since its last checkpoint.
  EXPECT_LT(lost_min, static_cast<int>(preempted_at.size()) * kCheckpointEvery) << lost_min << " node-minutes lost";
  // Nothing after team-b's last job started: the shares settle.
  EXPECT_LT(preempted_at.back(), 24 * 60 / 4) << "still preempting at minute " << preempted_at.back();
}

}  // namespace
}  // namespace trainyard::scheduler
