// The daemon's transport flags: plain HTTP only on loopback unless told, TLS files checked at
// start with errors that name the flag.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "daemon/daemon.h"
#include "proto/errors.h"

namespace trainyard::daemon {
namespace {

// The field and message of the InvalidInput that parsing `flags` throws ("" when none).
std::pair<std::string, std::string> refusal(std::vector<std::string> flags) {
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
  EXPECT_EQ(refusal({"--listen", "127.0.0.1:0"}).first, "");
  EXPECT_EQ(refusal({"--listen", "[::1]:8080"}).first, "");
  const auto [field, message] = refusal({"--listen", "0.0.0.0:8080"});
  EXPECT_EQ(field, "--listen");
  for (const char* part : {"clear text", "--tls-cert", "--insecure-http"}) {
    EXPECT_NE(message.find(part), std::string::npos) << message;
  }
  EXPECT_EQ(refusal({"--listen", "10.1.2.3:8080", "--insecure-http"}).first, "");
}

TEST(DaemonOptions, TheStoreIsASqliteFileOrAPostgresqlServerAndAnythingElseIsNamed) {
  EXPECT_EQ(refusal({"--store", "sqlite:///var/lib/trainyard/trainyard.db"}).first, "");
  EXPECT_EQ(refusal({"--store", "postgresql://trainyard@db.example.com/trainyard?sslmode=verify-full"}).first, "");
  const auto [field, message] = refusal({"--store", "mysql://db/trainyard"});
  EXPECT_EQ(field, "--store");
  EXPECT_NE(message.find("postgresql://"), std::string::npos) << message;
}

TEST(DaemonOptions, ALeaseTtlIsRefusedWithoutAPostgresqlStoreWhereNoLeaseExists) {
  const auto [field, message] = refusal({"--lease-ttl-ms", "3000"});
  EXPECT_EQ(field, "--lease-ttl-ms");
  EXPECT_NE(message.find("postgresql://"), std::string::npos) << message;
  EXPECT_EQ(refusal({"--store", "sqlite:///var/lib/trainyard/trainyard.db", "--lease-ttl-ms", "3000"}).first,
            "--lease-ttl-ms");
  EXPECT_EQ(refusal({"--store", "postgresql://trainyard@db.example.com/trainyard", "--lease-ttl-ms", "3000"}).first, "");
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
  EXPECT_EQ(refusal({"--tls-cert", garbage()}).first, "--tls-key") << "a certificate without its key";
  EXPECT_EQ(refusal({"--tls-key", garbage()}).first, "--tls-cert") << "a key without its certificate";
  const auto [missing_field, missing] = refusal({"--tls-cert", dir_ + "/none.pem", "--tls-key", garbage()});
  EXPECT_EQ(missing_field, "--tls-cert");
  EXPECT_NE(missing.find("cannot read"), std::string::npos) << missing;
  const auto [bad_field, bad] = refusal({"--tls-cert", garbage(), "--tls-key", garbage()});
  EXPECT_EQ(bad_field, "--tls-cert");
  EXPECT_NE(bad.find("no usable PEM certificate"), std::string::npos) << bad;
  EXPECT_EQ(refusal({"--agent-client-ca", garbage()}).first, "--agent-client-ca") << "client certificates need TLS";
}

}  // namespace
}  // namespace trainyard::daemon

namespace trainyard::daemon {
namespace {

TEST(DaemonOptions, TimingsThatLeaveNoRoomToFenceAreRefusedNamingTheFlag) {
  EXPECT_EQ(refusal({}).first, "") << "the defaults fence";
  const auto [field, message] = refusal({"--heartbeat-interval-ms", "100", "--node-timeout-ms", "1500"});
  EXPECT_EQ(field, "--node-timeout-ms") << message;
  EXPECT_NE(message.find("--kill-grace-ms (10000)"), std::string::npos) << message;
  EXPECT_EQ(refusal({"--heartbeat-interval-ms", "100", "--node-timeout-ms", "1500", "--fence-ms", "0"}).first, "");
  EXPECT_EQ(refusal({"--node-timeout-ms", "30000", "--fence-ms", "25000"}).first, "--fence-ms");
}

}  // namespace
}  // namespace trainyard::daemon
