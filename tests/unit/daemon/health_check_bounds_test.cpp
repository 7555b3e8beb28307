// What the daemon sends an agent stays inside the protocol's bounds (proto/messages.h): at the
// largest gang the protocol allows every message parses as the agent parses it (a health check's
// collective suite, with its pair tests inside groups, and a job's launches); one node more and
// the collective suite is not sent at all, the check saying why.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "daemon/nodes/health_checks.h"
#include "healthcheck/health_json.h"
#include "tests/support/fake_timers.h"
#include "tests/unit/daemon/accelerator_reports.h"
#include "tests/unit/daemon/harness.h"

namespace trainyard::daemon::testing {
namespace {

struct Checks {
  Checks() {
    HealthCheckConfig config;
    config.group_size = 16;
    checks = std::make_unique<HealthChecks>(
        clock, timers, config,
        [this](const std::string& node, const DaemonMessage& message) {
          // As the agent reads it: what it would refuse fails here.
          const std::string text = encode(message);
          try {
            sent.push_back({node, std::get<HealthCheckMsg>(parse_daemon_message(text))});
          } catch (const InvalidInput& e) {
            ADD_FAILURE() << "the agent " << node << " would refuse: " << e.field() << ": " << e.what();
          }
          return true;
        },
        [](const std::string& node) { return std::optional<std::string>("10.1." + node + ":7000"); });
  }
  static std::vector<std::string> nodes(int n) {
    std::vector<std::string> out;
    for (int i = 0; i < n; ++i) out.push_back(std::to_string(i / 250) + "." + std::to_string(i % 250));
    return out;
  }
  // Answers every message sent so far as a healthy rank; returns how many.
  std::size_t answer_all() {
    std::vector<std::pair<std::string, HealthCheckMsg>> batch;
    batch.swap(sent);
    for (const auto& [node, msg] : batch) {
      checks->on_result(node, HealthResultMsg{msg.task_id, passing_collective(msg.rank, static_cast<int>(msg.peers.size())), ""});
    }
    return batch.size();
  }

  ManualTimeSource clock{test_epoch()};
  FakeTimers timers{clock};
  std::vector<std::pair<std::string, HealthCheckMsg>> sent;
  std::unique_ptr<HealthChecks> checks;
};

TEST(HealthCheckBounds, TheLargestGangTheProtocolAllowsIsSentWithinItsBoundsAndComparedInGroups) {
  Checks c;
  std::optional<HealthCheckResult> done;
  const auto nodes = Checks::nodes(kMaxRanks);
  c.checks->start(HealthCheckRequest{HealthCheckKind::on_demand, nodes, false, true, "alice"},
                  [&done](const HealthCheckResult& r) { done = r; });
  ASSERT_EQ(c.sent.size(), static_cast<std::size_t>(kMaxRanks)) << "one collective rank per node";
  std::set<int> ranks;
  for (const auto& [node, msg] : c.sent) {
    EXPECT_EQ(msg.peers.size(), static_cast<std::size_t>(kMaxRanks));
    ranks.insert(msg.rank);
  }
  EXPECT_EQ(*ranks.rbegin(), kMaxRanks - 1);
  EXPECT_TRUE(c.checks->running_on(nodes.back()));
  c.answer_all();
  // The pair tests: rounds of pairs inside groups of 16, so 15 rounds, not 1,023.
  int rounds = 0;
  while (!c.sent.empty()) {
    ++rounds;
    for (const auto& [node, msg] : c.sent) ASSERT_EQ(msg.peers.size(), 2u) << "a pair test";
    EXPECT_EQ(c.sent.size(), static_cast<std::size_t>(kMaxRanks)) << "every node in one pair a round";
    c.answer_all();
  }
  EXPECT_EQ(rounds, 15);
  ASSERT_TRUE(done);
  EXPECT_TRUE(done->passed()) << done->error;
  EXPECT_EQ(done->verdicts.size(), nodes.size());
  EXPECT_FALSE(c.checks->running_on(nodes.back())) << "a finished check holds no node";
}

TEST(HealthCheckBounds, OneNodeMoreIsNotSentAndTheCheckFailsSayingWhyWithoutJudgingANode) {
  Checks c;
  std::optional<HealthCheckResult> done;
  const auto nodes = Checks::nodes(kMaxRanks + 1);
  c.checks->start(HealthCheckRequest{HealthCheckKind::periodic, nodes, false, true, "daemon"},
                  [&done](const HealthCheckResult& r) { done = r; });
  EXPECT_TRUE(c.sent.empty()) << "nothing the agents would refuse is sent";
  ASSERT_TRUE(done) << "the check ends at once";
  EXPECT_FALSE(done->passed());
  EXPECT_NE(done->error.find("1025 nodes was not sent: the protocol allows at most 1024 ranks"), std::string::npos)
      << done->error;
  EXPECT_TRUE(done->verdicts.empty()) << "no node is blamed for what the daemon would not send";
  const Json j = to_json(*done);
  EXPECT_EQ(j["state"], "FAILED");
  EXPECT_EQ(j["error"], done->error);
  EXPECT_FALSE(c.checks->running_on(nodes.front()));
}

TEST(HealthCheckBounds, AJobOfTheLargestGangTheProtocolAllowsIsLaunchedWithinItsBounds) {
  Cluster c;
  for (int i = 0; i < kMaxRanks; ++i) c.connect("n" + std::to_string(i));
  c.submit(command_spec(kMaxRanks));
  std::set<int> ranks;
  for (const auto& [node, launches] : c.launches()) {
    for (const LaunchMsg& launch : launches) {
      const std::string text = encode(DaemonMessage{launch});
      try {
        const auto parsed = std::get<LaunchMsg>(parse_daemon_message(text));
        EXPECT_EQ(parsed.world_size, kMaxRanks);
        EXPECT_EQ(parsed.peers.size(), static_cast<std::size_t>(kMaxRanks));
        ranks.insert(parsed.rank);
      } catch (const InvalidInput& e) {
        ADD_FAILURE() << "the agent " << node << " would refuse: " << e.field() << ": " << e.what();
      }
    }
  }
  EXPECT_EQ(ranks.size(), static_cast<std::size_t>(kMaxRanks)) << "every rank launched";
  EXPECT_EQ(*ranks.rbegin(), kMaxRanks - 1);
}

}  // namespace
}  // namespace trainyard::daemon::testing
