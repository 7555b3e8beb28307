// Parsing of the whole command line into typed commands: every command, the global flags in both
// positions, help at every level, and each kind of mistake naming the flag at fault.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/unit/cli/command_line_helpers.h"

namespace trainyard::cli {
namespace {

using Args = std::vector<std::string>;

Command command_of(const Args& args) { return std::get<Command>(parse_command_line(args).action); }

template <class T>
T parsed(const Args& args) {
  return std::get<T>(command_of(args));
}

// The field named by the UsageError that parsing `args` throws.
using testing::rejected;

std::string help_of(const Args& args) { return std::get<ShowHelp>(parse_command_line(args).action).text; }

TEST(CommandLine, VersionNamesTheBuildAnywhere) {
  const std::string expected = "trainyard " TRAINYARD_VERSION " (commit ";
  EXPECT_EQ(help_of({"--version"}).rfind(expected, 0), 0u) << help_of({"--version"});
  EXPECT_EQ(help_of({"--server", "http://x", "--version"}).rfind(expected, 0), 0u);
  EXPECT_EQ(help_of({"jobs", "list", "--version"}).rfind(expected, 0), 0u);
}

TEST(CommandLine, SubmitFromFileAndStdin) {
  EXPECT_EQ(parsed<SubmitJob>({"submit", "job.json"}).spec_file, "job.json");
  EXPECT_EQ(parsed<SubmitJob>({"submit", "-"}).spec_file, "-");
}

TEST(CommandLine, QuickSubmitBuildsACommandSpec) {
  const auto submit = parsed<SubmitJob>({"submit", "--name", "train", "--nodes", "2", "--share", "vision",
                                         "--priority", "7", "--cores-per-node", "4", "--retries", "2",
                                         "--timeout", "600", "--mem", "2G", "--env", "A=1", "--env=B=x=y", "--", "python",
                                         "train.py", "--lr", "0.1"});
  EXPECT_TRUE(submit.spec_file.empty());
  const Json expected = {{"name", "train"},
                         {"kind", "command"},
                         {"command", {{"argv", {"python", "train.py", "--lr", "0.1"}},
                                      {"env", {{"A", "1"}, {"B", "x=y"}}},
                                      {"workdir", std::filesystem::current_path().string()}}},
                         {"nodes", 2},
                         {"share", "vision"},
                         {"priority", 7},
                         {"cores_per_node", 4},
                         {"retry", {{"attempts", 3}}},
                         {"timeout_s", 600},
                         {"memory_mb", 2048}};
  EXPECT_EQ(submit.spec, expected);
}

// Fingers trained on sbatch and squeue: their short flags mean what the long ones do.
TEST(CommandLine, SlurmsShortFlagsMeanTheLongOnes) {
  EXPECT_EQ(parsed<SubmitJob>({"submit", "-J", "train", "-t", "30", "-d", "afterok:5", "-a", "0-3", "--", "x"}),
            parsed<SubmitJob>({"submit", "--name", "train", "--time", "30", "--depend", "afterok:5", "--array", "0-3", "--", "x"}));
  EXPECT_EQ(parsed<SubmitJob>({"submit", "--job-name", "train", "--", "x"}).spec["name"], "train");
  EXPECT_EQ(parsed<ListJobs>({"jobs", "-u", "alice", "-t", "RUNNING,pending"}),
            parsed<ListJobs>({"jobs", "--user", "alice", "--state", "RUNNING,pending"}));
  EXPECT_EQ(rejected({"submit", "-t", "soon", "--", "x"}), "--time") << "a short flag's mistake names the flag";
}

// As sbatch: the job starts where it was submitted, or in --chdir (-D), relative to there.
TEST(CommandLine, SubmitStartsTheJobWhereItWasSubmittedOrInChdir) {
  const std::string here = std::filesystem::current_path().string();
  EXPECT_EQ(parsed<SubmitJob>({"submit", "--", "x"}).spec["command"]["workdir"], here);
  EXPECT_EQ(parsed<SubmitJob>({"submit", "--chdir", "/data/exp", "--", "x"}).spec["command"]["workdir"], "/data/exp");
  EXPECT_EQ(parsed<SubmitJob>({"submit", "-D", "runs/../exp", "--", "x"}).spec["command"]["workdir"],
            (std::filesystem::path(here) / "exp").string());
  const auto file = parsed<SubmitJob>({"submit", "job.json", "--chdir", "/data/exp"});
  EXPECT_EQ(file.workdir, "/data/exp");
  const auto requests = file.requests([](const std::string&) { return R"({"command": {"argv": ["x"]}})"; });
  EXPECT_EQ((*requests.at(0).body)["command"]["workdir"], "/data/exp");
  EXPECT_FALSE(parsed<SubmitJob>({"submit", "job.json"}).workdir);
  EXPECT_EQ(rejected({"submit", "--chdir", "", "--", "x"}), "--chdir");
}

TEST(CommandLine, QuickSubmitCanWaitForCapacity) {
  EXPECT_EQ(parsed<SubmitJob>({"submit", "--nodes", "64", "--wait-for-capacity", "--", "x"}).spec["wait_for_capacity"], true);
  EXPECT_EQ(parsed<SubmitJob>({"submit", "--nodes", "2", "--replace-stragglers", "--", "x"}).spec["replace_stragglers"], true);
  EXPECT_FALSE(parsed<SubmitJob>({"submit", "--", "x"}).spec.contains("replace_stragglers"));
  EXPECT_FALSE(parsed<SubmitJob>({"submit", "--", "x"}).spec.contains("wait_for_capacity"));
}

TEST(CommandLine, QuickSubmitNamesTheJobAfterTheProgram) {
  const auto submit = parsed<SubmitJob>({"submit", "--", "/usr/bin/python3", "-c", "pass"});
  EXPECT_EQ(submit.spec["name"], "python3");
  EXPECT_FALSE(submit.spec.contains("nodes"));
}

TEST(CommandLine, QuickSubmitMistakesNameTheFlag) {
  EXPECT_EQ(rejected({"submit", "--nodes", "0", "--", "x"}), "--nodes");      // spec range, via proto
  EXPECT_EQ(rejected({"submit", "--nodes", "two", "--", "x"}), "--nodes");    // not an integer
  EXPECT_EQ(rejected({"submit", "--priority", "10000", "--", "x"}), "--priority");
  EXPECT_EQ(rejected({"submit", "--share", "bad share", "--", "x"}), "--share");
  EXPECT_EQ(rejected({"submit", "--cores-per-node", "0", "--", "x"}), "--cores-per-node");
  EXPECT_EQ(rejected({"submit", "--timeout", "0", "--", "x"}), "--timeout");
  EXPECT_EQ(rejected({"submit", "--mem", "0", "--", "x"}), "--mem");
  EXPECT_EQ(rejected({"submit", "--retries", "10", "--", "x"}), "--retries");
  EXPECT_EQ(rejected({"submit", "--env", "NOVALUE", "--", "x"}), "--env");
  EXPECT_EQ(rejected({"submit", "--env", "=v", "--", "x"}), "--env");
  EXPECT_EQ(rejected({"submit", "--name", "", "--", "x"}), "--name");
  EXPECT_EQ(rejected({"submit", "--name", "x", "--"}), "PROGRAM");
  EXPECT_EQ(rejected({"submit", "--name"}), "--name");  // value missing
  EXPECT_EQ(rejected({"submit", "--nodes", "1", "--nodes", "2", "--", "x"}), "--nodes");
}

TEST(CommandLine, MetricsAndFaultMistakesNameTheArgument) {
  EXPECT_EQ(rejected({"metrics"}), "ID");
  EXPECT_EQ(rejected({"metrics", "x"}), "ID");
  EXPECT_EQ(rejected({"metrics", "5", "--max-points", "0"}), "--max-points");
  EXPECT_EQ(rejected({"fault"}), "NODE");
  EXPECT_EQ(rejected({"fault", "n1"}), "SPEC");
  EXPECT_EQ(rejected({"fault", "n1", "link=drop", "--clear"}), "--clear");
  EXPECT_EQ(rejected({"health", "run"}), "NODE");
  EXPECT_EQ(rejected({"health", "run", "a", "--suite", "gpu"}), "--suite");
  EXPECT_EQ(rejected({"health", "show", "x"}), "ID");
  EXPECT_EQ(rejected({"drain"}), "NODE");
  EXPECT_EQ(rejected({"drain", "a", "--reason", ""}), "--reason");
}

TEST(CommandLine, SubmitNeedsASource) {
  EXPECT_EQ(rejected({"submit"}), "FILE");
  // What follows a file is its arguments: a batch script's, known once the file is read (requests).
  const auto file = parsed<SubmitJob>({"submit", "train.sbatch", "data", "--", "--lr", "0.1"});
  EXPECT_EQ(file.spec_file, "train.sbatch");
  EXPECT_EQ(file.script_args, (std::vector<std::string>{"data", "--lr", "0.1"}));
}

TEST(CommandLine, SubmitTakesAnArrayAndDependenciesInBothForms) {
  const auto quick = parsed<SubmitJob>({"submit", "--array", "0-19%3", "--depend", "afterok:4:5,afternotok:6", "--", "x"});
  EXPECT_EQ(quick.spec["array"], "0-19%3");
  EXPECT_EQ(quick.spec["depends_on"], Json::parse(R"([{"job": 4, "condition": "afterok"}, {"job": 5, "condition": "afterok"},
                                                      {"job": 6, "condition": "afternotok"}])"));
  const auto file = parsed<SubmitJob>({"submit", "job.json", "--array", "1,5,9"});
  EXPECT_EQ(file.array_and_dependencies, (Json{{"array", "1,5,9"}}));
  EXPECT_EQ(rejected({"submit", "--array", "5-1", "--", "x"}), "--array");
  EXPECT_EQ(rejected({"submit", "job.json", "--depend", "after:1"}), "--depend");
}

TEST(CommandLine, Jobs) {
  // Like squeue: the jobs not yet ended, unless --all or --state says otherwise.
  EXPECT_EQ(parsed<ListJobs>({"jobs"}).states, (std::vector{JobState::pending, JobState::starting, JobState::running}));
  EXPECT_EQ(parsed<ListJobs>({"jobs", "--all"}), ListJobs{});
  EXPECT_TRUE(parsed<ListJobs>({"jobs", "--array", "4"}).states.empty()) << "an array's tasks are listed in every state";
  EXPECT_EQ(parsed<ListJobs>({"jobs", "--state", "PENDING,running,pending"}).states,
            (std::vector{JobState::pending, JobState::running}));
  EXPECT_EQ(rejected({"jobs", "--state", "PENDING,DONE"}), "--state");
  EXPECT_EQ(rejected({"jobs", "--state", "PENDING", "--all"}), "--all");
  const auto list = parsed<ListJobs>({"jobs", "--state", "running", "--share", "s", "--user", "bob", "--limit", "5"});
  EXPECT_EQ(list.states, std::vector{JobState::running});
  EXPECT_EQ(list.share, "s");
  EXPECT_EQ(list.user, "bob");
  EXPECT_EQ(list.limit, 5);
  EXPECT_EQ(rejected({"jobs", "--state", "DONE"}), "--state");
  EXPECT_EQ(rejected({"jobs", "--limit", "0"}), "--limit");
  EXPECT_EQ(rejected({"jobs", "--limit", "ten"}), "--limit");
  EXPECT_EQ(parsed<ListJobs>({"jobs", "--before", "17"}).before, 17);
  EXPECT_EQ(rejected({"jobs", "--before", "0"}), "--before");
  EXPECT_EQ(rejected({"jobs", "--rank", "1"}), "--rank");  // another command's flag
  EXPECT_EQ(rejected({"jobs", "extra"}), "extra");
}

TEST(CommandLine, SubmitTakesSbatchSpellings) {
  const auto quick = parsed<SubmitJob>({"submit", "-N", "2", "--time", "90", "--dependency", "afterok:4", "--", "x"});
  EXPECT_EQ(quick.spec["nodes"], 2);
  EXPECT_EQ(quick.spec["timeout_s"], 5400) << "sbatch's bare --time counts minutes";
  EXPECT_EQ(quick.spec["depends_on"], Json::parse(R"([{"job": 4, "condition": "afterok"}])"));
  EXPECT_EQ(parsed<SubmitJob>({"submit", "--time", "2-00:00:00", "--", "x"}).spec["timeout_s"], 2 * 86400);
  EXPECT_EQ(parsed<SubmitJob>({"submit", "--timeout", "1h", "--", "x"}).spec["timeout_s"], 3600);
  EXPECT_FALSE(parsed<SubmitJob>({"submit", "--time", "unlimited", "--", "x"}).spec.contains("timeout_s"));
  EXPECT_EQ(rejected({"submit", "--time", "90", "--timeout", "60", "--", "x"}), "--time");
  EXPECT_EQ(rejected({"submit", "--time", "45x", "--", "x"}), "--time");
  EXPECT_EQ(rejected({"submit", "--time", "31-00:00:00", "--", "x"}), "--time") << "past the spec's maximum";
  EXPECT_EQ(rejected({"submit", "-N", "1", "--nodes", "2", "--", "x"}), "--nodes");
  EXPECT_NE(help_of({"submit", "--help"}).find("--nodes, -N K"), std::string::npos) << help_of({"submit", "--help"});
}

TEST(CommandLine, WaitTakesJobsAConditionAndATimeout) {
  const auto wait = parsed<WaitJobs>({"wait", "42", "18_3", "--for", "succeeded", "--timeout", "10m"});
  EXPECT_EQ(wait.jobs, (std::vector<JobTarget>{{42}, {18, 3}}));
  EXPECT_TRUE(wait.until_succeeded);
  EXPECT_EQ(wait.timeout_s, 600);
  EXPECT_FALSE(parsed<WaitJobs>({"wait", "1"}).until_succeeded);
  EXPECT_EQ(rejected({"wait"}), "ID");
  EXPECT_EQ(rejected({"wait", "1", "--for", "done"}), "--for");
  EXPECT_EQ(rejected({"wait", "1", "--timeout", "soon"}), "--timeout");
}

TEST(CommandLine, NodesFilterByState) {
  EXPECT_EQ(parsed<ListNodes>({"nodes", "--state", "down,Drained"}).states, (std::vector{NodeState::down, NodeState::drained}));
  EXPECT_EQ(rejected({"nodes", "--state", "IDLE"}), "--state");
}

TEST(CommandLine, JobTakesOneIdAndCancelOneOrMore) {
  EXPECT_EQ(parsed<ShowJob>({"job", "42"}).job, (JobTarget{42}));
  EXPECT_EQ(parsed<CancelJob>({"cancel", "7"}).jobs, (std::vector{JobTarget{7}}));
  EXPECT_EQ(parsed<CancelJob>({"cancel", "7_3"}).jobs, (std::vector{JobTarget{7, 3}}));
  EXPECT_EQ(parsed<CancelJob>({"cancel", "23", "36_1"}).jobs, (std::vector{JobTarget{23}, JobTarget{36, 1}})) << "as scancel";
  EXPECT_EQ(rejected({"cancel"}), "ID");
  EXPECT_EQ(rejected({"cancel", "23", "x"}), "ID");
  EXPECT_EQ(rejected({"cancel", "7_x"}), "ID");
  EXPECT_EQ(parsed<ListJobs>({"jobs", "--array", "12"}).array, 12);
  EXPECT_EQ(rejected({"job"}), "ID");
  EXPECT_EQ(rejected({"job", "0"}), "ID");
  EXPECT_EQ(rejected({"job", "4x"}), "ID");
  EXPECT_EQ(rejected({"cancel", "--force", "1"}), "--force");
}

TEST(CommandLine, UpdateNeedsSomethingToChange) {
  EXPECT_EQ(parsed<UpdateJob>({"update", "7", "--timeout-s", "60"}).changes, Json({{"timeout_s", 60}}));
  EXPECT_EQ(parsed<UpdateJob>({"update", "7", "--timeout", "60"}).changes, Json({{"timeout_s", 60}}));
  EXPECT_EQ(parsed<UpdateJob>({"update", "7", "--time", "1:30:00"}).changes, Json({{"timeout_s", 5400}}));
  EXPECT_EQ(parsed<UpdateJob>({"update", "7", "--time", "UNLIMITED"}).changes, Json({{"timeout_s", nullptr}}));
  EXPECT_EQ(rejected({"update", "7", "--time", "1:61"}), "--time");
  EXPECT_EQ(rejected({"update", "7"}), "--priority");
  EXPECT_EQ(rejected({"update", "7", "--priority", "x"}), "--priority");
  EXPECT_EQ(parsed<HoldJob>({"hold", "3"}).job, (JobTarget{3}));
  EXPECT_EQ(rejected({"requeue"}), "ID");
}

// Every command that names one job takes an array task as ID_N, as cancel does, and asks the
// daemon for it by that name; the array's own id names the whole array.
TEST(CommandLine, EveryJobCommandTakesAnArrayTask) {
  const JobTarget task{12, 3};
  EXPECT_EQ(parsed<ShowJob>({"job", "12_3"}).job, task);
  EXPECT_EQ(parsed<ShowLogs>({"logs", "12_3"}).job, task);
  EXPECT_EQ(parsed<ShowMetrics>({"metrics", "12_3"}).job, task);
  EXPECT_EQ(parsed<HoldJob>({"hold", "12_3"}).job, task);
  EXPECT_EQ(parsed<ReleaseJob>({"release", "12_3"}).job, task);
  EXPECT_EQ(parsed<RequeueJob>({"requeue", "12_3"}).job, task);
  EXPECT_EQ(parsed<UpdateJob>({"update", "12_3", "--priority", "1"}).job, task);
  EXPECT_EQ(parsed<DiffProvenance>({"diff", "12_3/2", "12_4"}).a, (AttemptRef{task, 2}));
  const auto target_of = [](const auto& command) { return command.requests({}).at(0).target; };
  EXPECT_EQ(target_of(parsed<ShowJob>({"job", "12_3"})), "/v1/jobs/12_3");
  EXPECT_EQ(target_of(parsed<ShowLogs>({"logs", "12_3"})), "/v1/jobs/12_3/logs");
  EXPECT_EQ(target_of(parsed<ShowMetrics>({"metrics", "12_3"})), "/v1/jobs/12_3/metrics?max_points=50");
  EXPECT_EQ(target_of(parsed<HoldJob>({"hold", "12_3"})), "/v1/jobs/12_3/hold");
  EXPECT_EQ(target_of(parsed<ReleaseJob>({"release", "12"})), "/v1/jobs/12/release");
  EXPECT_EQ(target_of(parsed<RequeueJob>({"requeue", "12_3"})), "/v1/jobs/12_3/requeue");
  EXPECT_EQ(target_of(parsed<UpdateJob>({"update", "12_3", "--priority", "1"})), "/v1/jobs/12_3");
  for (const char* command : {"job", "logs", "metrics", "hold", "release", "requeue"}) {
    EXPECT_EQ(rejected({command, "12_x"}), "ID") << command;
    EXPECT_EQ(rejected({command, "0_1"}), "ID") << command;
  }
}

TEST(CommandLine, Logs) {
  EXPECT_EQ(parsed<ShowLogs>({"logs", "3"}), (ShowLogs{{3}, std::nullopt, std::nullopt, std::nullopt}));
  EXPECT_EQ(parsed<ShowLogs>({"logs", "3", "--rank", "1", "--tail=4096", "--attempt", "2"}),
            (ShowLogs{{3}, 1, 4096, 2}));
  EXPECT_EQ(rejected({"logs", "3", "--rank", "-1"}), "--rank");
  EXPECT_EQ(rejected({"logs", "3", "--tail", "0"}), "--tail");
  EXPECT_EQ(rejected({"logs", "3", "--attempt", "0"}), "--attempt");
  EXPECT_EQ(rejected({"logs", "3", "--rank"}), "--rank");
}

TEST(CommandLine, Webhooks) {
  EXPECT_EQ(parsed<AddWebhook>({"webhook", "add", "https://h/x", "--events", "job.failed,node.*", "--share", "vision",
                                "--job", "5"})
                .body,
            Json::parse(R"({"url": "https://h/x", "events": ["job.failed", "node.*"], "format": "slack",
                            "filter": {"share": "vision", "job": 5}})"));
  EXPECT_EQ(parsed<AddWebhook>({"webhook", "add", "http://h/", "--events", "audit.*", "--format", "json"}).body["format"],
            "json");
  EXPECT_EQ(rejected({"webhook", "add", "http://h/"}), "--events");
  EXPECT_EQ(rejected({"webhook", "add", "http://h/", "--events", "job.failed", "--job", "x"}), "--job");
  EXPECT_EQ(parsed<ListWebhooks>({"webhook", "list"}), ListWebhooks{});
  EXPECT_EQ(parsed<ShowWebhook>({"webhook", "show", "3"}), ShowWebhook{3});
  EXPECT_EQ(parsed<RemoveWebhook>({"webhook", "rm", "3"}), RemoveWebhook{3});
  EXPECT_EQ(parsed<TestWebhook>({"webhook", "test", "3"}), TestWebhook{3});
  EXPECT_EQ(parsed<ListWebhookDeliveries>({"webhook", "deliveries", "3", "--limit", "5"}), (ListWebhookDeliveries{3, 5}));
  EXPECT_EQ(rejected({"webhook", "show", "0"}), "ID");
}

TEST(CommandLine, ACanaryIsRunNowAndTheListSaysWhenTheNextIsDue) {
  EXPECT_EQ(parsed<RunCanary>({"canary", "run"}), RunCanary{});
  EXPECT_EQ(rejected({"canary", "run", "now"}), "now");
  const Json job = {{"id", 17}, {"spec", {{"nodes", 2}}}};
  EXPECT_EQ(RunCanary{}.render({job}, RenderContext{}), "Canary job 17 submitted on 2 node(s); `trainyard job 17` follows it.\n");
  const Json list = {{"canaries", Json::array()}, {"next", nullptr}, {"next_run_at", "2026-11-28T22:00:00.000Z"}};
  EXPECT_NE(ListCanaries{}.render({list}, RenderContext{}).find("Next scheduled canary: 2026-11-28T22:00:00.000Z"),
            std::string::npos);
  const Json off = {{"canaries", Json::array()}, {"next", nullptr}, {"next_run_at", nullptr}};
  EXPECT_NE(ListCanaries{}.render({off}, RenderContext{}).find("No canaries are scheduled"), std::string::npos);
}

TEST(CommandLine, NodesAndTokens) {
  EXPECT_EQ(parsed<ListNodes>({"nodes"}), ListNodes{});
  EXPECT_EQ(parsed<ListShares>({"shares"}), ListShares{});
  EXPECT_EQ(rejected({"nodes", "n1"}), "n1");
  EXPECT_EQ(parsed<CreateToken>({"token", "create", "bob"}), (CreateToken{"bob", "user"}));
  EXPECT_EQ(parsed<CreateToken>({"token", "create", "root", "--role", "admin"}), (CreateToken{"root", "admin"}));
  EXPECT_EQ(rejected({"token", "create", "bob", "--role", "agent"}), "--role");
  EXPECT_EQ(rejected({"token", "create"}), "USER");
  EXPECT_EQ(rejected({"token"}), "token");
  EXPECT_EQ(rejected({"token", "delete", "bob"}), "token");
  EXPECT_EQ(parsed<CreateToken>({"token", "create", "vic", "--role", "viewer", "--ttl", "30d"}),
            (CreateToken{"vic", "viewer", 30 * 86400}));
  EXPECT_EQ(parsed<CreateToken>({"token", "create", "olga", "--role", "operator", "--ttl", "3600"}),
            (CreateToken{"olga", "operator", 3600}));
  EXPECT_EQ(parsed<CreateToken>({"token", "create", "bob", "--ttl", "90m"}).ttl_s, 5400);
  for (const char* bad : {"0", "-1d", "30y", "d", "12x", "4000d"}) {
    EXPECT_EQ(rejected({"token", "create", "bob", "--ttl", bad}), "--ttl") << bad;
  }
  EXPECT_EQ(parsed<ListTokens>({"token", "list"}), ListTokens{});
  EXPECT_EQ(parsed<RevokeToken>({"token", "revoke", "tok_1"}), RevokeToken{"tok_1"});
  EXPECT_EQ(rejected({"token", "revoke"}), "ID");
  EXPECT_EQ(parsed<RotateJoinToken>({"token", "rotate-join"}), RotateJoinToken{});
}

TEST(CommandLine, GlobalFlagsBeforeOrAfterTheCommand) {
  const Invocation before = parse_command_line({"--server", "http://h:1", "--token-file=t", "--json", "nodes"});
  EXPECT_EQ(before.global, (GlobalOptions{"http://h:1", "t", true}));
  const Invocation after = parse_command_line({"jobs", "--json", "--server=http://h:2", "--token-file", "u"});
  EXPECT_EQ(after.global, (GlobalOptions{"http://h:2", "u", true}));
  EXPECT_EQ(parse_command_line({"nodes"}).global, GlobalOptions{});
}

TEST(CommandLine, TopLevelMistakes) {
  EXPECT_EQ(rejected({}), "COMMAND");
  EXPECT_EQ(rejected({"--json"}), "COMMAND");
  EXPECT_EQ(rejected({"frobnicate"}), "frobnicate");
  EXPECT_EQ(rejected({"--verbose", "jobs"}), "--verbose");
  EXPECT_EQ(rejected({"--server"}), "--server");
}

TEST(CommandLine, UsageErrorsPointAtTheRightHelp) {
  try {
    parse_command_line({"logs", "1", "--rank", "x"});
    FAIL() << "accepted a bad --rank";
  } catch (const UsageError& e) {
    EXPECT_EQ(e.help_command(), "trainyard logs");
    EXPECT_NE(std::string(e.what()).find("--rank"), std::string::npos);
  }
}

TEST(CommandLine, HelpAtEveryLevel) {
  const std::string top = help_of({"--help"});
  for (const CommandEntry& entry : command_registry()) {
    EXPECT_NE(top.find(std::string(entry.path)), std::string::npos) << entry.path;
    Args args;
    for (std::size_t start = 0, end = 0; end != std::string_view::npos; start = end + 1) {
      end = entry.path.find(' ', start);
      args.emplace_back(entry.path.substr(start, end - start));
    }
    args.push_back("--help");
    const std::string help = help_of(args);
    EXPECT_NE(help.find("Usage: trainyard " + std::string(entry.synopsis)), std::string::npos) << help;
    for (const FlagSpec& flag : entry.flags) EXPECT_NE(help.find(std::string(flag.name)), std::string::npos) << help;
  }
  EXPECT_NE(help_of({"token", "--help"}).find("token create"), std::string::npos);
  EXPECT_EQ(help_of({"-h"}), top);
  // Help wins over mistakes elsewhere on the line, as users type --help to fix those.
  EXPECT_NE(help_of({"job", "--help"}).find("job ID"), std::string::npos);
}

}  // namespace
}  // namespace trainyard::cli
