// The cluster over TLS: the daemon serves HTTPS and wss with a certificate from a
// throwaway CA (deploy/tls-certs.sh), agents verify it and present client certificates (mutual
// TLS), the CLI verifies it; wrong certificates are refused in words on both sides; SIGHUP swaps
// the certificate for new connections while a job keeps running.
#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

// Runs a shell command; returns its exit status and what it printed (stdout and stderr).
std::pair<int, std::string> shell(const std::string& command) {
  std::string output;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return {-1, ""};
  char chunk[4096];
  while (const std::size_t n = std::fread(chunk, 1, sizeof chunk, pipe)) output.append(chunk, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class Tls : public ::testing::Test {
 protected:
  void SetUp() override {
    certs_ = cluster.dir() + "/tls";
    const auto [made, log] = shell(make_certs(certs_ + " n1 n2 n9"));
    ASSERT_EQ(made, 0) << log;
    cluster.trust_ca(certs_ + "/ca.pem");
    cluster.start_daemon({"--tls-cert", certs_ + "/server.pem", "--tls-key", certs_ + "/server.key",
                          "--agent-client-ca", certs_ + "/ca.pem"});
    ASSERT_TRUE(cluster.url().starts_with("https://")) << cluster.url();
    start_agent("n1", certs_ + "/agent-n1");
    start_agent("n2", certs_ + "/agent-n2");
    cluster.wait_for_nodes(2);
  }

  static std::string make_certs(const std::string& args) {
    return std::string(TRAINYARD_SOURCE_DIR) + "/deploy/tls-certs.sh " + args;
  }

  // An agent over wss presenting `cert_base`.pem / .key.
  void start_agent(const std::string& name, const std::string& cert_base, const std::string& ca = "") {
    cluster.start_agent(name, AgentSpec{4, {"--ca-file", ca.empty() ? certs_ + "/ca.pem" : ca, "--tls-cert",
                                            cert_base + ".pem", "--tls-key", cert_base + ".key"}, ""});
  }

  std::string cli(const std::string& args, const std::string& ca_env) const {
    return "TRAINYARD_SERVER=" + cluster.url() + " TRAINYARD_TOKEN=" + cluster.admin_token() +
           (ca_env.empty() ? "" : " TRAINYARD_CA=" + ca_env) + " " + TRAINYARD_CLI_BIN + " " + args;
  }

  // The subject of the certificate the daemon serves to a new connection.
  std::string served_subject() const {
    const std::string port = cluster.url().substr(cluster.url().rfind(':') + 1);
    return shell("openssl s_client -connect 127.0.0.1:" + port + " -CAfile " + certs_ +
                 "/ca.pem </dev/null 2>/dev/null | openssl x509 -noout -subject")
        .second;
  }

  Cluster cluster;
  std::string certs_;
};

TEST_F(Tls, AJobRunsThroughTheCliOverHttpsAndUnverifiedOrPlainClientsAreToldWhy) {
  const auto [submitted, out] = shell(cli("submit --name over-tls -- /bin/echo hello over tls", certs_ + "/ca.pem"));
  ASSERT_EQ(submitted, 0) << out;
  const auto id = std::stoll(out.substr(out.rfind(' ') + 1));
  cluster.wait_job_state(id, "SUCCEEDED", 30s);
  const auto [logged, log] = shell(cli("logs " + std::to_string(id), certs_ + "/ca.pem"));
  EXPECT_EQ(logged, 0) << log;
  EXPECT_TRUE(contains(log, "hello over tls")) << log;

  // Without the CA the CLI refuses the server, in words, naming the fix.
  const auto [untrusted, why] = shell(cli("jobs", ""));
  EXPECT_NE(untrusted, 0);
  EXPECT_TRUE(contains(why, "not signed by a CA this client trusts")) << why;
  EXPECT_TRUE(contains(why, "--ca-file")) << why;
  EXPECT_FALSE(contains(why, "SSL routines")) << why;

  // By a name the certificate does not hold (it names 127.0.0.1, ::1 and localhost): "127.1" is the
  // resolver's short form of 127.0.0.1, a different name for the same daemon.
  const std::string port = cluster.url().substr(cluster.url().rfind(':') + 1);
  const auto [misnamed, misnamed_why] =
      shell("TRAINYARD_SERVER=https://127.1:" + port + " TRAINYARD_TOKEN=" + cluster.admin_token() +
            " TRAINYARD_CA=" + certs_ + "/ca.pem " + TRAINYARD_CLI_BIN + " jobs");
  EXPECT_NE(misnamed, 0);
  EXPECT_TRUE(contains(misnamed_why, "not issued to 127.1")) << misnamed_why;

  // Plain HTTP to the TLS port: a clear answer, and the daemon carries on.
  const auto [plain, plain_why] = shell("TRAINYARD_SERVER=http://127.0.0.1:" + port + " TRAINYARD_TOKEN=" +
                                        cluster.admin_token() + " " + TRAINYARD_CLI_BIN + " jobs");
  EXPECT_NE(plain, 0);
  EXPECT_TRUE(contains(plain_why, "speaks HTTPS only")) << plain_why;
  EXPECT_TRUE(cluster.daemon().running());
  EXPECT_EQ(cluster.api("GET", "/v1/jobs/" + std::to_string(id)).status, 200);
}

// A dead agent's fence keeper reports what it stopped as the agent connects: over wss, verifying the
// daemon with the agent's CA, presenting the node's certificate and credential.
TEST_F(Tls, ADeadAgentsFenceKeeperReportsOverMutualTls) {
  const auto id = cluster.submit(shell_job("reported", "exec sleep 600"));
  cluster.wait_job_state(id, "RUNNING", 30s);
  const std::string node = attempts_of(cluster, id)[0]["nodes"][0];
  cluster.stop_agent(node, SIGKILL);
  const std::string agent_log = cluster.dir() + "/agent-" + node + ".log";
  EXPECT_TRUE(eventually([&] { return contains(read_text(agent_log), "event=fence_keeper_reported node=" + node + " server=https://"); },
                         10s))
      << read_text(agent_log);
  EXPECT_TRUE(contains(cluster.daemon_log(), "event=attempts_stopped_by_keeper node=" + node)) << cluster.daemon_log();
}

TEST_F(Tls, AgentsWithACertificateFromAnotherCaOrNamingAnotherNodeAreRefused) {
  const std::string other_ca = cluster.dir() + "/other-ca";
  ASSERT_EQ(shell(make_certs(other_ca + " n3")).first, 0);
  start_agent("n3", other_ca + "/agent-n3");
  start_agent("n4", certs_ + "/agent-n9");  // a certificate issued to n9
  for (const char* name : {"n3", "n4"}) {
    const auto status = cluster.agent(name).wait_exit(20s);
    ASSERT_TRUE(status.has_value()) << name << " should give up";
    EXPECT_EQ(WEXITSTATUS(*status), 3) << name;
  }
  const std::string n3_log = read_text(cluster.dir() + "/agent-n3.log");
  EXPECT_TRUE(contains(n3_log, "refused this agent's TLS client certificate")) << n3_log;
  EXPECT_TRUE(contains(n3_log, "--agent-client-ca")) << n3_log;
  const std::string n4_log = read_text(cluster.dir() + "/agent-n4.log");
  EXPECT_TRUE(contains(n4_log, "is not issued to node n4")) << n4_log;
  const std::string daemon_log = cluster.daemon_log();
  EXPECT_TRUE(contains(daemon_log, "event=agent_join_refused")) << daemon_log;
  EXPECT_TRUE(contains(daemon_log, "CN=n3")) << daemon_log;
  EXPECT_TRUE(contains(daemon_log, "not issued to node n4")) << daemon_log;
  EXPECT_EQ(cluster.api("GET", "/v1/nodes").body["nodes"].size(), 2u);

  // An agent that does not trust the daemon's CA gives no credential away and keeps trying.
  start_agent("n5", certs_ + "/agent-n9", other_ca + "/ca.pem");
  EXPECT_TRUE(eventually([&] { return contains(read_text(cluster.dir() + "/agent-n5.log"), "not signed by a CA"); }, 20s))
      << read_text(cluster.dir() + "/agent-n5.log");

  // Unusable certificate files stop the daemon at start, naming the flag.
  Process bad({TRAINYARD_DAEMON_BIN, "--listen", "127.0.0.1:0", "--data-dir", cluster.dir() + "/bad-data", "--tls-cert",
               certs_ + "/ca.srl", "--tls-key", certs_ + "/server.key"},
              cluster.dir() + "/bad-daemon.log");
  const auto status = bad.wait_exit(20s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(WEXITSTATUS(*status), 2);
  EXPECT_TRUE(contains(read_text(cluster.dir() + "/bad-daemon.log"), "--tls-cert"))
      << read_text(cluster.dir() + "/bad-daemon.log");
}

TEST_F(Tls, SighupServesANewCertificateToNewConnectionsWhileAJobKeepsRunning) {
  EXPECT_TRUE(contains(served_subject(), "CN = trainyard-daemon\n")) << served_subject();
  const auto id = cluster.submit(Json{{"name", "long"}, {"nodes", 1}, {"command", {{"argv", {"/bin/sleep", "4"}}}}});
  cluster.wait_job_state(id, "RUNNING", 20s);

  ASSERT_EQ(shell(make_certs(certs_ + " --server-cn trainyard-daemon-2")).first, 0);
  cluster.daemon().signal(SIGHUP);
  ASSERT_TRUE(eventually([&] { return contains(served_subject(), "trainyard-daemon-2"); }, 10s)) << served_subject();
  EXPECT_TRUE(contains(cluster.daemon_log(), "event=tls_reloaded"));

  // A reload that cannot use the files keeps what it had.
  std::ofstream(certs_ + "/server.pem") << "garbage\n";
  cluster.daemon().signal(SIGHUP);
  ASSERT_TRUE(eventually([&] { return contains(cluster.daemon_log(), "event=tls_reload_failed"); }, 10s));
  EXPECT_TRUE(contains(cluster.daemon_log(), "event=tls_reload_failed field=--tls-cert")) << cluster.daemon_log();
  EXPECT_TRUE(contains(served_subject(), "trainyard-daemon-2")) << served_subject();

  cluster.wait_job_state(id, "SUCCEEDED", 30s);
  for (const char* name : {"n1", "n2"}) {
    const std::string log = read_text(cluster.dir() + "/agent-" + std::string(name) + ".log");
    EXPECT_FALSE(contains(log, "event=link_down")) << "the reload dropped " << name << "'s link:\n" << log;
  }
}

}  // namespace
}  // namespace trainyard::testing
