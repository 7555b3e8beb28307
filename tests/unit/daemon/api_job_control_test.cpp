// Hold, release, requeue and PATCH through the API: a task named ID_N,
// a whole array named by its own id, the owner's limits on a PATCH, and an array as one history row.
#include <gtest/gtest.h>

#include <set>

#include "tests/unit/daemon/api_fixture.h"

namespace trainyard::daemon::testing {
namespace {

// An array of one-core command tasks, 0..n-1.
std::string array_body(int n, bool hold) {
  Json body = {{"name", "sweep"},
               {"nodes", 1},
               {"cores_per_node", 1},
               {"priority", 10},
               {"wait_for_capacity", true},
               {"array", "0-" + std::to_string(n - 1)},
               {"command", {{"argv", {"/bin/true"}}}}};
  if (hold) body["hold"] = true;
  return body.dump();
}

std::set<JobId> launched_jobs(const Cluster& c) {
  std::set<JobId> jobs;
  for (const auto& [node, list] : c.launches()) {
    for (const LaunchMsg& l : list) jobs.insert(l.job_id);
  }
  return jobs;
}

class ApiJobControl : public ApiTest {
 protected:
  JobId submit_array(int n, bool hold = false) {
    const Reply r = call("POST", "/v1/jobs", kAlice, array_body(n, hold));
    EXPECT_EQ(r.status, 201) << r.body.dump();
    return r.body.value("id", JobId{0});
  }
  Reply post(JobId array, const std::string& suffix, const std::string& token = kAlice) {
    return call("POST", "/v1/jobs/" + std::to_string(array) + suffix, token);
  }
  Hold held(JobId id) { return cluster.jobs.active_job(id)->held; }
};

// The bug the audit found: every task of an array submitted held, but release of the array's id
// released only its first task.
TEST_F(ApiJobControl, ReleasingAHeldArrayByItsIdReleasesEveryTask) {
  cluster.connect("n1", 8);
  const JobId array = submit_array(4, true);
  EXPECT_TRUE(cluster.launches().empty());
  const Reply r = post(array, "/release");
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["array"]["released_tasks"], 4);
  EXPECT_EQ(r.body["array"]["unchanged_tasks"], 0);
  EXPECT_EQ(launched_jobs(cluster), (std::set<JobId>{array, array + 1, array + 2, array + 3}));
}

TEST_F(ApiJobControl, OneTaskIsHeldAndReleasedAsIdUnderscoreN) {
  const JobId array = submit_array(4);  // no nodes: every task waits
  const Reply held_one = post(array, "_2/hold");
  ASSERT_EQ(held_one.status, 200) << held_one.body.dump();
  EXPECT_EQ(held_one.body["id"], array + 2);
  EXPECT_EQ(held_one.body["array"]["task_id"], 2);
  EXPECT_EQ(held_one.body["held_by"], "owner");
  EXPECT_EQ(held(array + 2), Hold::owner);
  for (JobId other : {array, array + 1, array + 3}) EXPECT_EQ(held(other), Hold::none) << other;

  EXPECT_EQ(post(array, "_2/release").status, 200);
  EXPECT_EQ(held(array + 2), Hold::none);
  const Reply again = post(array, "_2/release");
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(again.error_message(), "job " + std::to_string(array) + "_2 is not held");
  EXPECT_EQ(post(array, "_9/hold").status, 404) << "no task 9";
}

TEST_F(ApiJobControl, HoldingAWholeArrayHoldsItsPendingTasksAndSaysHowMany) {
  const JobId array = submit_array(3);
  EXPECT_EQ(post(array, "_1/hold").status, 200);
  const Reply r = post(array, "/hold");
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["id"], array);
  EXPECT_EQ(r.body["array"]["held_tasks"], 3) << "holding a held task again is not a refusal";
  for (JobId task = array; task < array + 3; ++task) EXPECT_EQ(held(task), Hold::owner) << task;

  // An owner cannot release an admin's hold: the tasks the admin held stay held, the others go.
  EXPECT_EQ(post(array, "_0/hold", kAdmin).status, 200);
  const Reply released = post(array, "/release");
  ASSERT_EQ(released.status, 200) << released.body.dump();
  EXPECT_EQ(released.body["array"]["released_tasks"], 2);
  EXPECT_EQ(released.body["array"]["unchanged_tasks"], 1);
  EXPECT_EQ(held(array), Hold::admin);
  const Reply none_left = post(array, "/release");
  EXPECT_EQ(none_left.status, 403) << "the only task still held is the admin's";
}

TEST_F(ApiJobControl, RequeueOfAWholeArrayStopsItsRunningTasksAndLeavesThePendingOnes) {
  cluster.connect("n1", 2);
  const JobId array = submit_array(4);
  ASSERT_EQ(launched_jobs(cluster).size(), 2u);
  EXPECT_EQ(post(array, "/hold").body["array"]["held_tasks"], 2) << "only the two pending tasks can be held";
  EXPECT_EQ(post(array, "/release").status, 200);

  const Reply r = post(array, "/requeue");
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["array"]["requeued_tasks"], 2);
  EXPECT_EQ(r.body["array"]["unchanged_tasks"], 2);
  for (JobId task : launched_jobs(cluster)) {
    EXPECT_EQ(cluster.jobs.active_job(task)->stopping_to, StopIntent::requeue) << task;
  }
}

TEST_F(ApiJobControl, PatchOfAWholeArrayChangesItsPendingTasks) {
  cluster.connect("n1", 1);
  const JobId array = submit_array(3);
  ASSERT_EQ(launched_jobs(cluster), std::set<JobId>{array});
  const Reply r = call("PATCH", "/v1/jobs/" + std::to_string(array), kAlice, R"({"priority":5})");
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["array"]["updated_tasks"], 2);
  EXPECT_EQ(r.body["array"]["unchanged_tasks"], 1) << "the running task";
  EXPECT_EQ(cluster.jobs.active_job(array + 1)->spec.priority, 5);
  EXPECT_EQ(cluster.jobs.active_job(array + 2)->spec.priority, 5);

  const Reply one = call("PATCH", "/v1/jobs/" + std::to_string(array) + "_2", kAlice, R"({"priority":3})");
  ASSERT_EQ(one.status, 200) << one.body.dump();
  EXPECT_EQ(cluster.jobs.active_job(array + 1)->spec.priority, 5);
  EXPECT_EQ(cluster.jobs.active_job(array + 2)->spec.priority, 3);

  const Reply raised = call("PATCH", "/v1/jobs/" + std::to_string(array), kAlice, R"({"priority":10})");
  EXPECT_EQ(raised.status, 400) << raised.body.dump();
  EXPECT_EQ(raised.error_field(), "priority");
  EXPECT_EQ(cluster.jobs.active_job(array + 1)->spec.priority, 5) << "a refused PATCH changes no task";
}

// PATCH's owner rule (an owner only lowers the priority and, as scontrol, only shortens the
// time limit; an admin changes anything).
class ApiPatchRules : public ApiTest {
 protected:
  JobId submit_pending() {
    const Reply r = call("POST", "/v1/jobs", kAlice,
                         R"({"name":"train","nodes":1,"priority":5,"timeout_s":600,"wait_for_capacity":true,
                             "command":{"argv":["/bin/true"]}})");
    EXPECT_EQ(r.status, 201) << r.body.dump();
    return r.body.value("id", JobId{0});
  }
  Reply patch(JobId id, const std::string& token, const std::string& body) {
    return call("PATCH", "/v1/jobs/" + std::to_string(id), token, body);
  }
  const JobSpec& spec(JobId id) { return cluster.jobs.active_job(id)->spec; }
};

TEST_F(ApiPatchRules, AnOwnerRaisingThePriorityIs400NamingIt) {
  const JobId id = submit_pending();
  const Reply r = patch(id, kAlice, R"({"priority":6})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.error_field(), "priority");
  EXPECT_EQ(spec(id).priority, 5);
}

TEST_F(ApiPatchRules, AnOwnerLowersThePriority) {
  const JobId id = submit_pending();
  const Reply r = patch(id, kAlice, R"({"priority":4})");
  EXPECT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["spec"]["priority"], 4);
  EXPECT_EQ(spec(id).priority, 4);
}

TEST_F(ApiPatchRules, AnAdminRaisesThePriority) {
  const JobId id = submit_pending();
  const Reply r = patch(id, kAdmin, R"({"priority":50,"timeout_s":3600})");
  EXPECT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(spec(id).priority, 50);
  EXPECT_EQ(spec(id).timeout_s, 3600);
}

TEST_F(ApiPatchRules, AnOwnerLengtheningTheTimeLimitIs400NamingItAndShorteningIsFine) {
  const JobId id = submit_pending();
  const Reply longer = patch(id, kAlice, R"({"timeout_s":601})");
  EXPECT_EQ(longer.status, 400);
  EXPECT_EQ(longer.error_field(), "timeout_s");
  EXPECT_EQ(spec(id).timeout_s, 600);
  EXPECT_EQ(patch(id, kAlice, R"({"timeout_s":300})").status, 200);
  EXPECT_EQ(spec(id).timeout_s, 300);
}

TEST_F(ApiPatchRules, AnOwnerCannotRemoveATimeLimitAnAdminSet) {
  const JobId id = submit_pending();
  ASSERT_EQ(patch(id, kAdmin, R"({"timeout_s":30})").status, 200);
  const Reply removed = patch(id, kAlice, R"({"timeout_s":null})");
  EXPECT_EQ(removed.status, 400) << removed.body.dump();
  EXPECT_EQ(removed.error_field(), "timeout_s");
  EXPECT_EQ(spec(id).timeout_s, 30);
  EXPECT_EQ(patch(id, kAdmin, R"({"timeout_s":null})").status, 200) << "an admin may remove it";
  EXPECT_FALSE(spec(id).timeout_s.has_value());
}

TEST_F(ApiPatchRules, UsersSubmitAtMostTheCeilingPriorityAndAdminsAnything) {
  const auto submit = [&](const std::string& token, int priority) {
    Json body = parse_json_text(kJobBody);
    body["priority"] = priority;
    return call("POST", "/v1/jobs", token, body.dump());
  };
  const Reply over = submit(kAlice, kUserPriorityCeiling + 1);
  EXPECT_EQ(over.status, 400) << over.body.dump();
  EXPECT_EQ(over.error_field(), "priority");
  EXPECT_NE(over.error_message().find("--max-user-priority"), std::string::npos) << over.error_message();
  EXPECT_EQ(submit(kAlice, kUserPriorityCeiling).status, 201);
  EXPECT_EQ(submit(kAdmin, 9999).status, 201);
}

TEST_F(ApiPatchRules, AnotherUsersJobAnswersAsAMissingOne) {
  const JobId id = submit_pending();
  const Reply by_bob = patch(id, kBob, R"({"priority":1})");
  const Reply missing = patch(id + 100, kBob, R"({"priority":1})");
  EXPECT_EQ(by_bob.status, 404);
  EXPECT_EQ(by_bob.error_code(), missing.error_code());
  EXPECT_EQ(by_bob.error_message(), "job " + std::to_string(id) + " does not exist");
  EXPECT_EQ(spec(id).priority, 5);
}

// History: a folded array's row sums its tasks' use; ?array= lists each task.
TEST_F(ApiJobControl, AnArrayRowInTheHistoryCarriesItsTasksSummedAccounting) {
  const JobId array = submit_array(3);
  cluster.advance(Millis(10'000));  // waits 10 s for a node
  cluster.connect("n1", 8);
  std::map<JobId, AttemptId> attempt_of;
  for (const auto& [node, list] : cluster.launches()) {
    for (const LaunchMsg& l : list) attempt_of[l.job_id] = l.attempt_id;
  }
  ASSERT_EQ(attempt_of.size(), 3u);
  for (const auto& [job, attempt] : attempt_of) cluster.started("n1", attempt);
  // Task 0 runs 100 s, task 2 200 s, task 1 300 s.
  cluster.advance(Millis(100'000));
  cluster.exited("n1", attempt_of.at(array), 0);
  cluster.advance(Millis(100'000));
  cluster.exited("n1", attempt_of.at(array + 2), 0);
  cluster.advance(Millis(100'000));
  cluster.exited("n1", attempt_of.at(array + 1), 1);

  const Reply folded = call("GET", "/v1/jobs", kAlice);
  ASSERT_EQ(folded.status, 200) << folded.body.dump();
  ASSERT_EQ(folded.body["jobs"].size(), 1u);
  const Json& row = folded.body["jobs"][0];
  EXPECT_EQ(row["id"], array);
  EXPECT_EQ(row["state"], "FAILED");
  const Json& a = row["accounting"];
  EXPECT_DOUBLE_EQ(a["elapsed_s"].get<double>(), 300) << "first start to last end";
  EXPECT_DOUBLE_EQ(a["wait_s"].get<double>(), 10) << "submit to first start";
  EXPECT_DOUBLE_EQ(a["core_hours"].get<double>(), 600.0 / 3600) << "the tasks' core-seconds summed";
  EXPECT_EQ(a["cores"], 1);

  const Reply tasks = call("GET", "/v1/jobs?array=" + std::to_string(array), kAlice);
  ASSERT_EQ(tasks.body["jobs"].size(), 3u);
  double summed = 0;
  for (const Json& task : tasks.body["jobs"]) summed += task["accounting"]["core_hours"].get<double>();
  EXPECT_DOUBLE_EQ(summed, a["core_hours"].get<double>());
}

}  // namespace
}  // namespace trainyard::daemon::testing
