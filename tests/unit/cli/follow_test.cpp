// The pure parts of following: --watch's highlighted redraws, logs --follow's new lines, and
// submit --wait's exit status.
#include <gtest/gtest.h>

#include "cli/follow.h"

namespace trainyard::cli {
namespace {

TEST(WatchDiff, HighlightsOnlyTheCharactersThatChanged) {
  EXPECT_EQ(highlight_changes("ID  STATE\n1   PENDING\n", "ID  STATE\n1   RUNNING\n"),
            "ID  STATE\n1   \x1b[7mRU\x1b[0mN\x1b[7mN\x1b[0mING\n");
}

TEST(WatchDiff, NewLinesAndLongerLinesAreChangesToo) {
  EXPECT_EQ(highlight_changes("a\n", "ab\nc\n"), "a\x1b[7mb\x1b[0m\n\x1b[7mc\x1b[0m\n");
  EXPECT_EQ(highlight_changes("same\n", "same\n"), "same\n");
}

TEST(WatchDiff, ARedrawClearsTheScreenFirst) {
  EXPECT_EQ(redraw("Every 2s: trainyard jobs", "x\n"), "\x1b[H\x1b[2JEvery 2s: trainyard jobs\n\nx\n");
}

Json logs_reply(std::int64_t attempt, const std::vector<std::tuple<int, std::string, std::int64_t>>& ranks) {
  Json logs = Json::array();
  for (const auto& [rank, text, bytes] : ranks) logs.push_back({{"rank", rank}, {"text", text}, {"log_bytes", bytes}});
  return {{"attempt", attempt}, {"logs", logs}};
}

TEST(LogFollower, PrintsTheFirstTailThenOnlyWhatGrewWithRankPrefixes) {
  LogFollower f(true);
  EXPECT_EQ(f.take(logs_reply(1, {{0, "a\n", 2}, {1, "", 0}})), "[rank 0] a\n");
  EXPECT_EQ(f.take(logs_reply(1, {{0, "a\nb\n", 4}, {1, "x\n", 2}})), "[rank 0] b\n[rank 1] x\n");
  EXPECT_EQ(f.take(logs_reply(1, {{0, "a\nb\n", 4}, {1, "x\n", 2}})), "");
  EXPECT_EQ(f.skipped_bytes(), 0);
}

TEST(LogFollower, HoldsAnUnfinishedLineUntilItEndsOrTheJobDoes) {
  LogFollower f(true);
  EXPECT_EQ(f.take(logs_reply(1, {{0, "step 1", 6}})), "");
  EXPECT_EQ(f.take(logs_reply(1, {{0, "step 1 done\nstep 2", 18}})), "[rank 0] step 1 done\n");
  EXPECT_EQ(f.finish(), "[rank 0] step 2\n");
}

TEST(LogFollower, OneRankHasNoPrefix) {
  LogFollower f(false);
  EXPECT_EQ(f.take(logs_reply(1, {{3, "only\n", 5}})), "only\n");
}

TEST(LogFollower, CountsWhatGrewFasterThanTheTailCarried) {
  LogFollower f(false);
  f.take(logs_reply(1, {{0, "a\n", 2}}));
  // 100 bytes grew; the tail holds the last 5 of them.
  EXPECT_EQ(f.take(logs_reply(1, {{0, "yz\nw\n", 102}})), "yz\nw\n");
  EXPECT_EQ(f.skipped_bytes(), 95);
}

TEST(LogFollower, ARetryStartsOverUnderAMarker) {
  LogFollower f(true);
  f.take(logs_reply(1, {{0, "first\npart", 10}}));
  EXPECT_EQ(f.take(logs_reply(2, {{0, "again\n", 6}})), "[rank 0] part\n--- attempt 2 ---\n[rank 0] again\n");
}

TEST(LogFollower, ARankWhoseAgentDidNotAnswerIsSkippedThisTime) {
  LogFollower f(true);
  const Json reply = {{"attempt", 1}, {"logs", {{{"rank", 0}, {"text", nullptr}, {"error", "node down"}}}}};
  EXPECT_EQ(f.take(reply), "");
}

TEST(WaitExitStatus, TheJobsOwnCodeOrADocumentedOne) {
  EXPECT_EQ(exit_status_of_job({{"state", "SUCCEEDED"}, {"exit_code", 0}}), 0);
  EXPECT_EQ(exit_status_of_job({{"state", "FAILED"}, {"exit_code", 7}}), 7);
  EXPECT_EQ(exit_status_of_job({{"state", "FAILED"}}), kExitFailedWithoutCode);
  EXPECT_EQ(exit_status_of_job({{"state", "FAILED"}, {"exit_code", 0}}), kExitFailedWithoutCode);
  EXPECT_EQ(exit_status_of_job({{"state", "CANCELLED"}}), kExitCancelled);
  EXPECT_TRUE(job_has_ended({{"state", "CANCELLED"}}));
  EXPECT_FALSE(job_has_ended({{"state", "RUNNING"}}));
  EXPECT_FALSE(job_has_ended({{"state", 3}}));
}

TEST(WaitForArray, FollowsTheFoldedRowThenEveryTaskAndExitsWithTheHighestStatus) {
  const Json first_task = {{"id", 12}, {"array", {{"job_id", 12}, {"task_id", 0}, {"task_count", 3}}}};
  const auto array = submitted_array(first_task);
  ASSERT_TRUE(array.has_value());
  EXPECT_EQ(array->array_job, 12);
  EXPECT_EQ(array->task_count, 3);
  EXPECT_FALSE(submitted_array({{"id", 12}}).has_value()) << "a plain job";
  EXPECT_FALSE(submitted_array({{"id", 12}, {"array", {{"job_id", "12"}}}}).has_value());
  EXPECT_EQ(folded_array_request(*array).target, "/v1/jobs?before=15&limit=1");
  EXPECT_EQ(array_tasks_request(*array, std::nullopt).target, "/v1/jobs?array=12&limit=1000");
  EXPECT_EQ(array_tasks_request(*array, "c1.x").target, "/v1/jobs?array=12&limit=1000&cursor=c1.x");
  EXPECT_EQ(exit_status_of_array({{{"state", "SUCCEEDED"}}, {{"state", "SUCCEEDED"}}}), 0);
  EXPECT_EQ(exit_status_of_array({{{"state", "FAILED"}, {"exit_code", 2}},
                                  {{"state", "SUCCEEDED"}},
                                  {{"state", "FAILED"}, {"exit_code", 9}}}),
            9);
  EXPECT_EQ(exit_status_of_array({{{"state", "FAILED"}, {"exit_code", 1}}, {{"state", "CANCELLED"}}}), kExitCancelled);
}

}  // namespace
}  // namespace trainyard::cli
