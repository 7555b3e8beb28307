// Rendering of the daemon's JSON into tables and descriptions, including documents that lack
// optional fields (older or newer daemons) or have fields of unexpected types.
#include <gtest/gtest.h>

#include "cli/command_line.h"
#include "cli/table.h"

namespace trainyard::cli {
namespace {

const TimePoint kNow = *parse_time("2026-11-22T14:00:00.000Z");
const RenderContext kCtx{kNow};

std::string render(const std::vector<std::string>& args, const Replies& replies) {
  return render_text(std::get<Command>(parse_command_line(args).action), replies, kCtx);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(text.substr(start, end - start));
  }
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

// Splits a table line into its cells (cells never contain runs of three spaces).
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::size_t start = 0;
  while (true) {
    const auto gap = line.find("   ", start);
    cells.push_back(line.substr(start, gap - start));
    if (gap == std::string::npos) break;
    start = line.find_first_not_of(' ', gap);
    if (start == std::string::npos) {  // an empty last cell
      cells.emplace_back();
      break;
    }
  }
  return cells;
}

// The value of a "Key:   value" line of a description; "<absent>" when there is no such line.
std::string value_of(const std::string& description, const std::string& key) {
  for (const std::string& line : lines_of(description)) {
    if (line.starts_with(key + ":")) {
      const auto value = line.find_first_not_of(' ', key.size() + 1);
      return value == std::string::npos ? "" : line.substr(value);
    }
  }
  return "<absent>";
}

Json running_job() {
  return {{"id", 42},
          {"name", "train"},
          {"user", "alice"},
          {"share", "vision"},
          {"state", "RUNNING"},
          {"submitted_at", "2026-11-22T13:55:00.000Z"},
          {"started_at", "2026-11-22T13:56:00.000Z"},
          {"attempts", 2},
          {"infra_retries", 1},
          {"reason", "node n3 lost"},
          {"failure_class", "node_lost"},
          {"cancel_requested", false},
          {"excluded_nodes", {"n3"}},
          {"nodes", {"n1", "n2"}},
          {"spec",
           {{"name", "train"}, {"nodes", 2}, {"priority", 5}, {"kind", "command"},
            {"command", {{"argv", {"python", "train.py"}}, {"env", Json::object()}}}}}};
}

Json pending_job() {
  return {{"id", 43},
          {"name", "big"},
          {"user", "bob"},
          {"share", "default"},
          {"state", "PENDING"},
          {"submitted_at", "2026-11-20T14:00:00.000Z"},
          {"attempts", 0},
          {"reason", ""},
          {"spec", {{"nodes", 64}}},
          {"pending_reason", {{"code", "resources"}, {"message", "needs 64 nodes, 4 exist"}}},
          {"queue_position", 3}};
}

TEST(Table, AlignsColumnsWithoutTrailingSpace) {
  Table t({"A", "LONGER"});
  t.add_row({"wide cell", "x"});
  t.add_row({"y"});  // short rows are padded with empty cells
  EXPECT_EQ(t.str(), "A           LONGER\nwide cell   x\ny           \n");
}

TEST(Table, FormatsAgesLikeKubectl) {
  EXPECT_EQ(format_age(Millis(-5000)), "0s");
  EXPECT_EQ(format_age(Millis(59'000)), "59s");
  EXPECT_EQ(format_age(Millis(119'999)), "119s");
  EXPECT_EQ(format_age(std::chrono::minutes(7)), "7m");
  EXPECT_EQ(format_age(std::chrono::hours(3)), "3h");
  EXPECT_EQ(format_age(std::chrono::hours(24 * 12)), "12d");
}

TEST(Table, LenientFieldAccess) {
  const Json j = {{"s", "x"}, {"n", 3}, {"b", true}, {"o", {{"k", 1}}}, {"a", {"p", "q"}}, {"e", Json::array()}};
  EXPECT_EQ(text_of(j, "s"), "x");
  EXPECT_EQ(text_of(j, "n"), "3");
  EXPECT_EQ(text_of(j, "b"), "true");
  EXPECT_EQ(text_of(j, "o"), "-");
  EXPECT_EQ(text_of(j, "missing"), "-");
  EXPECT_EQ(text_of(Json("not an object"), "s"), "-");
  EXPECT_EQ(list_of(j, "a"), "p,q");
  EXPECT_EQ(list_of(j, "e"), "-");
  EXPECT_EQ(labels_of(j, "o"), "k=1");
  EXPECT_EQ(age_of(Json{{"t", "garbage"}}, "t", kNow), "-");
  EXPECT_EQ(truncate("abcdefgh", 6), "abc...");
  EXPECT_EQ(truncate("abc", 6), "abc");
}

TEST(Render, JobsTable) {
  const Json reply = {{"jobs", {running_job(), pending_job()}}, {"next", nullptr}};
  const auto lines = lines_of(render({"jobs"}, {reply}));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(cells_of(lines[0]),
            (std::vector<std::string>{"ID", "NAME", "USER", "SHARE", "STATE", "POS", "NODES", "ATTEMPTS", "AGE", "REASON"}));
  // Every attempt it ran: 2 counted against its retries and 1 retried for a node's fault.
  EXPECT_EQ(cells_of(lines[1]),
            (std::vector<std::string>{"42", "train", "alice", "vision", "RUNNING", "-", "2", "3", "5m", "node n3 lost"}));
  // A queued job shows the scheduler's reason code, as squeue shows "(Resources)".
  EXPECT_EQ(cells_of(lines[2]),
            (std::vector<std::string>{"43", "big", "bob", "default", "PENDING", "3", "64", "0", "2d", "resources"}));
}

TEST(Render, JobsTableSaysWhenTheStoreCouldNotBeRead) {
  const Json reply = {{"jobs", {running_job()}}, {"next", nullptr}, {"store_unreadable", "only live jobs are listed: gone"}};
  const auto lines = lines_of(render({"jobs"}, {reply}));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2], "(the daemon's store could not be read: only live jobs are listed: gone)");
}

TEST(Render, JobsTableFoldsAnArrayAndNamesTasks) {
  Json folded = running_job();
  folded["id"] = 12;
  folded["spec"]["array"] = "0-19%3";
  folded["array"] = {{"job_id", 12}, {"task_count", 20}, {"limit", 3}, {"counts", {{"PENDING", 14}, {"RUNNING", 3}, {"SUCCEEDED", 3}}}};
  Json task = running_job();
  task["id"] = 17;
  task["array"] = {{"job_id", 12}, {"task_id", 5}, {"task_count", 20}};
  const auto lines = lines_of(render({"jobs"}, {Json{{"jobs", {folded, task}}, {"next", nullptr}}}));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(cells_of(lines[1]), (std::vector<std::string>{"12_[0-19%3]", "train", "alice", "vision", "RUNNING", "-", "2", "-",
                                                          "5m", "14 PENDING, 3 RUNNING, 3 SUCCEEDED"}));
  EXPECT_EQ(cells_of(lines[2]).front(), "12_5");
}

TEST(Render, JobsTableSaysWhenMoreJobsMatch) {
  const Json reply = {{"jobs", {pending_job()}}, {"next", "c1.3433.0123456789abcdef"}};
  EXPECT_NE(render({"jobs"}, {reply}).find("add --cursor c1.3433.0123456789abcdef for the next page"), std::string::npos);
  EXPECT_EQ(render({"jobs"}, {Json{{"jobs", {pending_job()}}, {"next", nullptr}}}).find("next page"), std::string::npos);
}

TEST(Render, JobsTableSurvivesMissingFields) {
  const Json reply = {{"jobs", {Json{{"id", 1}}, Json("junk")}}};
  const auto lines = lines_of(render({"jobs"}, {reply}));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(cells_of(lines[1]), (std::vector<std::string>{"1", "-", "-", "-", "-", "-", "-", "-", "-", ""}));
  EXPECT_EQ(lines_of(render({"jobs", "--all"}, {Json::object()})).size(), 1u);  // header only
  // The default lists active jobs only: an empty list says where the others are.
  EXPECT_EQ(lines_of(render({"jobs"}, {Json::object()})).back(), "(no pending or running jobs; --all lists ended ones too)");
}

TEST(Render, AFailedJobSaysWhatHappenedItsClassAndTheSuggestionOnLinesOfTheirOwn) {
  Json job = running_job();
  job["state"] = "FAILED";
  job["reason"] = "exited with code 7; failed";
  job["failure_class"] = "oom";
  job["suggestion"] = "The process ran out of memory; lower the batch size or use more nodes.";
  const std::string out = render({"job", "42"}, {job, Json{{"attempts", Json::array()}}});
  EXPECT_EQ(value_of(out, "Reason"), "exited with code 7; failed");
  EXPECT_EQ(value_of(out, "Failure class"), "oom");
  EXPECT_EQ(value_of(out, "Suggestion"), "The process ran out of memory; lower the batch size or use more nodes.");
  EXPECT_EQ(render({"job", "42"}, {running_job(), Json{{"attempts", Json::array()}}}).find("Suggestion"), std::string::npos)
      << "no suggestion line without a failure";
}

TEST(Render, AFailedAttemptsLastOutputIsQuotedUnderItsRankAndNode) {
  Json job = running_job();
  job["state"] = "FAILED";
  const Json attempts = {{"attempts",
                          {{{"id", 7}, {"number", 1}, {"state", "FAILED"}, {"nodes", {"trn-1", "trn-2"}}},
                           {{"id", 9}, {"number", 2}, {"state", "FAILED"}, {"nodes", {"trn-3", "trn-4"}}, {"output_rank", 1},
                            {"output", "Traceback (most recent call last):\nModuleNotFoundError: No module named 'x'"}}}}};
  const std::string out = render({"job", "42"}, {job, attempts});
  EXPECT_NE(out.find("\nLast output of attempt 2 (rank 1 on trn-4):\n  Traceback (most recent call last):\n"
                     "  ModuleNotFoundError: No module named 'x'\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("Last output of attempt 1"), std::string::npos) << "an attempt with no output quotes nothing";
}

TEST(Render, AnAttemptWhoseCheckpointsFailedSaysHowManyAndTheLastError) {
  const Json attempts = {
      {"attempts",
       {{{"id", 7},
         {"number", 1},
         {"state", "RUNNING"},
         {"nodes", {"trn-1"}},
         {"checkpoint_failures", {{"count", 3}, {"last_error", "open /ckpt/step-20: Permission denied"}}}},
        {{"id", 9},
         {"number", 2},
         {"state", "RUNNING"},
         {"nodes", {"trn-2"}},
         {"checkpoint_failures", {{"count", 1}, {"last_error", "disk full"}}}}}}};
  const std::string out = render({"job", "42"}, {running_job(), attempts});
  EXPECT_NE(
      out.find("\nCheckpoints of attempt 1: 3 writes failed, the last with: open /ckpt/step-20: Permission denied\n"),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("\nCheckpoints of attempt 2: 1 write failed, the last with: disk full\n"), std::string::npos)
      << out;
  EXPECT_EQ(render({"job", "42"}, {running_job(), Json{{"attempts", Json::array()}}}).find("Checkpoints of attempt"),
            std::string::npos);
}

std::string pending_out() { return render({"job", "43"}, {pending_job(), Json{{"attempts", Json::array()}}}); }

TEST(Render, AJobSaysItsLimitsDependenciesAndBatchScriptAsScontrolShowJobDoes) {
  Json job = running_job();
  job["spec"]["timeout_s"] = 5400;
  job["spec"]["memory_mb"] = 2048;
  job["spec"]["depends_on"] = {{{"job", 7}, {"condition", "afterok"}}, {{"job", 9}, {"condition", "afterany"}}};
  job["spec"]["command"]["script"] = "#!/bin/sh\n#SBATCH -N 2\npython train.py\n";
  const std::string out = render({"job", "42"}, {job, Json{{"attempts", Json::array()}}});
  EXPECT_EQ(value_of(out, "Time limit"), "1:30:00 (5400 s)");
  EXPECT_EQ(value_of(out, "Memory"), "2048 MiB per node");
  EXPECT_EQ(value_of(out, "Dependencies"), "afterok:7,afterany:9");
  EXPECT_EQ(value_of(out, "Batch script"), "3 lines, run as the Command");
  const std::string plain = render({"job", "42"}, {running_job(), Json{{"attempts", Json::array()}}});
  EXPECT_EQ(value_of(plain, "Time limit"), "none");
  EXPECT_EQ(value_of(plain, "Memory"), "no limit of its own");
  EXPECT_EQ(value_of(plain, "Dependencies"), "none");
  EXPECT_EQ(value_of(plain, "Batch script"), "<absent>");
}

TEST(Render, JobDescriptionAndAttempts) {
  const Json attempts = {{"attempts",
                          {{{"id", 7}, {"job_id", 42}, {"number", 1}, {"nodes", {"n3", "n2"}}, {"state", "FAILED"},
                            {"exit_code", 137}, {"signal", 9}, {"failure_class", "node_lost"}, {"infrastructure", true}, {"reason", "node n3 lost"},
                            {"started_at", "2026-11-22T13:56:00.000Z"}, {"ended_at", "2026-11-22T13:57:30.000Z"},
                            {"steps_completed", 120}},
                           {{"id", 8}, {"job_id", 42}, {"number", 2}, {"nodes", {"n1", "n2"}}, {"state", "RUNNING"},
                            {"started_at", "2026-11-22T13:58:00.000Z"}}}}};
  const std::string out = render({"job", "42"}, {running_job(), attempts});
  EXPECT_EQ(value_of(out, "State"), "RUNNING");
  EXPECT_EQ(value_of(out, "Nodes"), "2 (n1,n2)");
  EXPECT_EQ(value_of(out, "Command"), "python train.py");
  EXPECT_EQ(value_of(out, "Started"), "2026-11-22T13:56:00.000Z (4m ago)");
  EXPECT_EQ(value_of(out, "Ended"), "-");
  EXPECT_EQ(value_of(out, "Cores per node"), "whole node");
  EXPECT_EQ(value_of(out, "Procs per node"), "1");
  EXPECT_EQ(value_of(out, "Working directory"), "the attempt's own");
  Json launched_from = running_job();
  launched_from["spec"]["command"]["workdir"] = "/home/ana/exp";
  launched_from["spec"]["command"]["procs_per_node"] = 4;
  launched_from["spec"]["command"]["output"] = "slurm-%j.out";
  const std::string from_out = render({"job", "42"}, {launched_from, Json{{"attempts", Json::array()}}});
  EXPECT_EQ(value_of(from_out, "Working directory"), "/home/ana/exp");
  EXPECT_EQ(value_of(from_out, "Output file"), "slurm-%j.out");
  EXPECT_EQ(value_of(from_out, "Error file"), "<absent>") << "stderr goes with stdout";
  EXPECT_EQ(value_of(out, "Output file"), "<absent>");
  EXPECT_EQ(value_of(from_out, "Procs per node"), "4");
  // The job's exit fields are its previous attempt's while attempt 2 runs: said so, not as the job's.
  EXPECT_EQ(value_of(out, "Exit code"), "<absent>");
  EXPECT_EQ(value_of(out, "Failure class"), "<absent>");
  EXPECT_EQ(value_of(out, "Previous attempt"), "node_lost");
  EXPECT_EQ(value_of(pending_out(), "Reason"), "<absent>") << "the pending reason says why it waits";
  EXPECT_EQ(value_of(out, "Pending reason"), "<absent>");
  EXPECT_EQ(value_of(out, "Avoided nodes"), "n3");
  EXPECT_EQ(value_of(out, "Attempts"), "3 (2 counted against its retries, 1 retried for a node's fault)");
  EXPECT_EQ(value_of(pending_out(), "Attempts"), "0");
  Json requeued = running_job();
  requeued["attempts"] = 1;
  requeued["infra_retries"] = 0;
  requeued["requeues"] = 1;
  EXPECT_EQ(value_of(render({"job", "42"}, {requeued, Json{{"attempts", Json::array()}}}), "Attempts"),
            "2 (1 counted against its retries, 1 requeued or preempted)");
  EXPECT_EQ(value_of(pending_out(), "Avoided nodes"), "-");

  const auto lines = lines_of(out.substr(out.find("Attempts:\n") + 10));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(cells_of(lines[1]), (std::vector<std::string>{"1", "7", "FAILED", "n3,n2", "137", "9", "node_lost[infra]", "120",
                                                          "4m", "90s", "node n3 lost"}));
  // Still running: runtime up to now; no exit code yet.
  EXPECT_EQ(cells_of(lines[2]),
            (std::vector<std::string>{"2", "8", "RUNNING", "n1,n2", "-", "-", "-", "-", "2m", "2m", "-"}));
}

TEST(Render, GoodputShowsTenthsOfACoreSecondForAShortJobSoItsLossesAddUp) {
  Json job = running_job();
  job["goodput"] = {
      {"goodput", 0.676},
      {"allocated_core_s", 1.42},
      {"productive_core_s", 0.96},
      {"lost_core_s",
       {{"preflight", 0.21}, {"restart", 0.26}, {"checkpoint", 0}, {"redone", 0}, {"stalled", 0}, {"other", 8.5e-14}}}};
  EXPECT_EQ(value_of(render({"job", "42"}, {job, Json{{"attempts", Json::array()}}}), "Goodput"),
            "67.6% of 1.4 core-s (lost: pre-flight 0.2, restart 0.3, checkpoint 0.0, redone 0.0, stalled 0.0 core-s)");
  job["goodput"] = {
      {"goodput", 0.9788},
      {"allocated_core_s", 14090.2},
      {"productive_core_s", 13791},
      {"lost_core_s",
       {{"preflight", 5}, {"restart", 9}, {"checkpoint", 1}, {"redone", 54}, {"stalled", 231}, {"other", 2.6}}}};
  EXPECT_EQ(value_of(render({"job", "42"}, {job, Json{{"attempts", Json::array()}}}), "Goodput"),
            "97.9% of 14090 core-s (lost: pre-flight 5, restart 9, checkpoint 1, redone 54, stalled 231, other 3 "
            "core-s)");
}

TEST(Render, PendingJobShowsWhyAndWhere) {
  const std::string out = pending_out();
  EXPECT_EQ(value_of(out, "Pending reason"), "resources: needs 64 nodes, 4 exist");
  EXPECT_EQ(value_of(out, "Queue position"), "3");
  EXPECT_EQ(value_of(out, "Nodes"), "64");
  EXPECT_NE(out.find("\nAttempts: none\n"), std::string::npos) << out;
}

// A task answers as a job; an array's own id answers with how many of its tasks changed.
TEST(Render, ControlsOfATaskAndOfAWholeArray) {
  const Json held_task = {{"id", 15}, {"state", "PENDING"}, {"pending_reason", {{"message", "held by its owner"}}}};
  EXPECT_EQ(render({"hold", "12_3"}, {held_task}), "Job 12_3 held (PENDING: held by its owner)\n");
  const Json released = {{"id", 12}, {"state", "PENDING"}, {"array", {{"released_tasks", 3}, {"unchanged_tasks", 1}}}};
  EXPECT_EQ(render({"release", "12"}, {released}), "Array job 12: 3 tasks released, 1 unchanged\n");
  const Json updated = {{"id", 12}, {"state", "PENDING"}, {"array", {{"updated_tasks", 1}, {"unchanged_tasks", 0}}}};
  EXPECT_EQ(render({"update", "12", "--priority", "1"}, {updated}), "Array job 12: 1 task updated, 0 unchanged\n");
  const Json requeued = {{"id", 12}, {"state", "RUNNING"}, {"array", {{"requeued_tasks", 2}, {"unchanged_tasks", 2}}}};
  EXPECT_EQ(render({"requeue", "12"}, {requeued}), "Requeue requested for 2 tasks of array job 12\n");
  EXPECT_EQ(render({"requeue", "12_3"}, {held_task}), "Requeue requested for job 12_3\n");
}

// A task is named ID_N wherever a person reads it; `job ID` of an array shows the whole array
// (its tasks by state) before its task 0.
TEST(Render, AnArrayTaskIsNamedIdNAndTheArrayIsSummedUpBeforeItsTaskZero) {
  Json task = running_job();
  task["id"] = 12;
  task["spec"]["array"] = "0-3";
  task["array"] = {{"job_id", 9}, {"task_id", 3}, {"task_count", 4}};
  const std::string one = render({"job", "9_3"}, {task, Json{{"attempts", Json::array()}}});
  EXPECT_EQ(value_of(one, "ID"), "9_3 (job id 12)") << one;
  EXPECT_EQ(value_of(one, "Array"), "task 3 of array 9 (4 tasks)") << one;
  EXPECT_EQ(one.find("Tasks:"), std::string::npos) << "asked for one task, not the array";

  Json root = task;
  root["id"] = 9;
  root["array"]["task_id"] = 0;
  root["array_tasks"] = {{"state", "FAILED"}, {"counts", {{"FAILED", 1}, {"SUCCEEDED", 2}, {"RUNNING", 1}}}};
  const std::string whole = render({"job", "9"}, {root, Json{{"attempts", Json::array()}}});
  ASSERT_TRUE(whole.starts_with("Array:")) << whole;
  EXPECT_EQ(value_of(whole, "Array"), "9_[0-3]") << whole;
  EXPECT_EQ(value_of(whole, "State"), "FAILED") << "the array's state comes first";
  EXPECT_EQ(value_of(whole, "Tasks"), "4: 1 FAILED, 1 RUNNING, 2 SUCCEEDED") << whole;
  EXPECT_NE(whole.find("\nTask 0 (9_0):\n"), std::string::npos) << whole;
  EXPECT_EQ(value_of(whole.substr(whole.find("Task 0")), "ID"), "9_0 (job id 9)") << whole;
}

TEST(Render, WebhookDeliveriesNameWhatTheyCarriedByType) {
  const Json reply = {{"deliveries",
                       {{{"n", 2}, {"first_event", 40}, {"last_event", 42}, {"state", "delivered"}, {"attempts", 1},
                         {"event_types", {{"job.failed", 1}, {"job.started", 2}}}},
                        {{"n", 1}, {"first_event", 7}, {"last_event", 7}, {"state", "dead"}, {"attempts", 5},
                         {"event_types", nullptr}}}},
                      {"next", nullptr}};
  const std::string out = render({"webhook", "deliveries", "3"}, {reply});
  EXPECT_NE(out.find("job.failed, job.started x2"), std::string::npos) << out;
  EXPECT_NE(out.find("events 7"), std::string::npos) << "past the daemon's budget: the ids\n" << out;
}

// As scontrol show node: what the node is doing and why, in one place.
TEST(Render, ANodeIsDescribedWithItsStateJobsAndLastCheck) {
  const Json node = {{"name", "node-3"},
                     {"state", "UNHEALTHY"},
                     {"state_reason", "failed health check 20: core 3 GEMM mismatch"},
                     {"state_since", "2026-11-22T13:00:00.000Z"},
                     {"connected", true},
                     {"last_heartbeat", "2026-11-22T13:59:58.000Z"},
                     {"cores", 32},
                     {"used_cores", 8},
                     {"free_cores", 0},
                     {"memory_mb", 65536},
                     {"jobs", {"17", "18_2"}},
                     {"attempts", {40, 41}},
                     {"last_check", {{"id", 20}, {"verdict", "UNHEALTHY"}, {"at", "2026-11-22T13:00:00.000Z"}}},
                     {"disks", {{{"role", "work"}, {"free_mb", 900}, {"total_mb", 10000}}}},
                     {"cgroups", "v1"},
                     {"job_network", "netns"}};
  const std::string out = render({"node", "node-3"}, {node});
  EXPECT_NE(out.find("UNHEALTHY, for 60m"), std::string::npos) << out;
  EXPECT_NE(out.find("failed health check 20: core 3 GEMM mismatch"), std::string::npos) << out;
  EXPECT_NE(out.find("8 used of 32, 0 free for new work"), std::string::npos) << out;
  EXPECT_NE(out.find("17,18_2"), std::string::npos) << out;
  EXPECT_NE(out.find("#20 UNHEALTHY 60m"), std::string::npos) << out;
  EXPECT_NE(out.find("work 900 MiB free of 10000"), std::string::npos) << out;
  EXPECT_NE(out.find("netns"), std::string::npos) << out;
  EXPECT_NE(out.find("last heartbeat 2s ago"), std::string::npos) << out;
  // An older daemon's node, with little of that: no crash, dashes.
  const std::string bare = render({"node", "node-3"}, {Json{{"name", "node-3"}, {"state", "HEALTHY"}}});
  EXPECT_NE(bare.find("HEALTHY"), std::string::npos) << bare;
  EXPECT_EQ(bare.find(", for"), std::string::npos) << bare;
  EXPECT_EQ(std::get<Command>(parse_command_line({"node", "a b"}).action), Command{ShowNode{"a b"}});
}

TEST(Render, JobJsonCombinesBothReplies) {
  const Command cmd = ShowJob{{42}};
  const Json attempts = {{"attempts", {{{"id", 7}}}}};
  EXPECT_EQ(render_json(cmd, {running_job(), attempts}), (Json{{"job", running_job()}, {"attempts", {{{"id", 7}}}}}));
  EXPECT_EQ(render_json(ListNodes{}, {Json{{"nodes", Json::array()}}}), (Json{{"nodes", Json::array()}}));
  EXPECT_EQ(render_json(ListShares{}, {Json{{"shares", Json::array()}}}), (Json{{"shares", Json::array()}}));
}

TEST(Render, SharesTableShowsWeightUsageAndFactor) {
  const Json reply = {{"shares",
                       {{{"name", "heavy"}, {"weight", 2.0}, {"usage_core_s", 7200.0}, {"normalized_usage", 0.75},
                         {"fair_share_factor", 0.5946}, {"running_cores", 64}, {"pending_jobs", 3}},
                        {{"name", "light"}, {"weight", 1.0}, {"max_running_cores", 32}, {"usage_core_s", 3600.0},
                         {"normalized_usage", 0.25}, {"fair_share_factor", 0.7071}, {"running_cores", 0},
                         {"pending_jobs", 0}}}}};
  const std::string out = ListShares{}.render({reply}, RenderContext{});
  EXPECT_NE(out.find("FACTOR"), std::string::npos) << out;
  EXPECT_NE(out.find("heavy"), std::string::npos) << out;
  EXPECT_NE(out.find("2.00"), std::string::npos) << out;    // usage in core-hours
  EXPECT_NE(out.find("0.5946"), std::string::npos) << out;
  EXPECT_NE(out.find("32"), std::string::npos) << out;      // the light share's cap
}

TEST(Render, LogsOfOneRankAreTheBareText) {
  const Json reply = {{"job_id", 1}, {"logs", {{{"rank", 0}, {"node", "n1"}, {"text", "hello\nworld"}, {"error", ""}}}}};
  EXPECT_EQ(render({"logs", "1"}, {reply}), "hello\nworld\n");
}

TEST(Render, LogsOfAnArraysOwnIdSayWhichTaskTheyAreAndHowToChooseAnother) {
  const Json reply = {{"job_id", 12},
                      {"array", {{"job_id", 12}, {"task_id", 0}}},
                      {"logs", {{{"rank", 0}, {"node", "n1"}, {"text", "task 0\n"}, {"error", ""}}}}};
  const auto notices = [&](const std::vector<std::string>& args) {
    return notices_of(std::get<Command>(parse_command_line(args).action), {reply});
  };
  EXPECT_EQ(notices({"logs", "12"}).lines,
            std::vector<std::string>{"job 12 is an array: these are task 12_0's logs; 'trainyard logs 12_N' shows task N's"});
  EXPECT_FALSE(notices({"logs", "12"}).failed);
  EXPECT_TRUE(notices({"logs", "12_0"}).lines.empty()) << "a task asked for by ID_N is what was asked for";
}

TEST(Render, LogsOfSeveralRanksGetHeaders) {
  const Json reply = {{"logs",
                       {{{"rank", 0}, {"node", "n1"}, {"text", "a\n"}, {"error", ""}},
                        {{"rank", 1}, {"node", "n2"}, {"text", ""}, {"error", "agent n2 unreachable"}},
                        {{"rank", 2}, {"node", "n3"}, {"text", "c"}}}}};
  EXPECT_EQ(render({"logs", "1"}, {reply}),
            "==> rank 0 (n1) <==\na\n\n"
            "==> rank 1 (n2) <==\n\n"  // why it is empty goes to stderr (see RunnerTest)
            "==> rank 2 (n3) <==\nc\n");
}

TEST(Render, SubmitCancelToken) {
  EXPECT_EQ(render({"submit", "x.json"}, {running_job()}), "Submitted job 42\n");
  EXPECT_EQ(render({"cancel", "42"}, {running_job()}), "Cancel requested for job 42 (RUNNING)\n");
  EXPECT_EQ(render({"cancel", "42"}, {Json{{"state", "CANCELLED"}}}), "Job 42 is CANCELLED\n");
  EXPECT_EQ(render({"cancel", "42", "43"}, {running_job(), Json{{"state", "CANCELLED"}}}),
            "Cancel requested for job 42 (RUNNING)\nJob 43 is CANCELLED\n");
  EXPECT_EQ(render({"token", "create", "bob"}, {Json{{"user", "bob"}, {"token", "ty_abc"}}}), "ty_abc\n");
}

TEST(Render, TokensTable) {
  const Json reply = {{"tokens",
                       {{{"id", "tok_1"}, {"user", "alice"}, {"role", "viewer"}, {"created_at", "2026-11-22T13:00:00.000Z"},
                         {"expires_at", "2026-12-22T13:00:00.000Z"}, {"last_used_at", "2026-11-22T13:59:00.000Z"}},
                        {{"id", "tok_2"}, {"user", "bob\x1b]0;x"}, {"role", "user"}, {"created_at", "2026-11-20T14:00:00.000Z"},
                         {"expires_at", nullptr}, {"last_used_at", nullptr}}}}};
  const auto lines = lines_of(render({"token", "list"}, {reply}));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(cells_of(lines[0]), (std::vector<std::string>{"ID", "USER", "ROLE", "AGE", "EXPIRES", "LAST_USED"}));
  EXPECT_EQ(cells_of(lines[1]),
            (std::vector<std::string>{"tok_1", "alice", "viewer", "60m", "2026-12-22T13:00:00.000Z", "60s"}));
  EXPECT_EQ(cells_of(lines[2]), (std::vector<std::string>{"tok_2", "bob\\x1b]0;x", "user", "2d", "-", "-"}));
  EXPECT_EQ(render({"token", "revoke", "tok_1"}, {Json{{"id", "tok_1"}, {"revoked", true}}}), "Revoked token tok_1\n");
  EXPECT_EQ(render({"token", "rotate-join"}, {Json{{"token", "ty_new"}}}), "ty_new\n");
}

TEST(Render, NodesTable) {
  const Json reply = {{"nodes",
                       {{{"name", "n1"}, {"cores", 32}, {"free_cores", 16}, {"state", "HEALTHY"}, {"state_reason", ""},
                         {"labels", {{"rack", "r1"}, {"zone", "a"}}}, {"last_heartbeat", "2026-11-22T13:59:57.000Z"},
                         {"connected", true}, {"faults", {"core:3=corrupt", "link=drop"}},
                         {"last_check", {{"id", 12}, {"verdict", "HEALTHY"}, {"at", "2026-11-22T13:58:00.000Z"}}}},
                        {{"name", "n2"}, {"cores", 32}, {"state", "DOWN"}, {"state_reason", "no heartbeat"}}}}};
  const auto lines = lines_of(render({"nodes"}, {reply}));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(cells_of(lines[0]),
            (std::vector<std::string>{"NAME", "STATE", "CORES", "FREE", "LABELS", "FAULTS", "LAST_CHECK", "HEARTBEAT", "REASON"}));
  EXPECT_EQ(cells_of(lines[1]), (std::vector<std::string>{"n1", "HEALTHY", "32", "16", "rack=r1,zone=a",
                                                          "core:3=corrupt,link=drop", "#12 HEALTHY 2m", "3s", ""}));
  EXPECT_EQ(cells_of(lines[2]), (std::vector<std::string>{"n2", "DOWN", "32", "-", "-", "-", "-", "-", "no heartbeat"}));
}

TEST(Render, MetricsRowsPerStepOrPerBucket) {
  const Json steps = {{"steps", 2},
                      {"bucket_steps", 1},
                      {"points",
                       {{{"step", 1}, {"first_step", 1}, {"loss", 2.5}, {"grad_norm", 0.75}, {"param_norm", 10.0},
                         {"lr", 0.0003}, {"samples_per_s", 1234.5}, {"non_finite_losses", 0}, {"spikes", 0}},
                        {{"step", 2}, {"first_step", 2}, {"loss", nullptr}, {"grad_norm", 0.5}, {"param_norm", 10.1},
                         {"lr", 0.0003}, {"samples_per_s", 1200}, {"non_finite_losses", 1}, {"spikes", 1}}}},
                      {"spikes", {{{"started_at_step", 2}, {"steps_to_return", nullptr}}}}};
  const auto lines = lines_of(render({"metrics", "7"}, {steps}));
  ASSERT_GE(lines.size(), 5u);
  EXPECT_EQ(cells_of(lines[0]),
            (std::vector<std::string>{"STEP", "LOSS", "GRAD_NORM", "PARAM_NORM", "LR", "SAMPLES/S", "NAN", "SPIKES"}));
  EXPECT_EQ(cells_of(lines[1]), (std::vector<std::string>{"1", "2.5", "0.75", "10", "0.0003", "1234.5", "0", "0"}));
  EXPECT_EQ(cells_of(lines[2])[1], "-") << "a NaN loss shows as missing, counted in NAN";
  EXPECT_EQ(lines.back(), "  step 2: not back to normal yet");

  const Json buckets = {{"steps", 100},
                        {"bucket_steps", 50},
                        {"points",
                         {{{"step", 50}, {"first_step", 1}, {"loss", 2.0}, {"loss_min", 1.5}, {"loss_max", 3.0},
                           {"grad_norm", 1.0}, {"grad_norm_max", 4.0}}}},
                        {"spikes", Json::array()}};
  const auto bucket_lines = lines_of(render({"metrics", "7"}, {buckets}));
  EXPECT_EQ(cells_of(bucket_lines[0])[0], "STEPS");
  EXPECT_EQ(cells_of(bucket_lines[1])[0], "1-50");
  EXPECT_EQ(cells_of(bucket_lines[1])[1], "2 (1.5..3)");
  EXPECT_EQ(cells_of(bucket_lines[1])[2], "1 (max 4)");
  EXPECT_EQ(render({"metrics", "7"}, {Json{{"points", Json::array()}}}), "Job 7 has reported no training steps.\n");
}

TEST(Render, HealthCheckShowsVerdictsAndBusbw) {
  const Json check = {{"id", 5}, {"kind", "on_demand"}, {"state", "FAILED"}, {"nodes", {"a", "b"}},
                      {"suites", {"collective"}}, {"duration_ms", 420},
                      {"verdicts", {{{"node", "a"}, {"state", "HEALTHY"}, {"reason", ""}},
                                    {{"node", "b"}, {"state", "SUSPECT"}, {"reason", "slow"}}}},
                      {"collective_runs",
                       {{{"nodes", {"a", "b"}},
                         {"ranks", {{{"rank", 0}, {"collectives", {{{"kind", "all_reduce"}, {"busbw", 2.5e8}}}}, {"error", ""}}}}}}}};
  const std::string text = render({"health", "show", "5"}, {check});
  EXPECT_NE(text.find("FAILED"), std::string::npos) << text;
  EXPECT_NE(text.find("b      SUSPECT   slow"), std::string::npos) << text;
  EXPECT_NE(text.find("250"), std::string::npos) << "busbw in MB/s:\n" << text;
  EXPECT_EQ(render({"health", "run", "a", "b"}, {Json{{"id", 5}}}), "Started health check 5; see: trainyard health show 5\n");
  EXPECT_EQ(render({"drain", "a"}, {Json{{"name", "a"}, {"state", "DRAINED"}, {"state_reason", "x"}}}), "a is DRAINED: x\n");
}

TEST(Render, CanariesTable) {
  const Json reply = {{"canaries",
                       {{{"id", 9}, {"state", "FAILED"}, {"spec", {{"nodes", 2}}}, {"submitted_at", "2026-11-22T13:59:00.000Z"},
                         {"failure_class", "collective_timeout"}, {"reason", "rank 1 did not answer"}}}}};
  const auto lines = lines_of(render({"canaries"}, {reply}));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(cells_of(lines[0]), (std::vector<std::string>{"ID", "STATE", "NODES", "AGE", "CLASS", "REASON"}));
  EXPECT_EQ(cells_of(lines[1]),
            (std::vector<std::string>{"9", "FAILED", "2", "60s", "collective_timeout", "rank 1 did not answer"}));
}

TEST(Render, HealthChecksTableNamesTheNodesThatFailed) {
  const Json reply = {{"checks",
                       {{{"id", 12}, {"kind", "after_stuck"}, {"state", "FAILED"}, {"nodes", {"a", "b"}},
                         {"created_at", "2026-11-22T13:59:00.000Z"}, {"requested_by", "daemon"},
                         {"verdicts", {{{"node", "a"}, {"state", "HEALTHY"}, {"reason", "ok"}},
                                       {{"node", "b"}, {"state", "UNHEALTHY"}, {"reason", "core 3 corrupt"}}}}},
                        {{"id", 11}, {"kind", "on_demand"}, {"state", "RUNNING"}, {"nodes", {"c"}},
                         {"created_at", "2026-11-22T13:59:30.000Z"}, {"requested_by", "olga"}, {"verdicts", Json::array()}}}},
                      {"next", nullptr}};
  const auto lines = lines_of(render({"health", "list"}, {reply}));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(cells_of(lines[0]), (std::vector<std::string>{"ID", "KIND", "STATE", "NODES", "AGE", "BY", "FAILED"}));
  EXPECT_EQ(cells_of(lines[1]), (std::vector<std::string>{"12", "after_stuck", "FAILED", "a,b", "60s", "daemon",
                                                          "b UNHEALTHY: core 3 corrupt"}));
  EXPECT_EQ(cells_of(lines[2]), (std::vector<std::string>{"11", "on_demand", "RUNNING", "c", "30s", "olga", "-"}));
}

TEST(Render, GoodputTableEndsWithTheTotal) {
  const Json row = {{"goodput", 0.9}, {"allocated_core_s", 100.0}, {"productive_core_s", 90.0},
                    {"lost_core_s", {{"preflight", 1.0}, {"restart", 3.0}, {"checkpoint", 0.0}, {"redone", 0.0}, {"stalled", 6.0}}}};
  Json job = row;
  job["job_id"] = 3;
  job["name"] = "mlp";
  job["state"] = "SUCCEEDED";
  const auto lines = lines_of(render({"goodput"}, {Json{{"jobs", {job}}, {"cluster", row}}}));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(cells_of(lines[1]), (std::vector<std::string>{"3", "mlp", "SUCCEEDED", "90.0%", "100", "90", "1", "3", "0", "0", "6"}));
  EXPECT_EQ(cells_of(lines[2])[0], "all");
  EXPECT_NE(lines[2].find("90.0%"), std::string::npos) << lines[2];
}

TEST(Render, FaultConfirmsWhatWasSent) {
  EXPECT_EQ(render({"fault", "n1", "core:3=corrupt"}, {Json{{"faults", {"core:3=corrupt"}}}}),
            "Injecting into n1: core:3=corrupt\n");
  EXPECT_EQ(render({"fault", "n1", "--clear"}, {Json{{"faults", Json::array()}}}), "Clearing the faults of n1\n");
}

}  // namespace
}  // namespace trainyard::cli

namespace trainyard::cli {
namespace {

TEST(Render, AJobWithoutCoreTimeShowsNoGoodputFigureButWhy) {
  Json job = pending_job();
  job["goodput"] = {{"goodput", nullptr},
                    {"goodput_note", "n/a: no core-time allocated yet"},
                    {"allocated_core_s", 0.0},
                    {"productive_core_s", 0.0},
                    {"lost_core_s", Json::object()}};
  const std::string out = render({"job", "43"}, {job, Json{{"attempts", Json::array()}}});
  EXPECT_NE(out.find("n/a: no core-time allocated yet"), std::string::npos) << out;
  EXPECT_EQ(out.find("% of"), std::string::npos) << out;
}

}  // namespace
}  // namespace trainyard::cli
