// `trainyard events --follow` as a real process against a real daemon: it prints events as they
// happen, carries on after a kill -9 and restart of the daemon (resuming with Last-Event-ID: every
// event once, none missed), ends on Ctrl-C, and a filter the daemon refuses ends it with the error.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>
#include <cstdlib>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

Json waiting_job(const std::string& name) {
  // No agent joins: the job waits for one, and its job.submitted event is what is followed.
  return Json{{"name", name}, {"nodes", 1}, {"wait_for_capacity", true}, {"command", {{"argv", {"/bin/true"}}}}};
}

int occurrences(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

std::string submitted_line(std::int64_t job) { return "job.submitted  job=" + std::to_string(job) + " "; }

TEST(EventsFollow, PrintsEventsLiveResumesAfterAKill9AndEndsOnCtrlC) {
  Cluster cluster;
  cluster.start_daemon({"--sse-keepalive-ms", "200"});
  const std::int64_t before = cluster.submit(waiting_job("before"));
  const std::string out = cluster.dir() + "/follow.out";
  // --after 0: from the start of the log, so the job submitted before it connected is shown too.
  Process follow({TRAINYARD_CLI_BIN, "--server", cluster.url(), "--token-file", cluster.dir() + "/data/admin.token",
                  "events", "--follow", "--type", "job.*", "--after", "0"},
                 out);
  ASSERT_TRUE(eventually([&] { return read_text(out).find(submitted_line(before)) != std::string::npos; }, 20s))
      << read_text(out);
  const std::int64_t live = cluster.submit(waiting_job("live"));
  ASSERT_TRUE(eventually([&] { return read_text(out).find(submitted_line(live)) != std::string::npos; }, 20s))
      << read_text(out);

  cluster.kill_daemon(SIGKILL);
  cluster.start_daemon({"--sse-keepalive-ms", "200"});
  const std::int64_t after_restart = cluster.submit(waiting_job("after-restart"));
  ASSERT_TRUE(eventually([&] { return read_text(out).find(submitted_line(after_restart)) != std::string::npos; }, 30s))
      << read_text(out) << cluster.daemon_log();
  const std::string text = read_text(out);
  EXPECT_NE(text.find("reconnecting"), std::string::npos) << text;
  for (const std::int64_t job : {before, live, after_restart})
    EXPECT_EQ(occurrences(text, submitted_line(job)), 1) << text;

  follow.signal(SIGINT);
  const std::optional<int> status = follow.wait_exit(5s);
  ASSERT_TRUE(status.has_value()) << "Ctrl-C did not end it";
  EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGINT) << *status;
}

TEST(EventsFollow, AFilterTheDaemonRefusesEndsItWithTheError) {
  Cluster cluster;
  cluster.start_daemon();
  const std::string out = cluster.dir() + "/follow.out";
  const std::string command = std::string(TRAINYARD_CLI_BIN) + " --server " + cluster.url() + " --token-file " +
                              cluster.dir() + "/data/admin.token events --follow --type 'nothing.*' > " + out + " 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 1) << read_text(out);
  EXPECT_NE(read_text(out).find("type"), std::string::npos) << read_text(out);
}

}  // namespace
}  // namespace trainyard::testing
