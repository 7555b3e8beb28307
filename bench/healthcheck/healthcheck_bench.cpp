// Prints how long the health suites take with their default options: the accelerator suite on a
// 32-core simulated node (all cores in parallel over the host's threads), and the collective suite
// over 4 ranks, each rank an agent with its own data-plane server on 127.0.0.1, plus the pair
// follow-ups localisation would run for those 4 nodes.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "agent/accelerator_suite.h"
#include "agent/collective_suite.h"
#include "healthcheck/localisation.h"
#include "healthcheck/verdict.h"
#include "neuron/data_plane.h"
#include "neuron/tcp_communicator.h"

namespace trainyard::healthcheck {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// One collective suite over `world` fresh agents on loopback; returns the run (node names n0..).
CollectiveRun collective_run(int world, const CollectiveSuiteOptions& options) {
  std::vector<std::unique_ptr<neuron::DataPlaneServer>> servers;
  std::vector<std::string> peers;
  CollectiveRun run;
  for (int r = 0; r < world; ++r) {
    servers.push_back(std::make_unique<neuron::DataPlaneServer>(neuron::HostPort{"127.0.0.1", 0},
                                                                neuron::DataPlaneServer::Options{}));
    peers.push_back("127.0.0.1:" + std::to_string(servers.back()->port()));
    run.nodes.push_back("n" + std::to_string(r));
  }
  std::vector<std::future<RankCollectiveResult>> ranks;
  for (int r = 0; r < world; ++r) {
    ranks.push_back(std::async(std::launch::async, [&, r] {
      neuron::TcpCommunicator comm({1, r, peers, std::chrono::seconds(30), {}, 0}, *servers[static_cast<std::size_t>(r)]);
      return agent::run_collective_suite(comm, options);
    }));
  }
  for (auto& f : ranks) run.ranks.push_back(f.get());
  return run;
}

void print_accelerator(int runs) {
  neuron::NeuronDevice device(neuron::NeuronDevice::kDefaultCores);
  const AcceleratorSuiteOptions options;
  std::vector<double> totals;
  AcceleratorReport last;
  for (int i = 0; i < runs; ++i) {
    last = agent::run_accelerator_suite(device, options);
    totals.push_back(last.duration_ms);
  }
  double per_test[3] = {0, 0, 0};
  for (const CoreResult& core : last.cores) {
    for (std::size_t t = 0; t < 3; ++t) per_test[t] += core.checks[t].duration_ms / static_cast<double>(last.cores.size());
  }
  std::sort(totals.begin(), totals.end());
  std::printf("accelerator suite, %d cores, %u host threads: median %.1f ms, min %.1f ms over %d runs (%s)\n",
              device.core_count(), std::max(1u, std::thread::hardware_concurrency()), totals[totals.size() / 2],
              totals.front(), runs, to_string(judge_accelerator("bench", last).state).c_str());
  std::printf("  per core: gemm %dx%dx%d %.2f ms, stochastic rounding %zu samples %.2f ms, memory %zu words x 4 patterns %.2f ms\n",
              options.gemm_size, options.gemm_size, options.gemm_size, per_test[0], options.rounding_samples, per_test[1],
              options.memory_words, per_test[2]);
}

void print_collectives(int runs) {
  const CollectiveSuiteOptions options;
  constexpr int kWorld = 4;
  std::vector<double> totals;
  CollectiveRun last;
  for (int i = 0; i < runs; ++i) {
    const Clock::time_point start = Clock::now();
    last = collective_run(kWorld, options);
    totals.push_back(seconds_since(start) * 1e3);
  }
  std::sort(totals.begin(), totals.end());
  std::printf("collective suite, %d ranks on loopback TCP, %zu floats (%.1f MiB), %d timed iterations + 1 warm-up: "
              "median %.1f ms over %d runs\n",
              kWorld, options.elements, static_cast<double>(options.elements * sizeof(float)) / (1 << 20),
              options.iterations, totals[totals.size() / 2], runs);
  for (const CollectiveMeasurement& m : last.ranks[0].collectives) {
    std::printf("  rank 0 %-15s busbw %8.1f MB/s  (%.2f ms per call, %s)\n", std::string(trainyard::to_string(m.kind)).c_str(),
                m.busbw / 1e6, m.seconds * 1e3, m.exact ? "exact" : "WRONG");
  }

  const std::vector<std::string> nodes = last.nodes;
  const Clock::time_point start = Clock::now();
  const LocalisationPlan plan = plan_localisation(nodes);
  for (const auto& round : plan.rounds) {
    std::vector<std::future<CollectiveRun>> pairs;
    for (std::size_t p = 0; p < round.size(); ++p) {
      pairs.push_back(std::async(std::launch::async, [&] { return collective_run(2, options); }));
    }
    for (auto& f : pairs) f.get();
  }
  std::printf("localisation follow-ups for %d nodes: %zu rounds of %zu pairs, %.1f ms\n", kWorld, plan.rounds.size(),
              plan.rounds.front().size(), seconds_since(start) * 1e3);
}

}  // namespace
}  // namespace trainyard::healthcheck

int main(int argc, char** argv) {
  int runs = 5;
  if (argc == 3 && std::strcmp(argv[1], "--runs") == 0) runs = std::max(1, std::atoi(argv[2]));
  spdlog::set_level(spdlog::level::warn);
  trainyard::healthcheck::print_accelerator(runs);
  trainyard::healthcheck::print_collectives(runs);
}
