#include "agent/job_account.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

#include "proto/errors.h"

namespace trainyard::agent {
namespace {

std::string write_map(const std::string& text) {
  const std::string path = ::testing::TempDir() + "/user-map-" + std::to_string(::getpid()) + ".json";
  std::ofstream(path) << text;
  return path;
}

std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.field(), "--user-map");
    return e.message();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

TEST(UserMap, IsAnObjectOfTrainyardUserToUnixUserAndNamesTheBadKey) {
  EXPECT_EQ(read_user_map(write_map(R"({"alice": "daemon", "bob": "bin"})")),
            (std::map<std::string, std::string>{{"alice", "daemon"}, {"bob", "bin"}}));
  EXPECT_NE(message_of([] { read_user_map(write_map(R"(["alice"])")); }).find("JSON object"), std::string::npos);
  EXPECT_NE(message_of([] { read_user_map(write_map(R"({"alice": 3})")); }).find("\"alice\""), std::string::npos);
  EXPECT_NE(message_of([] { read_user_map("/nonexistent/map.json"); }).find("cannot read"), std::string::npos);
}

TEST(JobAccounts, AnAgentThatIsNotRootRunsJobsAsItself) {
  JobAccountOptions options;
  options.job_user = "daemon";
  EXPECT_FALSE(JobAccounts(options, false).account_for("alice"));
}

TEST(JobAccounts, ARootAgentRunsJobsAsNobodyUnlessMapped) {
  JobAccountOptions options;
  options.user_map = {{"alice", "daemon"}};
  const JobAccounts accounts(options, true);
  EXPECT_EQ(accounts.account_for("bob")->name, "nobody");
  EXPECT_NE(accounts.account_for("bob")->uid, 0u);
  EXPECT_EQ(accounts.account_for("alice")->name, "daemon");
  EXPECT_EQ(accounts.account_for("alice")->uid, 1u);
}

TEST(JobAccounts, RootNeedsAllowRootJobs) {
  JobAccountOptions options;
  options.user_map = {{"alice", "root"}};
  EXPECT_NE(message_of([&] { JobAccounts(options, true); }).find("\"alice\": \"root\" is root"), std::string::npos);
  options.user_map.clear();
  options.job_user = "root";
  EXPECT_THROW(JobAccounts(options, true), InvalidInput);
  options.allow_root_jobs = true;
  EXPECT_EQ(JobAccounts(options, true).account_for("bob")->uid, 0u);
  options.job_user.reset();
  EXPECT_FALSE(JobAccounts(options, true).account_for("bob")) << "--allow-root-jobs alone: jobs run as the agent";
}

TEST(JobAccounts, AMissingAccountIsRefusedAtStartNamingTheKey) {
  JobAccountOptions options;
  options.user_map = {{"carol", "no-such-account-xyz"}};
  EXPECT_NE(message_of([&] { JobAccounts(options, true); }).find("\"carol\": no Unix account"), std::string::npos);
}

}  // namespace
}  // namespace trainyard::agent
