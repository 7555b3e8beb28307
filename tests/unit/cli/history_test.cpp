// `trainyard history`: time bounds, columns, CSV, and the request it sends.
#include <gtest/gtest.h>

#include "cli/command_line.h"
#include "cli/history.h"
#include "proto/time_window.h"

namespace trainyard::cli {
namespace {

const TimePoint kHistoryNow = *parse_time("2026-11-24T12:00:00.000Z");

TEST(TimeBounds, SpansBackFromNowTimesAndDates) {
  EXPECT_EQ(parse_time_bound("1d", kHistoryNow, "--since"), *parse_time("2026-11-23T12:00:00.000Z"));
  EXPECT_EQ(parse_time_bound("2h", kHistoryNow, "--since"), *parse_time("2026-11-24T10:00:00.000Z"));
  EXPECT_EQ(parse_time_bound("90s", kHistoryNow, "--since"), *parse_time("2026-11-24T11:58:30.000Z"));
  EXPECT_EQ(parse_time_bound("3600", kHistoryNow, "--since"), *parse_time("2026-11-24T11:00:00.000Z"));
  EXPECT_EQ(parse_time_bound("2026-11-20T08:30:00Z", kHistoryNow, "--since"), *parse_time("2026-11-20T08:30:00.000Z"));
  EXPECT_EQ(parse_time_bound("2026-11-20", kHistoryNow, "--since"), *parse_time("2026-11-20T00:00:00.000Z"));
}

TEST(TimeBounds, AnythingElseNamesTheField) {
  for (const char* bad : {"", "d", "1w", "-2h", "0s", "yesterday", "2026-13-01", "1.5h", "2h ago"}) {
    try {
      parse_time_bound(bad, kHistoryNow, "--since");
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const InvalidInput& e) {
      EXPECT_EQ(e.field(), "--since") << bad;
    }
  }
}

TEST(Durations, TokenTtlsShareTheParser) {
  EXPECT_EQ(parse_duration_s("30d", "--ttl", 10LL * 365 * 86400), 30 * 86400);
  EXPECT_THROW(parse_duration_s("4000d", "--ttl", 10LL * 365 * 86400), InvalidInput);
}

TEST(HistoryFormat, ElapsedReadsLikeSacct) {
  EXPECT_EQ(format_elapsed(7.9), "00:00:07");
  EXPECT_EQ(format_elapsed(3723), "01:02:03");
  EXPECT_EQ(format_elapsed(3 * 86400 + 4 * 3600 + 5 * 60 + 6), "3-04:05:06");
  EXPECT_EQ(format_elapsed(-5), "00:00:00");  // clock skew
}

TEST(HistoryFormat, CsvQuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field(""), "");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field("cr\r"), "\"cr\r\"");
}

const Json kJobs = Json::array({
    {{"id", 7},
     {"name", "train, big"},
     {"state", "FAILED"},
     {"exit_code", 3},
     {"failure_class", "oom"},
     {"attempts", 2},
     {"accounting",
      {{"elapsed_s", 3723.4}, {"wait_s", 65}, {"nodes", 2}, {"cores", 8}, {"core_hours", 8.27}, {"goodput", 0.9134}}}},
    {{"id", 6},
     {"name", "never-ran"},
     {"state", "CANCELLED"},
     {"failure_class", ""},
     {"attempts", 0},
     {"accounting",
      {{"elapsed_s", nullptr}, {"wait_s", 5}, {"nodes", 1}, {"cores", nullptr}, {"core_hours", 0}, {"goodput", nullptr}}}},
});

TEST(HistoryFormat, ColumnsAsAskedForWithAbsentValuesAsDashes) {
  const auto columns = parse_history_columns("id,state,elapsed,wait,cores,corehours,exit,class,goodput");
  EXPECT_EQ(history_table(kJobs, columns),
            "ID   STATE       ELAPSED    WAIT       CORES   CORE_HOURS   EXIT   CLASS   GOODPUT\n"
            "7    FAILED      01:02:03   00:01:05   8       8.27         3      oom     91.3%\n"
            "6    CANCELLED   -          00:00:05   -       0.00         -      -       -\n");
}

// Job 20 ran twice, once retried for its node's fault: two attempts, not the one its retries count.
TEST(HistoryFormat, AttemptsCountsEveryAttemptTheJobRan) {
  const Json rows = Json::array({{{"id", 20}, {"attempts", 1}, {"infra_retries", 1}, {"requeues", 0}},
                                 {{"id", 21}, {"attempts", 1}, {"requeues", 2}},
                                 {{"id", 22}}});
  EXPECT_EQ(history_table(rows, parse_history_columns("id,attempts")),
            "ID   ATTEMPTS\n"
            "20   2\n"
            "21   3\n"
            "22   -\n");
}

// 7 SUCCEEDED and 1 CANCELLED is said as such, not as CANCELLED (the array's one state).
TEST(HistoryFormat, AnArrayWhoseTasksEndedDifferentlyIsSummedUpByItsTasks) {
  const Json rows = Json::array({
      {{"id", 30}, {"state", "CANCELLED"}, {"spec", {{"array", "0-7"}}},
       {"array", {{"job_id", 30}, {"task_count", 8}, {"counts", {{"CANCELLED", 1}, {"SUCCEEDED", 7}}}}}},
      {{"id", 40}, {"state", "SUCCEEDED"}, {"spec", {{"array", "0-1"}}},
       {"array", {{"job_id", 40}, {"task_count", 2}, {"counts", {{"SUCCEEDED", 2}}}}}},
  });
  EXPECT_EQ(history_table(rows, parse_history_columns("id,state")),
            "ID         STATE\n"
            "30_[0-7]   1 CANCELLED, 7 SUCCEEDED\n"
            "40_[0-1]   SUCCEEDED\n");
}

// A folded array is named as `jobs` names it, and its row carries the tasks' summed accounting.
TEST(HistoryFormat, AnArrayRowAndItsTasksAreNamedAsTheJobListNamesThem) {
  const Json rows = Json::array({
      {{"id", 12},
       {"state", "SUCCEEDED"},
       {"spec", {{"array", "0-3%2"}}},
       {"array", {{"job_id", 12}, {"task_count", 4}, {"counts", {{"SUCCEEDED", 4}}}}},
       {"accounting",
        {{"elapsed_s", 7200}, {"wait_s", 30}, {"nodes", 1}, {"cores", 2}, {"core_hours", 6.5}, {"goodput", 0.8}}}},
      {{"id", 14},
       {"state", "SUCCEEDED"},
       {"array", {{"job_id", 12}, {"task_id", 2}, {"task_count", 4}}},
       {"accounting",
        {{"elapsed_s", 1800}, {"wait_s", 3630}, {"nodes", 1}, {"cores", 2}, {"core_hours", 1}, {"goodput", 0.8}}}},
  });
  EXPECT_EQ(history_table(rows, parse_history_columns("id,elapsed,wait,corehours")),
            "ID           ELAPSED    WAIT       CORE_HOURS\n"
            "12_[0-3%2]   02:00:00   00:00:30   6.50\n"
            "12_2         00:30:00   01:00:30   1.00\n");
}

TEST(HistoryFormat, CsvHasAHeaderLineAndQuotedCells) {
  EXPECT_EQ(history_csv(kJobs, parse_history_columns("id,name,elapsed")),
            "id,name,elapsed\n7,\"train, big\",01:02:03\n6,never-ran,-\n");
}

TEST(HistoryFormat, AnEmptyFirstCellKeepsItsComma) {
  const Json unnamed = Json::array({{{"id", 5}, {"name", ""}}});
  EXPECT_EQ(history_csv(unnamed, parse_history_columns("name,id")), "name,id\n,5\n");
}

TEST(HistoryFormat, UnknownColumnsNameTheFlagAndTheColumnsThereAre) {
  try {
    parse_history_columns("id,elapsd");
    FAIL();
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.field(), "--format");
    EXPECT_NE(e.message().find("\"elapsd\""), std::string::npos);
    EXPECT_NE(e.message().find("elapsed"), std::string::npos);
  }
}

ShowHistory history_of(const std::vector<std::string>& args) {
  return std::get<ShowHistory>(std::get<Command>(parse_command_line(args).action));
}

TEST(HistoryCommand, AsksForFinishedJobsByDefaultAndPassesTheFilters) {
  EXPECT_EQ(history_of({"history"}).requests({}).at(0).target, "/v1/jobs?state=SUCCEEDED%2CFAILED%2CCANCELLED");
  EXPECT_EQ(history_of({"history", "--since", "1d", "--until", "2026-11-24", "--state", "failed,Cancelled", "--user",
                        "bob", "--limit", "5"})
                .requests({})
                .at(0)
                .target,
            "/v1/jobs?state=FAILED%2CCANCELLED&since=1d&until=2026-11-24&user=bob&limit=5");
}

TEST(HistoryCommand, ArrayListsTheTasksOfOneArray) {
  EXPECT_EQ(history_of({"history", "--array", "12"}).array, 12);
  EXPECT_EQ(history_of({"history", "--array", "12", "--limit", "50"}).requests({}).at(0).target,
            "/v1/jobs?state=SUCCEEDED%2CFAILED%2CCANCELLED&limit=50&array=12");
}

TEST(HistoryCommand, BadValuesNameTheirFlag) {
  const auto rejected = [](const std::vector<std::string>& args) {
    try {
      parse_command_line(args);
    } catch (const UsageError& e) {
      return e.field();
    }
    return std::string("<accepted>");
  };
  EXPECT_EQ(rejected({"history", "--since", "last week"}), "--since");
  EXPECT_EQ(rejected({"history", "--until", "5x"}), "--until");
  EXPECT_EQ(rejected({"history", "--state", "FAILED,DONE"}), "--state");
  EXPECT_EQ(rejected({"history", "--format", "id,nope"}), "--format");
  EXPECT_EQ(rejected({"history", "--limit", "0"}), "--limit");
  EXPECT_EQ(rejected({"history", "--array", "12_3"}), "--array");
}

}  // namespace
}  // namespace trainyard::cli
