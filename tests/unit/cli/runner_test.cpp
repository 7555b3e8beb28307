// The executor end to end against a scripted fake server: what is sent, what is printed, and the
// exit status for success, server errors, unreachable servers and usage mistakes.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <sstream>

#include "cli/follow.h"
#include "cli/runner.h"

namespace trainyard::cli {
namespace {

// Answers by "METHOD TARGET"; records what it was sent. Unscripted requests get a 404.
struct FakeServer {
  std::map<std::string, std::optional<HttpResult>> replies;
  std::vector<HttpRequest> received;
  std::vector<std::string> connected_to;
};

class FakeClient final : public HttpClient {
 public:
  explicit FakeClient(FakeServer& server) : server_(server) {}
  HttpResult send(const HttpRequest& request) override {
    server_.received.push_back(request);
    auto it = server_.replies.find(request.method + " " + request.target);
    if (it == server_.replies.end()) return HttpResponse{.status = 404, .body = R"({"error":{"code":"not_found","message":"no route"}})"};
    return *it->second;
  }

 private:
  FakeServer& server_;
};

class RunnerTest : public ::testing::Test {
 protected:
  int run(const std::vector<std::string>& args) {
    const CliHost host{
        .env = env,
        .read_file = [this](const std::string& path) -> std::optional<std::string> {
          auto it = files.find(path);
          return it == files.end() ? std::nullopt : std::optional(it->second);
        },
        .read_input = [this](const std::string& path) -> std::string {
          auto it = files.find(path);
          if (it == files.end()) throw InvalidInput(path, "cannot read: No such file or directory");
          return it->second;
        },
        .connect = [this](const ServerUrl& url) -> std::unique_ptr<HttpClient> {
          server.connected_to.push_back(url.text);
          return std::make_unique<FakeClient>(server);
        },
        .clock = clock,
        .out = out,
        .err = err,
        .out_is_terminal = terminal,
        .pause =
            [this](Millis interval) {
              pauses.push_back(interval);
              return between_rounds(pauses.size());
            },
    };
    return run_cli(args, host);
  }

  Environment env{"http://127.0.0.1:9", "ty_secret"};
  std::map<std::string, std::string> files;
  FakeServer server;
  ManualTimeSource clock{*parse_time("2026-11-22T14:00:00.000Z")};
  std::ostringstream out;
  std::ostringstream err;
  bool terminal = false;
  // What happens between two rounds of a following command (the n-th pause); false stops it.
  std::function<bool(std::size_t n)> between_rounds = [](std::size_t) { return false; };
  std::vector<Millis> pauses;

  void reply(const std::string& request, const Json& body) {
    server.replies[request] = HttpResponse{.status = 200, .body = body.dump()};
  }
};

const Json kJob = {{"id", 42}, {"name", "t"}, {"state", "PENDING"}, {"submitted_at", "2026-11-22T13:59:00.000Z"}};

TEST_F(RunnerTest, ListsJobsWithTheTokenAsBearer) {
  server.replies["GET /v1/jobs?state=PENDING"] = HttpResponse{.status = 200, .body = Json{{"jobs", {kJob}}, {"next", nullptr}}.dump()};
  EXPECT_EQ(run({"jobs", "--state", "pending"}), kExitOk) << err.str();
  ASSERT_EQ(server.received.size(), 1u);
  EXPECT_EQ(server.received[0].header("authorization"), "Bearer ty_secret");
  EXPECT_EQ(server.connected_to, std::vector<std::string>{"http://127.0.0.1:9"});
  EXPECT_NE(out.str().find("42"), std::string::npos);
  EXPECT_NE(out.str().find("60s"), std::string::npos);  // age from the injected clock
  EXPECT_EQ(err.str(), "");
}

TEST_F(RunnerTest, JsonPrintsTheServersDocument) {
  const Json reply = {{"jobs", {kJob}}, {"next", nullptr}};
  server.replies["GET /v1/jobs"] = HttpResponse{.status = 200, .body = reply.dump()};
  EXPECT_EQ(run({"--json", "jobs", "--all"}), kExitOk);
  EXPECT_EQ(Json::parse(out.str()), reply);
}

TEST_F(RunnerTest, SubmitSendsTheSpecAsJson) {
  files["job.json"] = R"({"name":"t","command":{"argv":["/bin/true"]}})";
  server.replies["POST /v1/jobs"] = HttpResponse{.status = 201, .body = kJob.dump()};
  EXPECT_EQ(run({"submit", "job.json"}), kExitOk) << err.str();
  EXPECT_EQ(out.str(), "Submitted job 42\n");
  ASSERT_EQ(server.received.size(), 1u);
  EXPECT_EQ(server.received[0].header("content-type"), "application/json");
  EXPECT_EQ(Json::parse(server.received[0].body), Json::parse(files["job.json"]));
}

TEST_F(RunnerTest, UsesTheLocalClusterFilesByDefault) {
  env = {};
  files[".trainyard/daemon.addr"] = "http://127.0.0.1:4242\n";
  files[".trainyard/admin.token"] = "ty_admin\n";
  server.replies["GET /v1/nodes"] = HttpResponse{.status = 200, .body = R"({"nodes":[]})"};
  EXPECT_EQ(run({"nodes"}), kExitOk) << err.str();
  EXPECT_EQ(server.connected_to, std::vector<std::string>{"http://127.0.0.1:4242"});
  EXPECT_EQ(server.received.at(0).header("authorization"), "Bearer ty_admin");
}

TEST_F(RunnerTest, ServerErrorsExitNonZeroWithTheServersMessage) {
  files["job.json"] = R"({"name":"t","nodes":0})";
  server.replies["POST /v1/jobs"] =
      HttpResponse{.status = 400, .body = R"({"error":{"code":"invalid_field","message":"nodes: must be 1..1024","field":"nodes"}})"};
  EXPECT_EQ(run({"submit", "job.json"}), kExitFailed);
  EXPECT_EQ(err.str(), "trainyard: nodes: must be 1..1024 (HTTP 400, invalid_field)\n");
  EXPECT_EQ(out.str(), "");
}

TEST_F(RunnerTest, StopsAtTheFirstFailedRequest) {
  EXPECT_EQ(run({"job", "5"}), kExitFailed);  // the fake answers 404 to everything unscripted
  EXPECT_EQ(server.received.size(), 1u);
  EXPECT_NE(err.str().find("no route (HTTP 404, not_found)"), std::string::npos) << err.str();
}

TEST_F(RunnerTest, JobCombinesJobAndAttempts) {
  server.replies["GET /v1/jobs/42"] = HttpResponse{.status = 200, .body = kJob.dump()};
  server.replies["GET /v1/jobs/42/attempts"] = HttpResponse{.status = 200, .body = R"({"attempts":[]})"};
  EXPECT_EQ(run({"job", "42", "--json"}), kExitOk) << err.str();
  EXPECT_EQ(Json::parse(out.str()), (Json{{"job", kJob}, {"attempts", Json::array()}}));
}

TEST_F(RunnerTest, UnreachableServer) {
  server.replies["GET /v1/nodes"] = Error::unavailable("cannot reach daemon at http://127.0.0.1:9: Connection refused");
  EXPECT_EQ(run({"nodes"}), kExitFailed);
  EXPECT_EQ(err.str(), "trainyard: cannot reach daemon at http://127.0.0.1:9: Connection refused\n");
}

TEST_F(RunnerTest, NonJsonSuccessIsAnError) {
  server.replies["GET /v1/nodes"] = HttpResponse{.status = 200, .body = "<html>proxy</html>"};
  EXPECT_EQ(run({"nodes"}), kExitFailed);
  EXPECT_NE(err.str().find("not JSON"), std::string::npos) << err.str();
}

TEST_F(RunnerTest, UsageMistakesSendNothing) {
  EXPECT_EQ(run({"jobs", "--limit", "x"}), kExitUsage);
  EXPECT_NE(err.str().find("--limit"), std::string::npos);
  EXPECT_NE(err.str().find("Run 'trainyard jobs --help'"), std::string::npos);
  env = {};
  EXPECT_EQ(run({"jobs"}), kExitUsage);  // no server anywhere
  EXPECT_NE(err.str().find("no daemon address"), std::string::npos);
  env.server = "ftp://h:1";
  env.token = "t";
  EXPECT_EQ(run({"jobs"}), kExitUsage);
  EXPECT_TRUE(server.connected_to.empty());
}

TEST_F(RunnerTest, UnreadableSpecFileFailsBeforeConnecting) {
  EXPECT_EQ(run({"submit", "missing.json"}), kExitFailed);
  EXPECT_EQ(err.str(), "trainyard: missing.json: cannot read: No such file or directory\n");
  EXPECT_TRUE(server.connected_to.empty());
}

TEST_F(RunnerTest, HelpNeedsNoServer) {
  env = {};
  EXPECT_EQ(run({"logs", "--help"}), kExitOk);
  EXPECT_NE(out.str().find("Usage: trainyard logs"), std::string::npos);
  EXPECT_TRUE(server.connected_to.empty());
}

TEST_F(RunnerTest, EscapeSequencesFromTheServerNeverReachTheTerminal) {
  // A name that would set the clipboard (OSC 52) and clear the screen, from an older record.
  Json job = kJob;
  job["name"] = "x\x1b]52;c;ZXZpbA==\x07\x1b[2J\xc2\x9b" "31m";
  server.replies["GET /v1/jobs"] = HttpResponse{.status = 200, .body = Json{{"jobs", {job}}, {"next", nullptr}}.dump()};
  EXPECT_EQ(run({"jobs", "--all"}), kExitOk) << err.str();
  EXPECT_EQ(out.str().find('\x1b'), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find('\x07'), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("\xc2\x9b"), std::string::npos) << "a C1 control (CSI) passed";
  EXPECT_NE(out.str().find("x\\x1b]52"), std::string::npos) << out.str();
}

const Json kLogs = {{"job_id", 42},
                    {"logs", {{{"rank", 0}, {"node", "n1"}, {"text", "ok \x1b[2J\n"}, {"error", ""},
                               {"log_bytes", 5 << 20}, {"truncated", true}}}}};

TEST_F(RunnerTest, LogsPassAJobsBytesToAPipeButNotToATerminal) {
  server.replies["GET /v1/jobs/42/logs"] = HttpResponse{.status = 200, .body = kLogs.dump()};
  EXPECT_EQ(run({"logs", "42"}), kExitOk) << err.str();
  EXPECT_EQ(out.str(), "ok \x1b[2J\n") << "a pipe gets the job's own bytes";
  EXPECT_NE(err.str().find("showing the last 1 lines of 5.0 MiB; use --tail N for more"), std::string::npos) << err.str();
  out.str("");
  terminal = true;
  EXPECT_EQ(run({"logs", "42"}), kExitOk);
  EXPECT_EQ(out.str(), "ok \\x1b[2J\n");
}

TEST_F(RunnerTest, LogsThatCouldNotBeFetchedExitNonZero) {
  server.replies["GET /v1/jobs/42/logs"] = HttpResponse{
      .status = 200, .body = Json{{"logs", {{{"rank", 0}, {"node", "n1"}, {"text", ""}, {"error", "agent n1 did not answer"}}}}}.dump()};
  EXPECT_EQ(run({"logs", "42"}), kExitFailed);
  EXPECT_EQ(err.str(), "trainyard: rank 0 (n1): logs unavailable: agent n1 did not answer\n");
  err.str("");
  server.replies["GET /v1/jobs/42/logs"] = HttpResponse{.status = 200, .body = R"({"logs":[]})"};
  EXPECT_EQ(run({"logs", "42"}), kExitFailed);
  EXPECT_EQ(err.str(), "trainyard: no logs were returned for job 42\n");
}

TEST_F(RunnerTest, LogsTailCountsLines) {
  server.replies["GET /v1/jobs/42/logs?tail=20"] = HttpResponse{.status = 200, .body = kLogs.dump()};
  EXPECT_EQ(run({"logs", "42", "--tail", "20"}), kExitOk) << err.str();
  EXPECT_EQ(run({"logs", "42", "--tail", "100001"}), kExitUsage);
}

TEST(ErrorMessage, ReadsTheApiErrorDocumentOrFallsBack) {
  EXPECT_EQ(error_message(403, R"({"error":{"code":"forbidden","message":"job 3 belongs to bob"}})"),
            "job 3 belongs to bob (HTTP 403, forbidden)");
  EXPECT_EQ(error_message(401, R"({"error":{"message":"bad token"}})"),
            "bad token (HTTP 401) (check --token-file or $TRAINYARD_TOKEN)");
  EXPECT_EQ(error_message(502, "Bad Gateway"), "HTTP 502: Bad Gateway");
  EXPECT_EQ(error_message(500, ""), "HTTP 500");
  EXPECT_EQ(error_message(400, R"({"error":"flat"})"), R"(HTTP 400: {"error":"flat"})");
  EXPECT_EQ(error_message(413, std::string(1000, 'x')).size(), std::string("HTTP 413: ").size() + 200);
}

// ---- following: --watch, logs --follow, submit --wait ----

Json job_in(const std::string& state, std::optional<int> exit_code = std::nullopt, int attempts = 1) {
  Json job = {{"id", 42}, {"name", "t"}, {"state", state}, {"attempts", attempts}};
  if (exit_code) job["exit_code"] = *exit_code;
  return job;
}

TEST_F(RunnerTest, SubmitWaitFollowsTheJobAndExitsWithItsCode) {
  server.replies["POST /v1/jobs"] = HttpResponse{.status = 201, .body = job_in("PENDING", std::nullopt, 0).dump()};
  reply("GET /v1/jobs/42", job_in("RUNNING"));
  between_rounds = [this](std::size_t n) {
    if (n == 2) reply("GET /v1/jobs/42", job_in("FAILED", 7));
    return true;
  };
  EXPECT_EQ(run({"submit", "--wait", "--", "/bin/false"}), 7) << err.str();
  EXPECT_EQ(out.str(), "Submitted job 42\nJob 42 FAILED (exit code 7)\n");
  EXPECT_EQ(pauses, (std::vector<Millis>{Millis(1000), Millis(1000)}));
}

TEST_F(RunnerTest, WaitPrintsWhyAJobDidNotSucceedAndExits125WhenTheServerCannotSay) {
  Json failed = job_in("FAILED", 1);
  failed["failure_class"] = "oom";
  failed["reason"] = "rank 0 on n1: out of memory";
  reply("GET /v1/jobs/42", failed);
  EXPECT_EQ(run({"wait", "42"}), 1) << err.str();
  EXPECT_EQ(out.str(), "Job 42 FAILED (exit code 1, oom): rank 0 on n1: out of memory\n");
  out.str("");
  Json succeeded = job_in("SUCCEEDED", 0);
  succeeded["reason"] = "completed";
  reply("GET /v1/jobs/42", succeeded);
  EXPECT_EQ(run({"wait", "42"}), 0);
  EXPECT_EQ(out.str(), "Job 42 SUCCEEDED (exit code 0)\n") << "a success needs no reason";

  server.replies["GET /v1/jobs/42"] = HttpResponse{.status = 404, .body = R"({"error":{"code":"not_found","message":"job 42 does not exist"}})"};
  EXPECT_EQ(run({"wait", "42"}), kExitNoAnswer) << "not the exit status 1 a failed job has";
  server.replies["POST /v1/jobs"] = HttpResponse{.status = 400, .body = R"({"error":{"code":"invalid_field","message":"nodes: too many","field":"nodes"}})"};
  EXPECT_EQ(run({"submit", "--wait", "--", "/bin/true"}), kExitNoAnswer);
}

TEST_F(RunnerTest, SubmitWaitRidesOutAFailover) {
  env.server = "http://127.0.0.1:9,http://127.0.0.1:10";
  server.replies["POST /v1/jobs"] = HttpResponse{.status = 201, .body = job_in("PENDING", std::nullopt, 0).dump()};
  server.replies["GET /v1/jobs/42"] = Error::unavailable("cannot reach daemon at http://127.0.0.1:9: Connection refused");
  between_rounds = [this](std::size_t n) {
    if (n == 2) reply("GET /v1/jobs/42", job_in("SUCCEEDED", 0));  // the standby has taken over
    clock.advance(Millis(1000));
    return true;
  };
  EXPECT_EQ(run({"submit", "--wait", "--", "/bin/true"}), 0) << err.str();
  EXPECT_EQ(out.str(), "Submitted job 42\nJob 42 SUCCEEDED (exit code 0)\n");
  EXPECT_NE(err.str().find("no active daemon answered; tried http://127.0.0.1:9 (cannot reach daemon"), std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("trying again for up to 30 s"), std::string::npos) << err.str();
  EXPECT_EQ(server.connected_to, (std::vector<std::string>{"http://127.0.0.1:9", "http://127.0.0.1:10"}));
}

TEST_F(RunnerTest, FollowingGivesUpWhenNoDaemonComesBack) {
  server.replies["GET /v1/jobs/42"] = Error::unavailable("cannot reach daemon at http://127.0.0.1:9: Connection refused");
  between_rounds = [this](std::size_t) {
    clock.advance(Millis(1000));
    return true;
  };
  EXPECT_EQ(run({"logs", "42", "--follow"}), kExitFailed);
  EXPECT_EQ(pauses.size(), 30u) << "a retry each second for 30 s";
  EXPECT_NE(err.str().find("cannot reach daemon at http://127.0.0.1:9"), std::string::npos) << err.str();
}

TEST_F(RunnerTest, OneShotCommandsDoNotWaitForADaemon) {
  env.server = "http://127.0.0.1:9,http://127.0.0.1:10";
  server.replies["GET /v1/nodes"] = Error::unavailable("cannot reach daemon: Connection refused");
  EXPECT_EQ(run({"nodes"}), kExitFailed);
  EXPECT_TRUE(pauses.empty());
  EXPECT_NE(err.str().find("tried http://127.0.0.1:9 (cannot reach daemon: Connection refused), http://127.0.0.1:10 ("),
            std::string::npos)
      << err.str();
}

TEST_F(RunnerTest, ABadUrlInTheListIsAUsageErrorNamingServer) {
  env.server = "http://127.0.0.1:9,,http://127.0.0.1:10";
  EXPECT_EQ(run({"nodes"}), kExitUsage);
  EXPECT_NE(err.str().find("--server"), std::string::npos) << err.str();
  env.server = "http://127.0.0.1:9,http://h:99999";
  EXPECT_EQ(run({"nodes"}), kExitUsage);
  EXPECT_NE(err.str().find("http://h:99999"), std::string::npos) << err.str();
}

TEST_F(RunnerTest, SubmitWaitExitCodesForSuccessAndCancel) {
  server.replies["POST /v1/jobs"] = HttpResponse{.status = 201, .body = job_in("PENDING", std::nullopt, 0).dump()};
  reply("GET /v1/jobs/42", job_in("SUCCEEDED", 0));
  EXPECT_EQ(run({"submit", "--wait", "--", "/bin/true"}), 0);
  reply("GET /v1/jobs/42", job_in("CANCELLED"));
  EXPECT_EQ(run({"submit", "--wait", "--", "/bin/true"}), kExitCancelled);
}

Json other_job_in(JobId id, const std::string& state, std::optional<int> exit_code = std::nullopt) {
  Json job = job_in(state, exit_code);
  job["id"] = id;
  return job;
}

TEST_F(RunnerTest, WaitFollowsJobsAlreadySubmittedAndExitsWithTheHighestStatus) {
  reply("GET /v1/jobs/42", job_in("RUNNING"));
  reply("GET /v1/jobs/43", other_job_in(43, "SUCCEEDED", 0));
  between_rounds = [this](std::size_t n) {
    if (n == 2) reply("GET /v1/jobs/42", job_in("FAILED", 7));
    return true;
  };
  EXPECT_EQ(run({"wait", "42", "43"}), 7) << err.str();
  EXPECT_EQ(out.str(), "Job 43 SUCCEEDED (exit code 0)\nJob 42 FAILED (exit code 7)\n");
  EXPECT_EQ(pauses.size(), 2u);
}

TEST_F(RunnerTest, WaitForSucceededStopsAtTheFirstJobThatDidNot) {
  reply("GET /v1/jobs/42", job_in("RUNNING"));
  reply("GET /v1/jobs/43", other_job_in(43, "CANCELLED"));
  EXPECT_EQ(run({"wait", "42", "43", "--for", "succeeded"}), kExitCancelled) << err.str();
  EXPECT_EQ(out.str(), "Job 43 CANCELLED\n");
  EXPECT_TRUE(pauses.empty()) << "job 42 is not waited for once 43 failed the condition";
}

TEST_F(RunnerTest, WaitGivesUpAtItsTimeoutAsTimeoutDoes) {
  reply("GET /v1/jobs/42", job_in("RUNNING"));
  between_rounds = [this](std::size_t) {
    clock.advance(Millis(1000));
    return true;
  };
  EXPECT_EQ(run({"wait", "42", "--timeout", "5s"}), kExitTimedOut);
  EXPECT_EQ(pauses.size(), 5u);
  EXPECT_NE(err.str().find("timed out after 5 s waiting for job 42"), std::string::npos) << err.str();
}

TEST_F(RunnerTest, WaitOnAnArraysIdWaitsForEveryTask) {
  Json task0 = job_in("SUCCEEDED", 0);
  task0["array"] = {{"job_id", 42}, {"task_count", 2}, {"index", 0}};
  reply("GET /v1/jobs/42", task0);
  const Json row = {{"id", 42}, {"state", "FAILED"}, {"array", {{"counts", {{"FAILED", 1}, {"SUCCEEDED", 1}}}}}};
  reply("GET /v1/jobs?before=44&limit=1", Json{{"jobs", {row}}, {"next", nullptr}});
  reply("GET /v1/jobs?array=42&limit=1000", Json{{"jobs", {task0, other_job_in(43, "FAILED", 2)}}, {"next", nullptr}});
  EXPECT_EQ(run({"wait", "42"}), 2) << err.str() << out.str();
  EXPECT_EQ(out.str(), "Array 42 FAILED (1 FAILED, 1 SUCCEEDED)\n");
  out.str("");
  reply("GET /v1/jobs/42_0", task0);
  EXPECT_EQ(run({"wait", "42_0"}), 0) << "a task named as ID_N is that task alone";
  EXPECT_EQ(out.str(), "Job 42 SUCCEEDED (exit code 0)\n");
}

TEST_F(RunnerTest, LogsFollowInterleavesRanksUntilTheJobEnds) {
  const auto logs = [](const std::string& r0, const std::string& r1) {
    return Json{{"attempt", 1},
                {"logs",
                 {{{"rank", 0}, {"text", r0}, {"log_bytes", r0.size()}},
                  {{"rank", 1}, {"text", r1}, {"log_bytes", r1.size()}}}}};
  };
  reply("GET /v1/jobs/42", job_in("RUNNING"));
  reply("GET /v1/jobs/42/logs", logs("a\n", ""));
  between_rounds = [&](std::size_t n) {
    reply("GET /v1/jobs/42/logs?tail=100000", logs("a\nb\n", "x\n\x1b[2J"));
    if (n == 2) reply("GET /v1/jobs/42", job_in("SUCCEEDED", 0));
    return true;
  };
  EXPECT_EQ(run({"logs", "42", "--follow"}), kExitOk) << err.str();
  // Piped: the job's bytes as they are, its unfinished last line at the end.
  EXPECT_EQ(out.str(), "[rank 0] a\n[rank 0] b\n[rank 1] x\n[rank 1] \x1b[2J\n");
  terminal = true;
  out.str("");
  reply("GET /v1/jobs/42", job_in("RUNNING"));
  pauses.clear();
  EXPECT_EQ(run({"logs", "42", "--follow"}), kExitOk);
  EXPECT_EQ(out.str().find('\x1b'), std::string::npos) << out.str();  // a terminal gets it escaped
}

TEST_F(RunnerTest, LogsFollowWaitsForAPendingJobToStart) {
  reply("GET /v1/jobs/42", job_in("PENDING", std::nullopt, 0));
  between_rounds = [&](std::size_t) {
    reply("GET /v1/jobs/42", job_in("SUCCEEDED", 0));
    reply("GET /v1/jobs/42/logs?rank=0",
          Json{{"attempt", 1}, {"logs", {{{"rank", 0}, {"text", "done\n"}, {"log_bytes", 5}}}}});
    return true;
  };
  EXPECT_EQ(run({"logs", "42", "--follow", "--rank", "0"}), kExitOk) << err.str();
  EXPECT_EQ(server.received.front().target, "/v1/jobs/42");  // no logs asked of a job without an attempt
  EXPECT_EQ(out.str(), "done\n");
}

TEST_F(RunnerTest, WatchRepeatsPlainlyWhenPiped) {
  reply("GET /v1/nodes", Json{{"nodes", Json::array({{{"name", "n1"}, {"state", "HEALTHY"}}})}});
  between_rounds = [](std::size_t n) { return n < 3; };
  EXPECT_EQ(run({"nodes", "--watch", "--interval", "5"}), kExitOk);
  EXPECT_EQ(server.received.size(), 3u);
  EXPECT_EQ(pauses, (std::vector<Millis>{Millis(5000), Millis(5000), Millis(5000)}));
  EXPECT_EQ(out.str().find('\x1b'), std::string::npos);
}

TEST_F(RunnerTest, WatchRedrawsATerminalWithTheChangesHighlighted) {
  terminal = true;
  reply("GET /v1/nodes", Json{{"nodes", Json::array({{{"name", "n1"}, {"state", "HEALTHY"}}})}});
  between_rounds = [this](std::size_t n) {
    reply("GET /v1/nodes", Json{{"nodes", Json::array({{{"name", "n1\x1b]52;c;x\x07"}, {"state", "DRAINED"}}})}});
    return n < 2;
  };
  EXPECT_EQ(run({"nodes", "--watch"}), kExitOk);
  const std::string screen = out.str();
  EXPECT_EQ(screen.rfind("\x1b[H\x1b[2JEvery 2s: trainyard nodes --watch", 0), 0u) << screen;
  EXPECT_NE(screen.find("\x1b[7m"), std::string::npos);  // the change
  EXPECT_EQ(screen.find("\x1b]52"), std::string::npos);  // a name's escape code is shown escaped
}

TEST_F(RunnerTest, WatchIsNeverFasterThanASecond) {
  EXPECT_EQ(run({"jobs", "--watch", "--interval", "0"}), kExitUsage);
  EXPECT_NE(err.str().find("--interval"), std::string::npos);
}

TEST_F(RunnerTest, CompletionNeedsNoServerAndCompleteAsksForNamesOnlyWhenNeeded) {
  env = {};
  EXPECT_EQ(run({"completion", "bash"}), kExitOk);
  EXPECT_NE(out.str().find("_trainyard"), std::string::npos);
  EXPECT_EQ(run({"completion", "fish"}), kExitUsage);
  env = {"http://127.0.0.1:9", "ty_secret"};
  reply("GET /v1/jobs?limit=200", Json{{"jobs", Json::array({{{"id", 42}}, {{"id", 41}}})}});
  out.str("");
  EXPECT_EQ(run({"__complete", "1", "cancel", "4"}), kExitOk);
  EXPECT_EQ(out.str(), "42\n41\n");
  out.str("");
  server.received.clear();
  EXPECT_EQ(run({"__complete", "0", "canc"}), kExitOk);
  EXPECT_EQ(out.str(), "cancel\n");
  EXPECT_TRUE(server.received.empty());
}

}  // namespace
}  // namespace trainyard::cli
