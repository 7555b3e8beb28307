// The scheduler driven over long simulated time by a tiny discrete-event loop: jobs start when a
// pass says so, run for their duration, end, and their shares are charged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "scheduler/scheduler.h"
#include "tests/unit/scheduler/scheduler_fixtures.h"

namespace trainyard::scheduler {
namespace {

using namespace fixtures;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

struct SimJob {
  std::string share = "default";
  int nodes = 1;
  std::optional<int> cores_per_node = 1;
  Millis duration = seconds(60);
  std::optional<std::int64_t> timeout_s;  // the simulated runs never exceed it
};

class Simulation {
 public:
  Simulation(const Config& config, int nodes, int cores) : scheduler_(config), now_(at_s(0)) {
    for (int i = 0; i < nodes; ++i) {
      std::string name = "n";  // not "n" + to_string: g++ 12 warns falsely at -O3 (GCC bug 105329)
      name += std::to_string(i);
      scheduler_.upsert_node(node(name, cores));
    }
  }

  Scheduler& scheduler() { return scheduler_; }
  TimePoint now() const { return now_; }

  JobId submit(const SimJob& spec) {
    const JobId id = next_id_++;
    jobs_[id] = spec;
    ++pending_[spec.share];
    PendingJob p;
    p.id = id;
    p.share = spec.share;
    p.nodes = spec.nodes;
    p.cores_per_node = spec.cores_per_node;
    p.timeout_s = spec.timeout_s;
    p.submitted_at = now_;
    scheduler_.queue(p);
    return id;
  }
  void submit_at(TimePoint at, const SimJob& spec) { arrivals_.emplace(at, spec); }

  // Before every pass `top_up` may submit more; after it `observe` sees the decisions.
  void run_until(TimePoint until, const std::function<void(Simulation&)>& top_up = {},
                 const std::function<void(const PassResult&)>& observe = {}) {
    while (true) {
      if (top_up) top_up(*this);
      const PassResult pass = scheduler_.schedule(now_);
      for (const Start& start : pass.starts) launch(start);
      if (observe) observe(pass);
      TimePoint next = until;
      if (!ends_.empty()) next = std::min(next, ends_.begin()->first);
      if (!arrivals_.empty()) next = std::min(next, arrivals_.begin()->first);
      for (const auto& [share, cores] : running_cores_) core_seconds_[share] += cores * seconds_between(now_, next);
      now_ = next;
      while (!ends_.empty() && ends_.begin()->first <= now_) {
        const JobId id = ends_.begin()->second;
        ends_.erase(ends_.begin());
        scheduler_.finish(id, now_);
        running_cores_[jobs_[id].share] -= cores_of_[id];
      }
      while (!arrivals_.empty() && arrivals_.begin()->first <= now_) {
        submit(arrivals_.begin()->second);
        arrivals_.erase(arrivals_.begin());
      }
      if (now_ >= until) return;
    }
  }

  int pending(const std::string& share) const { return pending_.contains(share) ? pending_.at(share) : 0; }
  double core_seconds(const std::string& share) const {
    return core_seconds_.contains(share) ? core_seconds_.at(share) : 0;
  }
  void reset_core_seconds() { core_seconds_.clear(); }
  std::optional<TimePoint> started_at(JobId id) const {
    if (auto it = started_.find(id); it != started_.end()) return it->second;
    return std::nullopt;
  }
  std::optional<TimePoint> next_end() const {
    return ends_.empty() ? std::nullopt : std::optional(ends_.begin()->first);
  }
  const SimJob& spec(JobId id) const { return jobs_.at(id); }
  // Jobs running now, with when they will end.
  std::vector<std::pair<JobId, TimePoint>> running() const {
    std::vector<std::pair<JobId, TimePoint>> out;
    for (const auto& [end, id] : ends_) out.emplace_back(id, end);
    return out;
  }

 private:
  static double seconds_between(TimePoint a, TimePoint b) { return std::chrono::duration<double>(b - a).count(); }

  void launch(const Start& start) {
    const SimJob& spec = jobs_.at(start.job);
    int cores = 0;
    for (const NodeCores& nc : start.nodes) cores += nc.cores;
    cores_of_[start.job] = cores;
    started_[start.job] = now_;
    ends_.emplace(now_ + spec.duration, start.job);
    running_cores_[spec.share] += cores;
    --pending_[spec.share];
  }

  Scheduler scheduler_;
  TimePoint now_;
  JobId next_id_ = 1;
  std::map<JobId, SimJob> jobs_;
  std::map<JobId, int> cores_of_;
  std::map<JobId, TimePoint> started_;
  std::multimap<TimePoint, JobId> ends_;
  std::multimap<TimePoint, SimJob> arrivals_;
  std::map<std::string, int> pending_;
  std::map<std::string, int> running_cores_;
  std::map<std::string, double> core_seconds_;
};

// Deterministic job lengths between `lo` and `hi` seconds (a linear congruential sequence).
class Durations {
 public:
  Durations(int lo, int hi) : lo_(lo), hi_(hi) {}
  Millis next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return seconds(lo_ + static_cast<int>((state_ >> 33) % static_cast<std::uint64_t>(hi_ - lo_ + 1)));
  }

 private:
  int lo_, hi_;
  std::uint64_t state_ = 42;
};

std::int64_t whole_seconds(Millis d) { return std::chrono::duration_cast<seconds>(d).count(); }

TEST(Simulation, TwoBackloggedSharesWithWeightsTwoToOneGetCoreTimeTwoToOne) {
  Simulation sim(Config{.usage_half_life = hours(1)}, 4, 8);
  sim.scheduler().set_share("A", {.weight = 2});
  sim.scheduler().set_share("B", {.weight = 1});
  Durations durations(60, 300);
  const auto keep_backlogged = [&](Simulation& s) {
    for (const char* share : {"A", "B"}) {
      while (s.pending(share) < 20) {
        const Millis d = durations.next();
        s.submit({.share = share, .cores_per_node = 2, .duration = d, .timeout_s = 2 * whole_seconds(d)});
      }
    }
  };
  sim.run_until(at_s(3600), keep_backlogged);
  sim.reset_core_seconds();
  sim.run_until(at_s(12 * 3600), keep_backlogged);
  // A: weight 2, B: weight 1, both always backlogged, timeouts overestimate runs twofold.
  const double ratio = sim.core_seconds("A") / sim.core_seconds("B");
  EXPECT_NEAR(ratio, 2.0, 0.1) << "A " << sim.core_seconds("A") << " B " << sim.core_seconds("B");
}

TEST(Simulation, AShareThatBecomesActiveGetsTheNextFreeSlotAheadOfALongBacklog) {
  Simulation sim(Config{.usage_half_life = hours(1)}, 2, 4);
  for (int i = 0; i < 200; ++i) sim.submit({.share = "A", .duration = seconds(600), .timeout_s = 900});
  sim.run_until(at_s(2 * 3600 + 30));
  ASSERT_GT(sim.pending("A"), 0);
  // A: two hours of usage, a long backlog. B: no usage, one new job: it takes the next free slot.
  const JobId b = sim.submit({.share = "B", .duration = seconds(60), .timeout_s = 120});
  const TimePoint next_free = *sim.next_end();
  sim.run_until(next_free + Millis(1));
  EXPECT_EQ(sim.started_at(b), next_free);
}

void expect_wide_job_not_starved(std::optional<std::int64_t> small_timeout) {
  Simulation sim(Config{.usage_half_life = hours(1)}, 4, 4);
  Durations durations(100, 400);
  const auto keep_streaming = [&](Simulation& s) {
    while (s.pending("A") < 30) {
      s.submit({.share = "A", .cores_per_node = 1, .duration = durations.next(), .timeout_s = small_timeout});
    }
  };
  sim.run_until(at_s(3600), keep_streaming);
  // A: an hour of usage and an endless stream of 1-core jobs. B: no usage, one 4-node job. It may
  // wait for the work running now, but no longer.
  TimePoint bound = sim.now();
  for (const auto& [id, end] : sim.running()) {
    const SimJob& spec = sim.spec(id);
    bound = std::max(bound, spec.timeout_s ? *sim.started_at(id) + seconds(*spec.timeout_s) : end);
  }
  const JobId wide = sim.submit({.share = "B", .nodes = 4, .cores_per_node = 4, .duration = seconds(300),
                                 .timeout_s = 600});
  sim.run_until(at_s(3 * 3600), keep_streaming);
  ASSERT_TRUE(sim.started_at(wide).has_value());
  EXPECT_LE(*sim.started_at(wide), bound);
}

TEST(Simulation, AFourNodeJobIsNotStarvedByAStreamOfOneNodeJobsWithTimeouts) {
  expect_wide_job_not_starved(450);
}

TEST(Simulation, AFourNodeJobIsNotStarvedByAStreamOfOneNodeJobsWithoutTimeouts) {
  expect_wide_job_not_starved(std::nullopt);
}

TEST(Simulation, BackfillStartsSmallJobsThatEndBeforeTheReservationAndNeverDelaysIt) {
  Simulation sim(Config{.usage_half_life = hours(1)}, 2, 4);
  sim.scheduler().import_usage({"C", 1e7, at_s(0)});
  sim.submit({.share = "A", .cores_per_node = 4, .duration = seconds(1000), .timeout_s = 1000});
  sim.submit({.share = "A", .cores_per_node = 4, .duration = seconds(600), .timeout_s = 600});
  // A: two jobs holding both nodes, until 600 s and 1000 s. B: no usage, a 2-node job from 10 s.
  // C: heavy usage, a stream of 2-core jobs of various timeouts (durations equal to them).
  const std::int64_t timeouts[] = {100, 300, 500, 0};
  std::vector<JobId> small;
  const auto keep_streaming = [&](Simulation& s) {
    while (s.pending("C") < 8) {
      const std::int64_t t = timeouts[small.size() % 4];
      small.push_back(s.submit({.share = "C", .cores_per_node = 2, .duration = seconds(t ? t : 200),
                                .timeout_s = t ? std::optional(t) : std::nullopt}));
    }
  };
  sim.run_until(at_s(10), keep_streaming);
  const JobId b = sim.submit({.share = "B", .nodes = 2, .cores_per_node = 4, .duration = seconds(100),
                              .timeout_s = 1000});
  std::optional<Reservation> first_for_b;
  sim.run_until(at_s(2000), keep_streaming, [&](const PassResult& pass) {
    if (!first_for_b && pass.reservation && pass.reservation->job == b) first_for_b = pass.reservation;
  });
  ASSERT_TRUE(first_for_b.has_value());
  EXPECT_EQ(first_for_b->at, at_s(1000));
  EXPECT_EQ(sim.started_at(b), first_for_b->at);  // never delayed
  int backfilled = 0;
  for (JobId id : small) {
    const auto start = sim.started_at(id);
    if (!start || *start >= *sim.started_at(b)) continue;
    ++backfilled;
    ASSERT_TRUE(sim.spec(id).timeout_s.has_value()) << "job " << id;
    EXPECT_LE(*start + seconds(*sim.spec(id).timeout_s), first_for_b->at) << "job " << id;
  }
  EXPECT_GE(backfilled, 2);
}

TEST(Simulation, AFactorRecoversAsUsageDecaysOverHalfLives) {
  Simulation sim(Config{.usage_half_life = hours(1)}, 1, 5);
  sim.scheduler().set_share("B", {.weight = 1, .max_running_cores = 1});
  sim.submit({.share = "A", .cores_per_node = 4, .duration = hours(1), .timeout_s = 3600});
  for (int i = 0; i < 10; ++i) sim.submit({.share = "B", .duration = hours(1), .timeout_s = 3600});
  PendingJob a_waits = job(1000, {.share = "A"});
  a_waits.waiting_for = {999};  // keeps A a share with pending work
  sim.scheduler().queue(a_waits);
  std::vector<ShareRow> hourly;
  for (int h = 1; h <= 6; ++h) {
    sim.run_until(at_s(h * 3600));
    hourly.push_back(row(sim.scheduler().shares(sim.now()), "A"));
    hourly.push_back(row(sim.scheduler().shares(sim.now()), "B"));
  }
  // A: 4 cores for the first hour, then nothing. B: capped at 1 core, running throughout. A's usage halves every
  // hour and its factor climbs past B's.
  for (int h = 1; h < 6; ++h) {
    const ShareRow& a_before = hourly[2 * (h - 1)];
    const ShareRow& a_after = hourly[2 * h];
    EXPECT_NEAR(a_after.usage, a_before.usage / 2, a_before.usage * 1e-9) << "hour " << h;
    EXPECT_GT(a_after.fair_share_factor, a_before.fair_share_factor) << "hour " << h;
  }
  EXPECT_LT(hourly[0].fair_share_factor, hourly[1].fair_share_factor);    // after hour 1: A below B
  EXPECT_GT(hourly[10].fair_share_factor, hourly[11].fair_share_factor);  // after hour 6: A above B
}

TEST(Simulation, ABurstOfAThousandSubmissionsDoesNotPushOutALightlyUsedShare) {
  Simulation sim(Config{.usage_half_life = hours(1)}, 4, 4);
  for (int i = 0; i < 1000; ++i) sim.submit({.share = "A", .duration = seconds(300), .timeout_s = 600});
  std::vector<JobId> light;
  for (int m = 0; m < 4 * 60; m += 15) {
    sim.submit_at(at_s(m * 60 + 7), {.share = "B", .duration = seconds(300), .timeout_s = 600});
  }
  // A: a burst of 1000 one-core jobs at once. B: one job every 15 minutes. Whenever B has a job
  // waiting, no A job may start in its place.
  int a_started_while_b_waited = 0;
  sim.run_until(at_s(4 * 3600), {}, [&](const PassResult& pass) {
    bool a_started = false;
    for (const Start& s : pass.starts) a_started |= sim.spec(s.job).share == "A";
    if (a_started && sim.pending("B") > 0) ++a_started_while_b_waited;
  });
  EXPECT_EQ(a_started_while_b_waited, 0);
  EXPECT_EQ(sim.pending("B"), 0);
  for (JobId id = 1001; id <= 1016; ++id) {
    ASSERT_EQ(sim.spec(id).share, "B");
    ASSERT_TRUE(sim.started_at(id).has_value());
  }
  EXPECT_GT(sim.core_seconds("A"), 0.8 * 16 * 4 * 3600);  // A still fills everything else
}

}  // namespace
}  // namespace trainyard::scheduler
