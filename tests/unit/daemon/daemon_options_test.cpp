// The daemon's transport flags: plain HTTP only on loopback unless told, TLS files checked at
// start with errors that name the flag.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "daemon/main/daemon.h"
#include "proto/errors.h"

namespace trainyard::daemon {
namespace {

// The field and message of the InvalidInput that parsing `flags` throws ("" when none).
std::pair<std::string, std::string> flag_refusal(std::vector<std::string> flags) {
  std::vector<const char*> argv = {"trainyard-daemon", "--data-dir", "/tmp/unused"};
  for (const auto& f : flags) argv.push_back(f.c_str());
  DaemonOptions options;
  try {
    parse_daemon_options(static_cast<int>(argv.size()), argv.data(), options);
  } catch (const InvalidInput& e) {
    return {e.field(), e.what()};
  }
  return {"", ""};
}

TEST(DaemonOptions, PlainHttpOffLoopbackNeedsInsecureHttpAndSaysWhy) {
  EXPECT_EQ(flag_refusal({"--listen", "127.0.0.1:0"}).first, "");
  EXPECT_EQ(flag_refusal({"--listen", "[::1]:8080"}).first, "");
  const auto [field, message] = flag_refusal({"--listen", "0.0.0.0:8080"});
  EXPECT_EQ(field, "--listen");
  for (const char* part : {"clear text", "--tls-cert", "--insecure-http"}) {
    EXPECT_NE(message.find(part), std::string::npos) << message;
  }
  EXPECT_EQ(flag_refusal({"--listen", "10.1.2.3:8080", "--insecure-http"}).first, "");
}

TEST(DaemonOptions, TheStoreIsASqliteFileOrAPostgresqlServerAndAnythingElseIsNamed) {
  EXPECT_EQ(flag_refusal({"--store", "sqlite:///var/lib/trainyard/trainyard.db"}).first, "");
  EXPECT_EQ(flag_refusal({"--store", "postgresql://trainyard@db.example.com/trainyard?sslmode=verify-full"}).first, "");
  const auto [field, message] = flag_refusal({"--store", "mysql://db/trainyard"});
  EXPECT_EQ(field, "--store");
  EXPECT_NE(message.find("postgresql://"), std::string::npos) << message;
}

TEST(DaemonOptions, ALeaseTtlIsRefusedWithoutAPostgresqlStoreWhereNoLeaseExists) {
  const auto [field, message] = flag_refusal({"--lease-ttl-ms", "3000"});
  EXPECT_EQ(field, "--lease-ttl-ms");
  EXPECT_NE(message.find("postgresql://"), std::string::npos) << message;
  EXPECT_EQ(flag_refusal({"--store", "sqlite:///var/lib/trainyard/trainyard.db", "--lease-ttl-ms", "3000"}).first,
            "--lease-ttl-ms");
  EXPECT_EQ(
      flag_refusal({"--store", "postgresql://trainyard@db.example.com/trainyard", "--lease-ttl-ms", "3000"}).first, "");
}

class TlsFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/trainyard-tls-options-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    std::ofstream(dir_ + "/garbage.pem") << "not a certificate\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string garbage() const { return dir_ + "/garbage.pem"; }
  std::string dir_;
};

TEST_F(TlsFiles, BadOrMissingFilesAreNamedByTheirFlag) {
  EXPECT_EQ(flag_refusal({"--tls-cert", garbage()}).first, "--tls-key") << "a certificate without its key";
  EXPECT_EQ(flag_refusal({"--tls-key", garbage()}).first, "--tls-cert") << "a key without its certificate";
  const auto [missing_field, missing] = flag_refusal({"--tls-cert", dir_ + "/none.pem", "--tls-key", garbage()});
  EXPECT_EQ(missing_field, "--tls-cert");
  EXPECT_NE(missing.find("cannot read"), std::string::npos) << missing;
  const auto [bad_field, bad] = flag_refusal({"--tls-cert", garbage(), "--tls-key", garbage()});
  EXPECT_EQ(bad_field, "--tls-cert");
  EXPECT_NE(bad.find("no usable PEM certificate"), std::string::npos) << bad;
  EXPECT_EQ(flag_refusal({"--agent-client-ca", garbage()}).first, "--agent-client-ca")
      << "client certificates need TLS";
}

}  // namespace
}  // namespace trainyard::daemon

namespace trainyard::daemon {
namespace {

TEST(DaemonOptions, TimingsThatLeaveNoRoomToFenceAreRefusedNamingTheFlag) {
  EXPECT_EQ(flag_refusal({}).first, "") << "the defaults fence";
  const auto [field, message] = flag_refusal({"--heartbeat-interval-ms", "100", "--node-timeout-ms", "1500"});
  EXPECT_EQ(field, "--node-timeout-ms") << message;
  EXPECT_NE(message.find("--kill-grace-ms (10000)"), std::string::npos) << message;
  EXPECT_EQ(flag_refusal({"--heartbeat-interval-ms", "100", "--node-timeout-ms", "1500", "--fence-ms", "0"}).first, "");
  EXPECT_EQ(flag_refusal({"--node-timeout-ms", "30000", "--fence-ms", "25000"}).first, "--fence-ms");
}

TEST(DaemonOptions, MasterPortsAreARangeOfUnprivilegedPortsAndAnythingElseIsNamed) {
  EXPECT_EQ(flag_refusal({"--master-ports", "29500-29599"}).first, "");
  for (const char* bad : {"29500", "80-90", "30000-20000", "20000-70000", "a-b", "20000-"}) {
    const auto [field, message] = flag_refusal({"--master-ports", bad});
    EXPECT_EQ(field, "--master-ports") << bad << ": " << message;
    EXPECT_NE(message.find(bad), std::string::npos) << message;
  }
}

TEST(DaemonOptions, AJobNetworkIsAnIpv4NetworkWithRoomAndAnythingElseIsNamed) {
  EXPECT_EQ(flag_refusal({"--job-network", "10.240.0.0/12"}).first, "");
  for (const char* bad : {"10.240.0.0", "10.240.0.1/12", "10.240.0.0/30", "10.0.0.0/4", "fd00::/64", "10.240.0.0/1x"}) {
    const auto [field, message] = flag_refusal({"--job-network", bad});
    EXPECT_EQ(field, "--job-network") << bad << ": " << message;
  }
  EXPECT_NE(flag_refusal({"--job-network", "10.240.0.1/12"}).second.find("starts at 10.240.0.0"), std::string::npos);
}

// Each component declares its flags bound to its own config: what the daemon parses is what the
// component runs with, without a copy in between.
TEST(DaemonOptions, EachComponentsFlagsSetItsOwnConfig) {
  const std::vector<const char*> argv = {"trainyard-daemon",
                                         "--data-dir",
                                         "/tmp/unused",
                                         "--heartbeat-interval-ms",
                                         "700",
                                         "--health-interval-s",
                                         "120",
                                         "--suspect-pct",
                                         "40",
                                         "--health-collective-kib",
                                         "2",
                                         "--preempt-exempt-shares",
                                         "prod,,canary",
                                         "--compute-reservation-pct",
                                         "20",
                                         "--rate-limit-rps",
                                         "7",
                                         "--rate-limit-admins",
                                         "1",
                                         "--max-node-cores",
                                         "64",
                                         "--webhook-give-up-s",
                                         "60",
                                         "--webhook-timeout-ms",
                                         "1500",
                                         "--max-connections",
                                         "9",
                                         "--max-connections-per-user",
                                         "7",
                                         "--event-retention-days",
                                         "2"};
  DaemonOptions o;
  ASSERT_TRUE(parse_daemon_options(static_cast<int>(argv.size()), argv.data(), o));
  const JobManagerConfig& jm = o.job_manager.config;
  EXPECT_EQ(jm.heartbeat_interval, Millis(700));
  EXPECT_EQ(jm.periodic_check_interval, std::chrono::seconds(120));
  EXPECT_DOUBLE_EQ(jm.health.policy.suspect_fraction, 0.4);
  EXPECT_EQ(jm.health.collective.elements, 512u);
  EXPECT_EQ(jm.preemption.exempt_shares, (std::set<std::string>{"canary", "prod"}));
  EXPECT_EQ(jm.canary_interval, std::chrono::hours(1)) << "the daemon's default, not JobManagerConfig's";
  EXPECT_DOUBLE_EQ(o.scheduler.compute_reservation, 0.2);
  EXPECT_DOUBLE_EQ(o.users.rate.per_second, 7);
  EXPECT_TRUE(o.users.rate.include_admins);
  EXPECT_EQ(o.node_claims.max_cores, 64);
  EXPECT_EQ(o.webhooks.backoff.give_up_after, std::chrono::seconds(60));
  EXPECT_EQ(o.webhook_client.total_timeout, Millis(1500));
  EXPECT_EQ(o.server.caps.total, 9u);
  EXPECT_EQ(o.server.caps.per_caller, 7u);
  EXPECT_EQ(o.event_retention, std::chrono::days(2));
  EXPECT_GT(resolve(o.job_manager).fence_after, Millis(0)) << "derived when --fence-ms is not given";
}

TEST(DaemonOptions, EveryDefaultIsShownInTheFlagsUnits) {
  const std::vector<const char*> argv = {"trainyard-daemon", "--data-dir", "/tmp/unused", "--print-config"};
  DaemonOptions o;
  ::testing::internal::CaptureStdout();
  ASSERT_FALSE(parse_daemon_options(static_cast<int>(argv.size()), argv.data(), o));
  const std::string printed = ::testing::internal::GetCapturedStdout();
  for (const char* setting :
       {R"("heartbeat-interval-ms": 5000,)", R"("health-interval-s": 3600,)", R"("health-first-check-s": 60,)",
        R"("health-group-size": 16,)", R"("health-max-checking-pct": 10,)",
        R"("suspect-pct": 50,)", R"("slow-gemm-pct": 200,)", R"("health-collective-kib": 1024,)",
        R"("usage-half-life-s": 604800,)", R"("preempt-above-fair-share-pct": 150,)", R"("fence-ms": -1,)",
        R"("rate-limit-rps": 50,)", R"("webhook-backoff-cap-ms": 600000,)", R"("event-retention-days": 30,)",
        R"("max-ws-message-bytes": 8388608,)", R"("lease-ttl-ms": 5000,)"}) {
    EXPECT_NE(printed.find(setting), std::string::npos) << setting << "\n" << printed;
  }
}

}  // namespace
}  // namespace trainyard::daemon
