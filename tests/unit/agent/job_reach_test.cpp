#include "agent/job_reach.h"

#include <unistd.h>

#include <filesystem>
#include <gtest/gtest.h>

#include "proto/errors.h"
#include "tests/support/temp_dir.h"

namespace trainyard::agent {
namespace {

namespace fs = std::filesystem;

constexpr auto kTraversable = fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec;

// A directory tree whose top every account may search, as /srv or /var would be, with a private
// directory (mode 0700, as /root or a home directory) inside it.
class JobReach : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "taking a job account's credentials needs root (CI runs as root)";
    fs::permissions(top.path(), kTraversable, fs::perm_options::replace);
    fs::create_directories(inner);
    fs::permissions(private_dir, fs::perms::owner_all, fs::perm_options::replace);
  }

  TempDir top;
  fs::path private_dir = top.path() / "home";
  fs::path inner = private_dir / "checkout" / "checkpoints";
  JobAccount job_account = per_job_account(JobUidRange{}, "", 3, 1, "/");
};

TEST_F(JobReach, FindsTheFirstDirectoryTheAccountCannotSearch) {
  EXPECT_EQ(first_unsearchable(job_account, inner.string()), private_dir.string());
  fs::permissions(private_dir, kTraversable, fs::perm_options::replace);
  EXPECT_EQ(first_unsearchable(job_account, inner.string()), std::nullopt) << "0711 lets it pass without listing";
  EXPECT_EQ(first_unsearchable(job_account, (inner / "job-7" / "step-1").string()), std::nullopt)
      << "directories not made yet end the walk: whoever makes them chooses their mode";
}

TEST_F(JobReach, AnAgentRefusesDirectoriesItsJobsCannotReachNamingTheFlagAndTheDirectory) {
  const JobAccounts per_job(JobAccountOptions{}, true);
  try {
    check_jobs_can_reach(per_job, "--checkpoint-root", inner.string());
    FAIL() << "accepted a directory the jobs cannot reach";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.field(), "--checkpoint-root");
    EXPECT_NE(e.message().find("\"" + private_dir.string() + "\" (mode 0700"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("trainyard-job-0 (uid 1610612736)"), std::string::npos) << e.message();
  }
  EXPECT_NO_THROW(check_jobs_can_reach(JobAccounts(JobAccountOptions{}, false), "--checkpoint-root", inner.string()))
      << "an agent that is not root runs jobs as itself, which reaches its own directories";
  fs::permissions(private_dir, kTraversable, fs::perm_options::replace);
  EXPECT_NO_THROW(check_jobs_can_reach(per_job, "--checkpoint-root", inner.string()));
}

TEST(JobAccountsPossible, AreTheMappedAndNamedAccountsAndOneForEveryJobsOwn) {
  JobAccountOptions options;
  options.user_map = {{"alice", "daemon"}};
  const auto per_job = JobAccounts(options, true).possible_accounts();
  ASSERT_EQ(per_job.size(), 2u);
  EXPECT_EQ(per_job[0].name, "daemon");
  EXPECT_EQ(per_job[1].uid, JobUidRange{}.first) << "job 0's account stands for every job's own";
  options.job_uids.count = 1;
  EXPECT_EQ(JobAccounts(options, true).possible_accounts().size(), 2u) << "a range of one job id still has one";
  options.job_user = "bin";
  const auto named = JobAccounts(options, true).possible_accounts();
  ASSERT_EQ(named.size(), 2u);
  EXPECT_EQ(named[1].name, "bin");
  EXPECT_TRUE(JobAccounts(options, false).possible_accounts().empty()) << "jobs run as the agent";
  options.job_user.reset();
  options.allow_root_jobs = true;
  options.user_map.clear();
  EXPECT_TRUE(JobAccounts(options, true).possible_accounts().empty()) << "jobs run as the root agent itself";
}

}  // namespace
}  // namespace trainyard::agent
