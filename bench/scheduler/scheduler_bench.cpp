// Scheduler pass latency at scale: 100,000 pending jobs in 50 shares on 1,000 nodes of
// 32 cores (--nodes N for another fleet). Prints p50/p99/max per pass for
//   join   - the passes while the idle fleet joins, one after each node,
//   fill   - the passes that first fill the idle cluster (each examines at most max_jobs_examined),
//   idle   - a pass on a full cluster where nothing changed,
//   ended  - a pass right after one running job ends (incremental: the scheduler is not rebuilt),
//   joined - a pass right after a node (re)registers, as the daemon runs one on every join and
//            registration check,
// keeping 100,000 jobs pending throughout. With --arrays, a fifth of the jobs are tasks
// of 100-task arrays limited to 5 running (%5), and a tenth depend on an earlier job (afterok),
// held until it ends, then queued again as the daemon does. With --preempt, every pass whose first
// queued job waits for free cores also runs the preemption decision (scheduler/preemption.h) over
// the running work, as the daemon does, and its time is part of the pass (counted, not acted on).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <numeric>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "scheduler/preemption.h"
#include "scheduler/scheduler.h"

namespace {

using namespace trainyard;
using namespace trainyard::scheduler;
using Clock = std::chrono::steady_clock;

constexpr int kCores = 32;
constexpr int kShares = 50;
constexpr int kPending = 100'000;

TimePoint at_s(std::int64_t s) { return from_unix_ms(1'800'000'000'000 + s * 1000); }

// `prefix + std::to_string(n)` trips g++ 12's false -Wrestrict at -O3 (GCC bug 105329).
std::string numbered(const char* prefix, int n) {
  std::string name = prefix;
  name += std::to_string(n);
  return name;
}

class Workload {
 public:
  Workload(unsigned seed, bool arrays_and_dependencies) : rng_(seed), arrays_and_dependencies_(arrays_and_dependencies) {}

  PendingJob next(TimePoint now) {
    PendingJob job;
    job.id = next_id_++;
    if (arrays_and_dependencies_) {
      const int roll = pick(0, 99);
      if (roll < 20) {
        if (tasks_left_ == 0) {
          array_ = job.id;
          tasks_left_ = 100;
        }
        --tasks_left_;
        job.array = ArrayLimit{array_, 5};
      } else if (roll < 30 && job.id > 1) {
        job.waiting_for = {static_cast<JobId>(pick(std::max<int>(1, static_cast<int>(job.id) - 5000), static_cast<int>(job.id) - 1))};
        job.dependency_reason = "waiting for job to succeed (afterok)";
      }
    }
    job.share = numbered("share-", pick(0, kShares - 1));
    job.priority = pick(0, 9);
    job.submitted_at = now;
    const int kind = pick(0, 99);
    if (kind < 70) {
      job.cores_per_node = 1 << pick(0, 3);  // 1, 2, 4 or 8 cores on one node
    } else if (kind < 90) {
      job.cores_per_node = std::nullopt;  // one whole node
    } else {
      job.nodes = 1 << pick(1, 3);  // 2, 4 or 8 whole nodes
      job.cores_per_node = std::nullopt;
    }
    if (pick(0, 9) > 0) job.timeout_s = pick(600, 36'000);
    return job;
  }

  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

 private:
  std::mt19937_64 rng_;
  bool arrays_and_dependencies_ = false;
  JobId next_id_ = 1;
  JobId array_ = 0;
  int tasks_left_ = 0;
};

double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// Wall time is what the daemon waits; CPU time of this thread is the pass's own cost, apart from
// whatever else the shared machine runs meanwhile.
struct Series {
  const char* name;
  std::vector<double> wall_ms;
  std::vector<double> cpu_ms;

  template <typename F>
  void time(F&& f) {
    const auto wall = Clock::now();
    const double cpu = thread_cpu_ms();
    f();
    cpu_ms.push_back(thread_cpu_ms() - cpu);
    wall_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - wall).count());
  }

  double total_ms() const { return std::accumulate(wall_ms.begin(), wall_ms.end(), 0.0); }

  void print() {
    print_one("wall", wall_ms);
    print_one("cpu", cpu_ms);
  }

 private:
  void print_one(const char* clock, std::vector<double>& ms) const {
    if (ms.empty()) return;
    std::sort(ms.begin(), ms.end());
    const auto at = [&](double q) { return ms[std::min(ms.size() - 1, static_cast<std::size_t>(q * ms.size()))]; };
    std::printf("%-6s %-4s passes=%-5zu p50=%7.3f ms  p99=%7.3f ms  max=%7.3f ms\n", name, clock, ms.size(), at(0.50),
                at(0.99), ms.back());
  }
};

// Every start, job and nodes in order, hashed (FNV-1a): equal fingerprints across builds of the
// scheduler mean it made the same decisions.
class Fingerprint {
 public:
  void add(const Start& start) {
    mix(std::to_string(start.job));
    for (const NodeCores& nc : start.nodes) mix(nc.node + ":" + std::to_string(nc.cores));
  }
  std::uint64_t value() const { return hash_; }

 private:
  void mix(const std::string& text) {
    for (const char c : text + ";") hash_ = (hash_ ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  }
  std::uint64_t hash_ = 14695981039346656037ULL;
};

}  // namespace

int main(int argc, char** argv) {
  int rounds = 1000;
  int node_count = 1000;
  bool arrays = false;
  bool preempt = false;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 < argc && std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
    if (i + 1 < argc && std::strcmp(argv[i], "--nodes") == 0) node_count = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--arrays") == 0) arrays = true;
    if (std::strcmp(argv[i], "--preempt") == 0) preempt = true;
  }

  Scheduler scheduler{Config{}};
  Workload workload(7, arrays);
  if (rounds < 1 || node_count < 1) {
    std::fprintf(stderr, "scheduler_bench: --rounds and --nodes must be positive\n");
    return 2;
  }
  const auto node_info = [](int n) {
    return NodeInfo{numbered("node-", n), kCores, {{"rack", numbered("r", n / 40)}}, true};
  };
  // The fleet joins first, one node at a time with a pass after each, as the daemon asks for one
  // after every registration (it coalesces those asked for before a pass runs; this does not).
  Series join{"join"};
  for (int n = 0; n < node_count; ++n) {
    scheduler.upsert_node(node_info(n));
    join.time([&] { scheduler.schedule(at_s(0)); });
  }
  for (int s = 0; s < kShares; ++s) {
    const std::string name = numbered("share-", s);
    scheduler.set_share(name, ShareSettings{static_cast<double>(1 + s % 5), std::nullopt});
    scheduler.import_usage(UsageRecord{name, 1000.0 * workload.pick(0, 10'000), at_s(0)});
  }
  TimePoint now = at_s(0);
  std::unordered_map<JobId, PendingJob> pending;  // every job queued, for the preemption facts
  const auto queue = [&](const PendingJob& job) {
    pending[job.id] = job;
    scheduler.queue(job);
  };
  // Jobs held by a dependency, by the job they wait for: queued again, free, once it ends.
  std::unordered_map<JobId, std::vector<PendingJob>> dependents;
  const auto submit = [&](PendingJob job) {
    if (!job.waiting_for.empty()) dependents[job.waiting_for.front()].push_back(job);
    queue(job);
  };
  for (int i = 0; i < kPending; ++i) submit(workload.next(now));

  PreemptionConfig preemption;
  preemption.enabled = preempt;
  preemption.min_run_time = std::chrono::seconds(0);
  std::unordered_map<JobId, std::vector<NodeCores>> placed;
  std::unordered_map<std::string, int> used;  // cores per node
  int plans = 0;
  // What the daemon does after every pass (daemon/job_manager_preemption.cpp): the decision for the
  // queue's first job, when it waits for free cores.
  const auto decide_preemption = [&] {
    if (!preempt) return;
    const std::vector<JobId> head = scheduler.queue_page(0, 1);
    if (head.empty()) return;
    const auto why = scheduler.why_pending(head.front());
    if (!why || why->code != ReasonCode::resources) return;
    const PendingJob& top = pending.at(head.front());
    std::vector<PreemptionCandidate> candidates;
    candidates.reserve(placed.size());
    for (const auto& [id, nodes] : placed) {
      const PendingJob& job = pending.at(id);
      candidates.push_back({id, job.share, job.priority, nodes, at_s(0), static_cast<std::int64_t>(id % 97)});
    }
    std::vector<NodeRoom> room;
    room.reserve(node_count);
    for (int n = 0; n < node_count; ++n) {
      const std::string name = numbered("node-", n);
      room.push_back({name, kCores, kCores - used[name], true});
    }
    const auto plan = plan_preemption({top.id, top.share, top.priority, top.nodes, top.cores_per_node}, candidates, room,
                                      share_standings(scheduler.shares(now)), preemption, now);
    plans += plan.has_value();
  };

  std::vector<JobId> running;
  Fingerprint decisions;
  const auto pass = [&](Series& series) {
    PassResult result;
    series.time([&] {
      result = scheduler.schedule(now);
      decide_preemption();
    });
    for (const Start& start : result.starts) {
      decisions.add(start);
      running.push_back(start.job);
      placed[start.job] = start.nodes;
      for (const NodeCores& nc : start.nodes) used[nc.node] += nc.cores;
      submit(workload.next(now));  // keep the backlog at 100,000
    }
    return result;
  };
  const auto finish = [&](JobId id) {
    scheduler.finish(id, now);
    for (const NodeCores& nc : placed[id]) used[nc.node] -= nc.cores;
    placed.erase(id);
    auto it = dependents.find(id);
    if (it == dependents.end()) return;
    for (PendingJob& job : it->second) {
      job.waiting_for.clear();
      queue(job);
    }
    dependents.erase(it);
  };

  Series fill{"fill"}, idle{"idle"}, ended{"ended"}, joined{"joined"};
  std::size_t started_in_fill = 0;
  while (true) {
    const PassResult result = pass(fill);
    started_in_fill += result.starts.size();
    if (result.starts.empty()) break;
  }
  int reserved = 0;
  for (int r = 0; r < rounds; ++r) {
    now += std::chrono::seconds(1);
    pass(idle);
    const std::size_t victim = static_cast<std::size_t>(workload.pick(0, static_cast<int>(running.size()) - 1));
    finish(running[victim]);
    running[victim] = running.back();
    running.pop_back();
    reserved += pass(ended).reservation.has_value();
    scheduler.upsert_node(node_info(workload.pick(0, node_count - 1)));  // its registration check passed again
    pass(joined);
  }

  std::printf("scheduler_bench: %d nodes x %d cores, %d shares, %d pending, max_jobs_examined=%d%s\n", node_count,
              kCores, kShares, kPending, Config{}.max_jobs_examined, arrays ? ", arrays (%5) and dependencies on" : "");
  std::printf("join: %d nodes, a pass after each: %.3f s of passes in all\n", node_count, join.total_ms() / 1000);
  std::printf("fill: %zu jobs started, %zu running after; ended passes with a reservation: %d/%d\n", started_in_fill,
              running.size(), reserved, rounds);
  std::printf("decisions: fingerprint %016llx\n", static_cast<unsigned long long>(decisions.value()));
  if (preempt) std::printf("preemption on: passes whose decision chose victims: %d\n", plans);
  join.print();
  fill.print();
  idle.print();
  ended.print();
  joined.print();
  return 0;
}
