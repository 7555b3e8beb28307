// Job arrays and dependencies with real processes.
#include <algorithm>
#include <fstream>
#include <set>
#include <gtest/gtest.h>
#include <sstream>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

Json one_core_job(const std::string& name, const std::string& script) {
  return Json{{"name", name}, {"cores_per_node", 1}, {"command", {{"argv", {"/bin/sh", "-c", script}}}}};
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class Arrays : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster.start_daemon({"--max-array-size", "50"});
    cluster.start_agent("node-a");  // 4 cores each: 8 tasks could run at once without a limit
    cluster.start_agent("node-b");
    cluster.wait_for_nodes(2);
  }
  Json tasks(std::int64_t array) {
    return cluster.api("GET", "/v1/jobs?array=" + std::to_string(array) + "&limit=1000").body["jobs"];
  }
  std::string path(std::int64_t id) { return "/v1/jobs/" + std::to_string(id); }
  Cluster cluster;
};

TEST_F(Arrays, TwentyTasksWithPercentThreeNeverRunMoreThanThreeAtOnce) {
  // Each task logs its start and end with a nanosecond clock; the overlap is computed afterwards,
  // from what the processes themselves saw.
  const std::string spans = cluster.shared_dir() + "/spans";
  const std::string env = cluster.shared_dir() + "/env";
  Json spec = one_core_job("sweep", "echo \"$(date +%s%N) 1\" >> " + spans + "; echo \"$TRAINYARD_ARRAY_JOB_ID " +
                                        "$TRAINYARD_ARRAY_TASK_ID $TRAINYARD_ARRAY_TASK_COUNT\" >> " + env +
                                        "; sleep 0.4; echo \"$(date +%s%N) -1\" >> " + spans);
  spec["array"] = "0-19%3";
  const auto id = cluster.submit(spec);
  ASSERT_TRUE(eventually(
      [&] {
        const Json list = tasks(id);
        return list.size() == 20 &&
               std::all_of(list.begin(), list.end(), [](const Json& t) { return t["state"] == "SUCCEEDED"; });
      },
      90s))
      << tasks(id).dump();

  std::vector<std::pair<std::int64_t, int>> events;
  std::istringstream in(read_file(spans));
  std::int64_t at = 0;
  int delta = 0;
  while (in >> at >> delta) events.emplace_back(at, delta);
  ASSERT_EQ(events.size(), 40u);
  std::sort(events.begin(), events.end());  // at equal times an end (-1) sorts before a start
  int running = 0;
  int most = 0;
  for (const auto& [when, d] : events) most = std::max(most, running += d);
  EXPECT_EQ(most, 3);  // never more than 3, and the limit was used (8 cores were free)

  std::istringstream lines(read_file(env));
  std::set<int> seen;
  std::int64_t array_job = 0;
  int task = 0;
  int count = 0;
  while (lines >> array_job >> task >> count) {
    EXPECT_EQ(array_job, id);
    EXPECT_EQ(count, 20);
    seen.insert(task);
  }
  EXPECT_EQ(seen.size(), 20u);

  // One row in the job list, with its tasks by state; a task is addressed as ID_N.
  const Json list = cluster.api("GET", "/v1/jobs").body["jobs"];
  ASSERT_EQ(list.size(), 1u) << list.dump();
  EXPECT_EQ(list[0]["id"], id);
  EXPECT_EQ(list[0]["array"]["counts"], (Json{{"SUCCEEDED", 20}}));
  const auto fifth = cluster.api("GET", path(id) + "_5");
  ASSERT_EQ(fifth.status, 200) << fifth.body.dump();
  EXPECT_EQ(fifth.body["array"]["task_id"], 5);
  EXPECT_EQ(cluster.api("GET", path(id) + "_20").status, 404);
}

TEST_F(Arrays, AnArrayIsCancelledWholeOrOneTaskAtATime) {
  Json spec = one_core_job("sleepers", "sleep 60");
  spec["array"] = "1,5,9%1";
  const auto id = cluster.submit(spec);
  const auto one = cluster.api("POST", path(id) + "_9/cancel");
  ASSERT_EQ(one.status, 200) << one.body.dump();
  EXPECT_EQ(one.body["id"], id + 2);
  EXPECT_EQ(one.body["state"], "CANCELLED");
  const auto all = cluster.api("POST", path(id) + "/cancel");
  ASSERT_EQ(all.status, 200) << all.body.dump();
  EXPECT_EQ(all.body["array"]["cancelled_tasks"], 2);
  cluster.wait_job_state(id, "CANCELLED", 30s);
  cluster.wait_job_state(id + 1, "CANCELLED", 30s);
}

// A task's logs are its own when asked for as ID_N, and what says it has none names it ID_N too.
TEST_F(Arrays, ATasksLogsAreFoundByItsIdNAndItsMessagesNameIt) {
  Json spec = one_core_job("echoes", "echo task $TRAINYARD_ARRAY_TASK_ID; sleep 60");
  spec["array"] = "3,7%1";
  const auto id = cluster.submit(spec);
  const std::string first = std::to_string(id) + "_3";
  const std::string second = std::to_string(id) + "_7";
  ASSERT_TRUE(eventually(
      [&] {
        const auto logs = cluster.api("GET", "/v1/jobs/" + first + "/logs");
        return logs.status == 200 && logs.body.dump().find("task 3") != std::string::npos;
      },
      30s))
      << cluster.api("GET", "/v1/jobs/" + first + "/logs").body.dump();
  const auto waiting = cluster.api("GET", "/v1/jobs/" + second + "/logs");
  EXPECT_EQ(waiting.status, 404) << waiting.body.dump();
  EXPECT_NE(waiting.body.dump().find("job " + second + " has not started yet"), std::string::npos) << waiting.body.dump();
  // Its events name it too: the first task's id is the array's.
  const Json started = cluster.api("GET", "/v1/events?type=job.started&job=" + std::to_string(id)).body["events"];
  ASSERT_FALSE(started.empty());
  EXPECT_NE(started[0].value("message", "").find("job " + first + " attempt 1 started on"), std::string::npos)
      << started.dump(2);
  const auto no_attempt = cluster.api("GET", "/v1/jobs/" + first + "/logs?attempt=5");
  EXPECT_NE(no_attempt.body.dump().find("job " + first + " has no attempt 5"), std::string::npos) << no_attempt.body.dump();
  // The array's own id shows its first task's logs and says whose they are.
  const auto by_array = cluster.api("GET", path(id) + "/logs");
  EXPECT_EQ(by_array.body["array"], (Json{{"job_id", id}, {"task_id", 3}})) << by_array.body.dump();
  ASSERT_EQ(cluster.api("POST", path(id) + "/cancel").status, 200);
  // A task cancelled while it waited never started: said so, not "has not started yet".
  cluster.wait_job_state(id + 1, "CANCELLED", 30s);
  const auto cancelled = cluster.api("GET", "/v1/jobs/" + second + "/logs");
  EXPECT_NE(cancelled.body.dump().find("job " + second + " was CANCELLED before it started"), std::string::npos)
      << cancelled.body.dump();
}

// An array's own id reads as the whole array (one state, tasks by state) beside its task 0; ID_N
// reads as that task alone.
TEST_F(Arrays, AnArrayReadByItsIdSumsUpItsTasksAndATaskReadAsIdNIsItself) {
  Json spec = one_core_job("sweep", "exit $((TRAINYARD_ARRAY_TASK_ID == 1))");
  spec["array"] = "0-2";
  const auto array = cluster.submit(spec);
  ASSERT_TRUE(eventually(
      [&] {
        const Json all = tasks(array);
        return all.size() == 3 && std::all_of(all.begin(), all.end(), [](const Json& t) {
                 return t["state"] == "SUCCEEDED" || t["state"] == "FAILED";
               });
      },
      30s))
      << tasks(array).dump(2);
  const Json whole = cluster.api("GET", path(array)).body;
  EXPECT_EQ(whole["array_tasks"]["state"], "FAILED") << whole.dump(2);
  EXPECT_EQ(whole["array_tasks"]["counts"], (Json{{"FAILED", 1}, {"SUCCEEDED", 2}})) << whole.dump(2);
  EXPECT_EQ(whole["array"]["task_id"], 0) << "beside its task 0";
  const Json one = cluster.api("GET", path(array) + "_1").body;
  EXPECT_FALSE(one.contains("array_tasks")) << one.dump(2);
  EXPECT_EQ(one["array"]["task_id"], 1);
  EXPECT_EQ(one["state"], "FAILED");
}

// Hold and release name tasks as ID_N, and an array's own id acts on all its tasks: an array
// submitted held is released whole by its id, not only its first task.
TEST_F(Arrays, AHeldArrayIsReleasedByItsIdAndOneTaskIsHeldAndReleasedAsIdN) {
  const std::string ran = cluster.shared_dir() + "/ran";
  Json held = one_core_job("held-sweep", "echo $TRAINYARD_ARRAY_TASK_ID >> " + ran);
  held["array"] = "0-3";
  held["hold"] = true;
  const auto id = cluster.submit(held);
  const auto one = cluster.api("POST", path(id) + "_1/release");
  ASSERT_EQ(one.status, 200) << one.body.dump();
  EXPECT_EQ(one.body["id"], id + 1);
  cluster.wait_job_state(id + 1, "SUCCEEDED", 30s);
  for (const Json& task : tasks(id)) {
    if (task["id"] == id + 1) continue;
    EXPECT_EQ(task["state"], "PENDING") << task.dump();
    EXPECT_TRUE(task.contains("held_by")) << task.dump();
  }
  EXPECT_EQ(read_file(ran), "1\n");

  const auto all = cluster.api("POST", path(id) + "/release");
  ASSERT_EQ(all.status, 200) << all.body.dump();
  EXPECT_EQ(all.body["array"]["released_tasks"], 3);
  for (std::int64_t task = id; task < id + 4; ++task) cluster.wait_job_state(task, "SUCCEEDED", 30s);
  std::istringstream lines(read_file(ran));
  std::multiset<int> indices;
  for (int index = 0; lines >> index;) indices.insert(index);
  EXPECT_EQ(indices, (std::multiset<int>{0, 1, 2, 3})) << "every task ran once";

  // One task of a running array held: the others run, it waits until released.
  Json sweep = one_core_job("one-at-a-time", "sleep 0.3");
  sweep["array"] = "0-2%1";
  const auto other = cluster.submit(sweep);
  const auto hold = cluster.api("POST", path(other) + "_2/hold");
  ASSERT_EQ(hold.status, 200) << hold.body.dump();
  EXPECT_EQ(hold.body["held_by"], "admin");
  cluster.wait_job_state(other + 1, "SUCCEEDED", 30s);
  const auto waiting = cluster.api("GET", path(other) + "_2");
  EXPECT_EQ(waiting.body["state"], "PENDING") << waiting.body.dump();
  EXPECT_EQ(waiting.body["pending_reason"]["code"], "held") << waiting.body.dump();
  ASSERT_EQ(cluster.api("POST", path(other) + "_2/release").status, 200);
  cluster.wait_job_state(other + 2, "SUCCEEDED", 30s);
}

TEST_F(Arrays, TooLargeAnArrayIsRefusedNamingTheLimit) {
  Json spec = one_core_job("huge", "true");
  spec["array"] = "0-50";
  const auto refused = cluster.api("POST", "/v1/jobs", spec.dump());
  ASSERT_EQ(refused.status, 400) << refused.body.dump();
  EXPECT_NE(refused.body.dump().find("--max-array-size"), std::string::npos) << refused.body.dump();
  EXPECT_NE(refused.body.dump().find("\"array\""), std::string::npos) << refused.body.dump();
}

TEST_F(Arrays, AnAfterokChainRunsInOrder) {
  // Each job runs as an account of its own: each writes its own file, when it ran.
  const std::string at = cluster.shared_dir() + "/ran-";
  const auto a = cluster.submit(one_core_job("a", "sleep 1; date +%s%N > " + at + "a"));
  Json b = one_core_job("b", "date +%s%N > " + at + "b");
  b["depends_on"] = {{{"job", a}, {"condition", "afterok"}}};
  const auto b_id = cluster.submit(b);
  Json c = one_core_job("c", "date +%s%N > " + at + "c");
  c["depends_on"] = {{{"job", b_id}}};
  const auto c_id = cluster.submit(c);
  const Json waiting = cluster.api("GET", path(c_id)).body;
  EXPECT_EQ(waiting["pending_reason"]["code"], "dependency") << waiting.dump();
  EXPECT_EQ(waiting["pending_reason"]["message"], "waiting for job " + std::to_string(b_id) + " to succeed (afterok)");
  cluster.wait_job_state(c_id, "SUCCEEDED", 60s);
  const auto ran_at = [&](const std::string& job) { return std::stoll(read_file(at + job)); };
  EXPECT_LT(ran_at("a"), ran_at("b"));
  EXPECT_LT(ran_at("b"), ran_at("c"));
}

TEST_F(Arrays, AfternotokAfterASuccessIsCancelledWithTheReasonAndAnEvent) {
  const auto a = cluster.submit(one_core_job("a", "sleep 0.5"));
  Json b = one_core_job("b", "true");
  b["depends_on"] = {{{"job", a}, {"condition", "afternotok"}}};
  const auto b_id = cluster.submit(b);
  const Json cancelled = cluster.wait_job_state(b_id, "CANCELLED", 30s);
  const std::string reason = "dependency afternotok:" + std::to_string(a) + " can never be met: job " + std::to_string(a) + " SUCCEEDED";
  EXPECT_EQ(cancelled["reason"], reason);
  const Json events = cluster.api("GET", "/v1/events?type=job.cancelled&job=" + std::to_string(b_id)).body["events"];
  ASSERT_EQ(events.size(), 1u) << events.dump();
  EXPECT_EQ(events[0]["details"]["reason"], reason);
}

TEST_F(Arrays, UnknownDependenciesAreRefusedNamingTheField) {
  Json spec = one_core_job("orphan", "true");
  spec["depends_on"] = {{{"job", 999}}};
  const auto refused = cluster.api("POST", "/v1/jobs", spec.dump());
  ASSERT_EQ(refused.status, 400) << refused.body.dump();
  EXPECT_NE(refused.body.dump().find("depends_on[0].job"), std::string::npos) << refused.body.dump();
}

}  // namespace
}  // namespace trainyard::testing
