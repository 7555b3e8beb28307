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
  EXPECT_FALSE(JobAccounts(options, false).account_for("alice", "", 7, 1, "/w/attempts/9"));
  EXPECT_FALSE(JobAccounts(JobAccountOptions{}, false).account_for("alice", "", 7, 1, "/w/attempts/9"));
}

TEST(JobAccounts, ARootAgentRunsEachUnmappedJobAsAnAccountOfItsOwn) {
  JobAccountOptions options;
  options.user_map = {{"alice", "daemon"}};
  const JobAccounts accounts(options, true);
  const auto bob7 = accounts.account_for("bob", "", 7, 1, "/w/attempts/9");
  ASSERT_TRUE(bob7);
  EXPECT_EQ(bob7->uid, 0x60000000u + 7);
  EXPECT_EQ(bob7->gid, 0x70000000u + 1) << "attempt 1's own group, past the uid range";
  EXPECT_TRUE(bob7->gid_is_the_attempts);
  EXPECT_TRUE(bob7->groups.empty());
  EXPECT_EQ(bob7->name, "trainyard-job-7");
  EXPECT_EQ(bob7->home, "/w/attempts/9");
  EXPECT_EQ(accounts.account_for("bob", "", 8, 1, "/w/attempts/10")->uid, 0x60000000u + 8) << "another job, another uid";
  EXPECT_EQ(accounts.account_for("carol", "", 7, 1, "/w/attempts/11")->uid, bob7->uid)
      << "every attempt of a job gets the same uid, whoever asks";
  const auto retry = accounts.account_for("bob", "", 7, 2, "/w/attempts/12");
  EXPECT_EQ(retry->uid, bob7->uid) << "the job's files stay its own";
  EXPECT_EQ(retry->gid, 0x70000000u + 2) << "each attempt writes with a group no other attempt has";
  EXPECT_EQ(accounts.account_for("alice", "", 7, 1, "/w/attempts/9")->name, "daemon");
  EXPECT_FALSE(accounts.account_for("alice", "", 7, 1, "/w/attempts/9")->gid_is_the_attempts);
  EXPECT_EQ(accounts.account_for("alice", "", 7, 1, "/w/attempts/9")->uid, 1u);
}

// Issue 56: job and attempt ids start again at 1 with every database, and two clusters may share a
// host: a cluster's name shifts its jobs' uids and attempts' gids round the range.
TEST(JobAccounts, AClustersNameShiftsItsJobsUidsAndGidsRoundTheRange) {
  JobAccountOptions options;
  options.job_uids = {1000000, 0x100};
  const JobAccounts accounts(options, true);
  EXPECT_EQ(cluster_uid_shift(""), 0u);
  EXPECT_EQ(cluster_uid_shift("00000000000000f0"), 0xF0u);
  const auto old_job1 = accounts.account_for("alice", "", 1, 1, "/w");
  const auto new_job1 = accounts.account_for("bob", "00000000000000f0", 1, 1, "/w");
  EXPECT_EQ(old_job1->uid, 1000001u);
  EXPECT_EQ(new_job1->uid, 1000000u + 0xF1) << "another cluster's job 1";
  EXPECT_EQ(new_job1->gid, 1000000u + 0x100 + 0xF1) << "and its attempt 1's group";
  EXPECT_EQ(accounts.account_for("bob", "00000000000000f0", 0x10, 1, "/w")->uid, 1000000u)
      << "past the range's end it comes round to the start";
  EXPECT_EQ(accounts.account_for("bob", "00000000000000f0", 0x10, 0x10, "/w")->gid, 1000000u + 0x100);
}

TEST(JobAccounts, AnExplicitJobUserIsSharedByEveryUnmappedJob) {
  JobAccountOptions options;
  options.job_user = "nobody";
  const JobAccounts accounts(options, true);
  EXPECT_EQ(accounts.account_for("bob", "", 7, 1, "/w")->name, "nobody");
  EXPECT_EQ(accounts.account_for("carol", "", 8, 1, "/w")->uid, accounts.account_for("bob", "", 7, 1, "/w")->uid);
  EXPECT_NE(accounts.describe().find("shared by every job"), std::string::npos) << accounts.describe();
}

TEST(JobAccounts, AJobIdPastTheRangeIsRefusedNamingTheJobId) {
  JobAccountOptions options;
  options.job_uids = {1000000, 10};
  const JobAccounts accounts(options, true);
  EXPECT_EQ(accounts.account_for("bob", "", 9, 1, "/w")->uid, 1000009u);
  try {
    accounts.account_for("bob", "", 10, 1, "/w");
    ADD_FAILURE() << "job 10 accepted past a range of 10 uids";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.field(), "job_id");
    EXPECT_NE(e.message().find("1000000-1000009"), std::string::npos) << e.message();
  }
  EXPECT_THROW(per_job_account(options.job_uids, "", -1, 1, "/w"), InvalidInput);
}

TEST(JobAccounts, ARangeThatPassesTheLargestUidOrHoldsANamedAccountIsRefused) {
  JobAccountOptions options;
  options.job_uids = {0xFFFFFF00u, 0x80};
  EXPECT_THROW(JobAccounts(options, true), InvalidInput) << "(uid_t)-1 is not a gid for the last attempts";
  options.job_uids = {0xFFFFFF00u, 0x7F};
  EXPECT_NO_THROW(JobAccounts(options, true));
  options.job_uids = {1, 10};  // daemon is uid 1
  options.user_map = {{"alice", "daemon"}};
  EXPECT_NE(message_of([&] { JobAccounts(options, true); }).find("inside the per-job uid range 1-10"),
            std::string::npos);
}

TEST(JobAccounts, RootNeedsAllowRootJobs) {
  JobAccountOptions options;
  options.user_map = {{"alice", "root"}};
  EXPECT_NE(message_of([&] { JobAccounts(options, true); }).find("\"alice\": \"root\" is root"), std::string::npos);
  options.user_map.clear();
  options.job_user = "root";
  EXPECT_THROW(JobAccounts(options, true), InvalidInput);
  options.allow_root_jobs = true;
  EXPECT_EQ(JobAccounts(options, true).account_for("bob", "", 7, 1, "/w")->uid, 0u);
  options.job_user.reset();
  EXPECT_FALSE(JobAccounts(options, true).account_for("bob", "", 7, 1, "/w")) << "--allow-root-jobs alone: jobs run as the agent";
}

TEST(JobAccounts, AMissingAccountIsRefusedAtStartNamingTheKey) {
  JobAccountOptions options;
  options.user_map = {{"carol", "no-such-account-xyz"}};
  EXPECT_NE(message_of([&] { JobAccounts(options, true); }).find("\"carol\": no Unix account"), std::string::npos);
}

}  // namespace
}  // namespace trainyard::agent
