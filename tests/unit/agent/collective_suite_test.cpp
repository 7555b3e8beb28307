#include "agent/collective_suite.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <map>

#include "healthcheck/localisation.h"
#include "healthcheck/verdict.h"
#include "neuron/in_process_communicator.h"
#include "neuron/tcp_rate_limiter.h"
#include "tests/unit/neuron/ring_harness.h"

namespace trainyard::healthcheck {
namespace {

using ::testing::HasSubstr;

constexpr CollectiveKind kKinds[] = {CollectiveKind::all_gather, CollectiveKind::all_reduce,
                                     CollectiveKind::reduce_scatter};

CollectiveSuiteOptions small(std::size_t elements) { return {elements, 2}; }

// Runs the suite on every rank of an in-process group, each rank wrapped by `wrap`.
CollectiveRun run_in_process(const std::vector<std::string>& nodes, const CollectiveSuiteOptions& options,
                             const std::function<std::unique_ptr<neuron::Communicator>(
                                 std::unique_ptr<neuron::InProcessCommunicator>)>& wrap) {
  auto group = neuron::make_in_process_group(static_cast<int>(nodes.size()), std::chrono::seconds(20));
  std::vector<std::future<RankCollectiveResult>> ranks;
  for (auto& comm : group) {
    ranks.push_back(std::async(std::launch::async, [&options, comm = wrap(std::move(comm))] {
      return agent::run_collective_suite(*comm, options);
    }));
  }
  CollectiveRun run{nodes, {}};
  for (auto& r : ranks) run.ranks.push_back(r.get());
  return run;
}

std::unique_ptr<neuron::Communicator> as_is(std::unique_ptr<neuron::InProcessCommunicator> comm) { return comm; }

// Runs the suite over TCP on 127.0.0.1, one agent (DataPlaneServer) per node; `links` gives a
// node's link fault.
CollectiveRun run_over_tcp(const std::vector<std::string>& nodes, const std::map<std::string, LinkFault>& links,
                           const CollectiveSuiteOptions& options) {
  neuron::testing::RingHarness ring(static_cast<int>(nodes.size()), std::chrono::seconds(20));
  std::vector<LinkFault> faults;
  for (const std::string& node : nodes) faults.push_back(links.count(node) ? links.at(node) : LinkFault{});
  CollectiveRun run{nodes, std::vector<RankCollectiveResult>(nodes.size())};
  neuron::testing::expect_all_succeeded(ring.run(
      [&](neuron::TcpCommunicator& comm) {
        run.ranks[static_cast<std::size_t>(comm.rank())] = agent::run_collective_suite(comm, options);
      },
      faults));
  return run;
}

void expect_all_exact(const CollectiveRun& run, std::size_t elements) {
  for (const RankCollectiveResult& rank : run.ranks) {
    EXPECT_TRUE(rank.correct()) << "rank " << rank.rank << ": " << rank.error;
    ASSERT_EQ(rank.collectives.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
      const CollectiveMeasurement& m = rank.collectives[i];
      EXPECT_EQ(m.kind, kKinds[i]);
      EXPECT_TRUE(m.exact) << m.error;
      EXPECT_EQ(m.bytes, elements * sizeof(float));
      EXPECT_GT(m.busbw, 0.0);
      EXPECT_DOUBLE_EQ(m.busbw, busbw(m.kind, rank.world_size, static_cast<double>(m.bytes), m.seconds));
    }
  }
}

TEST(CollectiveSuiteTest, InProcessRanksAreExactIncludingUnevenChunks) {
  for (std::size_t elements : {std::size_t{1}, std::size_t{1001}, std::size_t{65536}}) {
    const CollectiveRun run = run_in_process({"a", "b", "c"}, small(elements), as_is);
    expect_all_exact(run, elements);
  }
}

// Adds 1 to one element of every all-reduce result on its rank: a silently wrong transport.
class CorruptingCommunicator final : public neuron::Communicator {
 public:
  explicit CorruptingCommunicator(std::unique_ptr<neuron::Communicator> inner) : inner_(std::move(inner)) {}
  int rank() const override { return inner_->rank(); }
  int world_size() const override { return inner_->world_size(); }
  void all_reduce_sum(std::span<float> data) override {
    inner_->all_reduce_sum(data);
    data[data.size() / 2] += 1.0f;
  }
  void all_gather(std::span<const float> mine, std::span<float> all) override { inner_->all_gather(mine, all); }
  void reduce_scatter_sum(std::span<const float> input, std::span<float> mine) override {
    inner_->reduce_scatter_sum(input, mine);
  }

 private:
  std::unique_ptr<neuron::Communicator> inner_;
};

TEST(CollectiveSuiteTest, AWrongElementIsReportedAndMakesTheRunFail) {
  const CollectiveRun run = run_in_process({"a", "b"}, small(1000), [](auto comm) -> std::unique_ptr<neuron::Communicator> {
    if (comm->rank() == 1) return std::make_unique<CorruptingCommunicator>(std::move(comm));
    return comm;
  });
  EXPECT_TRUE(run.ranks[0].correct());
  const CollectiveMeasurement& all_reduce = run.ranks[1].collectives[1];
  EXPECT_FALSE(all_reduce.exact);
  EXPECT_THAT(all_reduce.error, ::testing::MatchesRegex("all_reduce element 500 is -?[0-9]+, want -?[0-9]+"));
  EXPECT_TRUE(run.ranks[1].collectives[0].exact);
  const CollectiveVerdict verdict = judge_collective_run(run, {});
  EXPECT_EQ(verdict.nodes[0].state, NodeState::unhealthy);
  EXPECT_THAT(verdict.nodes[0].reason, HasSubstr("rank 1 (b): all_reduce: all_reduce element 500 is"));
}

// Exact, so nobody is UNHEALTHY; whether a rank of a 40 kB test on a loaded machine is SUSPECT is
// timing, which this test does not assert.
TEST(CollectiveSuiteTest, FourRanksOverTcpAreExact) {
  const CollectiveRun run = run_over_tcp({"n0", "n1", "n2", "n3"}, {}, small(10007));
  expect_all_exact(run, 10007);
  for (const NodeVerdict& v : judge_collective_run(run, {}).nodes) EXPECT_NE(v.state, NodeState::unhealthy) << v.reason;
}

// Bytes a rank sends in one collective of `bytes` over `world` ranks (ring schedule).
double sent_bytes(CollectiveKind kind, int world, double bytes) {
  const double share = bytes * (world - 1) / world;
  return kind == CollectiveKind::all_reduce ? 2 * share : share;
}

// Throttled to `kRate`, a rank needs at least (sent - burst) / kRate seconds for every collective
// (the token bucket holds at most one burst), which caps the busbw it can measure; that holds on
// any machine, however loaded. The same node unthrottled must do better.
TEST(CollectiveSuiteTest, AThrottledLinkCapsThatRanksBusbw) {
  constexpr double kRate = 5e5;
  constexpr std::size_t kElements = 16384;  // 64 KiB
  constexpr int kWorld = 3;
  const double burst = neuron::SendRateLimiter(kRate, std::chrono::steady_clock::now()).burst_bytes();
  const std::vector<std::string> nodes{"n0", "n1", "n2"};
  const CollectiveSuiteOptions options{kElements, 1};
  const CollectiveRun throttled = run_over_tcp(nodes, {{"n1", LinkFault{kRate, false}}}, options);
  const CollectiveRun free = run_over_tcp(nodes, {}, options);
  expect_all_exact(throttled, kElements);
  for (std::size_t i = 0; i < 3; ++i) {
    const CollectiveMeasurement& m = throttled.ranks[1].collectives[i];
    const double bytes = static_cast<double>(m.bytes);
    const double fastest_possible = (sent_bytes(m.kind, kWorld, bytes) - burst) / kRate;
    EXPECT_GE(m.seconds, fastest_possible) << to_string(m.kind);
    EXPECT_LE(m.busbw, busbw(m.kind, kWorld, bytes, fastest_possible)) << to_string(m.kind);
    EXPECT_GT(free.ranks[1].collectives[i].busbw, m.busbw) << to_string(m.kind);
  }
}

// The follow-up pairs of plan_localisation, each pair a fresh pair of agents on loopback, the
// pairs of a round at the same time.
std::vector<CollectiveRun> run_follow_ups_over_tcp(const std::vector<std::string>& nodes,
                                                   const std::map<std::string, LinkFault>& links,
                                                   const CollectiveSuiteOptions& options) {
  std::vector<CollectiveRun> runs;
  for (const auto& round : plan_localisation(nodes).rounds) {
    std::vector<std::future<CollectiveRun>> pairs;
    for (const TestSet& set : round) {
      pairs.push_back(std::async(std::launch::async, [&, set] { return run_over_tcp(set, links, options); }));
    }
    for (auto& p : pairs) runs.push_back(p.get());
  }
  return runs;
}

// In the ring every rank waits for the throttled link, so the run alone cannot say which node is
// slow; the pairs can. A pair with n2 cannot beat about 0.4 MB/s (250 kB/s plus one burst); a
// loopback pair of 16 KiB runs at tens of MB/s, but on a loaded CI machine one pair of a round
// can be several times slower than another, so the test uses a fraction of 0.2, not 0.5.
TEST(CollectiveSuiteTest, AThrottledNodeAmongFourIsLocalisedOverTcp) {
  const std::vector<std::string> nodes{"n0", "n1", "n2", "n3"};
  const std::map<std::string, LinkFault> links{{"n2", LinkFault{2.5e5, false}}};
  // Loopback timing of tiny buffers varies ~10x under AddressSanitizer on a loaded 2-core host (seen:
  // a good pair at 10.9 MB/s against a reference of 85.9); the throttled link is ~300x slower. Judge
  // at 5% of the reference and keep the fastest of 3 runs, so only the fault can fail the test.
  const auto verdicts = localise(run_follow_ups_over_tcp(nodes, links, {4096, 3}), {0.05, std::nullopt});
  ASSERT_EQ(verdicts.size(), 4u);
  for (const NodeVerdict& v : verdicts) {
    EXPECT_EQ(v.state, v.node == "n2" ? NodeState::suspect : NodeState::healthy) << v.node << ": " << v.reason;
  }
}

TEST(CollectiveSuiteTest, ADroppedLinkIsReportedNamingThePeerAndLocalised) {
  const std::vector<std::string> nodes{"n0", "n1", "n2"};
  const std::map<std::string, LinkFault> links{{"n1", LinkFault{std::nullopt, true}}};
  const CollectiveRun run = run_over_tcp(nodes, links, small(1000));
  const RankCollectiveResult& dropped = run.ranks[1];
  EXPECT_FALSE(dropped.correct());
  EXPECT_TRUE(dropped.collectives.empty()) << "the first collective already failed";
  EXPECT_EQ(dropped.failed_peer, 2);
  EXPECT_THAT(dropped.error, HasSubstr("all_gather: "));
  EXPECT_THAT(dropped.error, HasSubstr("dropped (fault injection)"));
  for (int neighbour : {0, 2}) EXPECT_THAT(run.ranks[static_cast<std::size_t>(neighbour)].error, HasSubstr("closed the connection"));

  const CollectiveVerdict verdict = judge_collective_run(run, {});
  EXPECT_TRUE(verdict.needs_localisation);
  const auto localised = localise(run_follow_ups_over_tcp(nodes, links, small(1000)), {});
  for (const NodeVerdict& v : localised) {
    EXPECT_EQ(v.state, v.node == "n1" ? NodeState::unhealthy : NodeState::healthy) << v.node << ": " << v.reason;
  }
}

}  // namespace
}  // namespace trainyard::healthcheck
