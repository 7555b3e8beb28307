// The log fetcher against recorded sends and fake timers: who is asked, what each rank's answer
// holds, and when the caller is answered.
#include "daemon/log_fetcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "tests/unit/daemon/harness.h"

namespace trainyard::daemon::testing {
namespace {

using ::testing::HasSubstr;

class LogFetcherTest : public ::testing::Test {
 protected:
  LogFetcherTest() {
    attempt.id = 9;
    attempt.nodes = {"n1", "n2", "n3"};
  }

  void fetch(std::optional<int> rank = std::nullopt) {
    fetcher.fetch(attempt, rank, 50, [this](std::vector<RankLog> l) {
      EXPECT_FALSE(logs) << "answered twice";
      logs = std::move(l);
    });
  }
  std::int64_t request_to(const std::string& node) const {
    for (const auto& [to, request] : sent) {
      if (to == node) return request.request_id;
    }
    ADD_FAILURE() << "no request to " << node;
    return 0;
  }
  void reply(const std::string& node, std::int64_t request_id, std::string text) {
    fetcher.on_reply(node, LogReplyMsg{request_id, attempt.id, std::move(text), "", 10, false});
  }

  ManualTimeSource clock{test_epoch()};
  FakeTimers timers{clock};
  std::set<std::string> connected{"n1", "n2", "n3"};
  std::vector<std::pair<std::string, LogRequestMsg>> sent;
  LogFetcher fetcher{timers, Millis(1000), [this](const std::string& node, const DaemonMessage& message) {
                       if (!connected.contains(node)) return false;
                       sent.emplace_back(node, std::get<LogRequestMsg>(message));
                       return true;
                     }};
  Attempt attempt;
  std::optional<std::vector<RankLog>> logs;
};

TEST_F(LogFetcherTest, AsksEveryRankAndAnswersOnceAllReplied) {
  fetch();
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[0].second.attempt_id, 9);
  EXPECT_EQ(sent[0].second.tail_lines, 50);
  EXPECT_EQ(sent[0].second.max_bytes, kMaxLogReplyBytes);
  reply("n3", request_to("n3"), "three");
  reply("n1", request_to("n1"), "one");
  EXPECT_FALSE(logs) << "answered before every rank replied";
  reply("n2", request_to("n2"), "two");
  ASSERT_TRUE(logs) << "every rank replied, yet no answer";
  ASSERT_EQ(logs->size(), 3u);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ((*logs)[r].rank, r);
    EXPECT_EQ((*logs)[r].node, attempt.nodes[r]);
    EXPECT_EQ((*logs)[r].error, "");
  }
  EXPECT_EQ((*logs)[0].text, "one");
  EXPECT_EQ((*logs)[2].text, "three");
  EXPECT_EQ(timers.fire_due(), 0);
  clock.advance(Millis(1000));
  timers.fire_due();  // the timeout of a fetch already answered answers nothing
}

TEST_F(LogFetcherTest, ASilentRankTimesOutAndALateReplyChangesNothing) {
  fetch();
  reply("n1", request_to("n1"), "one");
  reply("n2", request_to("n2"), "two");
  clock.advance(Millis(999));
  timers.fire_due();
  EXPECT_FALSE(logs) << "answered before the timeout";
  clock.advance(Millis(1));
  timers.fire_due();
  ASSERT_TRUE(logs);
  EXPECT_EQ((*logs)[1].text, "two");
  EXPECT_THAT((*logs)[2].error, HasSubstr("did not answer within 1000 ms"));
  reply("n3", request_to("n3"), "too late");
}

TEST_F(LogFetcherTest, ANodeNotConnectedIsReportedWithoutWaiting) {
  connected = {};
  fetch();
  EXPECT_TRUE(sent.empty());
  ASSERT_TRUE(logs) << "nobody to wait for, yet no answer";
  EXPECT_THAT((*logs)[0].error, HasSubstr("node n1 is not connected"));
  EXPECT_EQ(timers.pending(), 0u);
}

TEST_F(LogFetcherTest, OnlyTheAskedRankAndOnlyItsNodeAnswers) {
  fetch(1);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].first, "n2");
  reply("n1", request_to("n2"), "an impostor");
  EXPECT_FALSE(logs) << "another node answered for n2";
  reply("n2", request_to("n2"), "two");
  ASSERT_TRUE(logs);
  ASSERT_EQ(logs->size(), 1u);
  EXPECT_EQ((*logs)[0].rank, 1);
  EXPECT_EQ((*logs)[0].text, "two");
}

}  // namespace
}  // namespace trainyard::daemon::testing
