#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "agent/launch_failure.h"
#include "agent/process_spawn.h"

namespace trainyard::agent {
namespace {

namespace fs = std::filesystem;

// Real children that fail before their program runs: what the child recorded, and the words the
// agent makes of it by looking at the files.
class LaunchFailure : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("launch-failure-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string file(const std::string& name, const std::string& text, fs::perms perms) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << text;
    fs::permissions(path, perms);
    return path.string();
  }

  // Spawns argv with PATH `search_path`, from the test's directory (or `workdir`); returns what the
  // child recorded and the exit status.
  std::pair<SpawnFailure, int> spawn(std::vector<std::string> args, const std::string& search_path,
                                     const char* workdir = nullptr) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::string path_entry = "PATH=" + search_path;
    std::vector<char*> envp{path_entry.data(), nullptr};
    const int out = ::open((dir_ / "out.log").c_str(), O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0600);
    const std::string start = dir_.string();
    SpawnPlan plan{argv.data(), envp.data(), out, start.c_str(), nullptr};
    plan.workdir = workdir;
    plan.search_path = search_path.c_str();
    SpawnFailure failure;
    const pid_t pid = spawn_process(plan, failure);
    ::close(out);
    EXPECT_GT(pid, 0);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return {failure, status};
  }

  std::string describe(const SpawnFailure& failure, const std::string& program, const std::string& search_path,
                       std::optional<std::string> workdir = std::nullopt) {
    return describe_launch_failure(failure,
                                   LaunchContext{program, search_path, workdir.value_or(dir_.string()), workdir, nullptr});
  }

  fs::path dir_;
};

TEST_F(LaunchFailure, ACommandNotOnThePathIsNamedWithThePathSearched) {
  const auto [failure, status] = spawn({"no-such-command-trainyard"}, "/usr/bin:/bin");
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 127);
  EXPECT_EQ(failure.stage, SpawnStage::exec);
  EXPECT_EQ(failure.error, ENOENT);
  EXPECT_EQ(describe(failure, "no-such-command-trainyard", "/usr/bin:/bin"),
            "launch failed: command not found: no-such-command-trainyard (PATH searched: /usr/bin:/bin)");
}

TEST_F(LaunchFailure, AScriptWithoutExecutePermissionSaysChmod) {
  const std::string script = file("train.sh", "#!/bin/sh\necho hi\n", fs::perms::owner_read | fs::perms::owner_write);
  const auto [failure, status] = spawn({"./train.sh"}, "/usr/bin:/bin");
  EXPECT_EQ(failure.stage, SpawnStage::exec);
  EXPECT_EQ(failure.error, EACCES);
  const std::string text = describe(failure, "./train.sh", "/usr/bin:/bin");
  EXPECT_EQ(text.rfind("launch failed: " + script + " is not executable (mode 0600", 0), 0u) << text;
  EXPECT_NE(text.find("chmod +x"), std::string::npos) << text;
}

TEST_F(LaunchFailure, AScriptWhoseInterpreterIsMissingNamesTheInterpreter) {
  const std::string script = file("eval.py", "#!/usr/bin/python9.9 -u\nprint(1)\n", fs::perms::owner_all);
  const auto [failure, status] = spawn({"eval.py"}, dir_.string());
  EXPECT_EQ(failure.stage, SpawnStage::exec);
  EXPECT_EQ(failure.error, ENOENT);
  EXPECT_EQ(describe(failure, "eval.py", dir_.string()),
            "launch failed: interpreter not found: " + script +
                " names /usr/bin/python9.9 on its #! line, and there is no such file");
}

TEST_F(LaunchFailure, AMissingFileGivenByPathIsLookedForWhereTheJobStarts) {
  const auto [failure, status] = spawn({"./missing.sh"}, "/usr/bin:/bin");
  EXPECT_EQ(failure.stage, SpawnStage::exec);
  EXPECT_EQ(describe(failure, "./missing.sh", "/usr/bin:/bin"),
            "launch failed: no such file: ./missing.sh (looked for in " + dir_.string() + ")");
}

TEST_F(LaunchFailure, AWorkingDirectoryThatDoesNotExistIsNamed) {
  const std::string missing = (dir_ / "no-such-dir").string();
  const auto [failure, status] = spawn({"/bin/true"}, "/usr/bin:/bin", missing.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 127);
  EXPECT_EQ(failure.stage, SpawnStage::enter_workdir);
  EXPECT_EQ(failure.error, ENOENT);
  const std::string text = describe(failure, "/bin/true", "/usr/bin:/bin", missing);
  EXPECT_EQ(text, "launch failed: the working directory " + missing + " cannot be entered by the agent's account (uid " +
                      std::to_string(::geteuid()) + "): No such file or directory");
}

// The search is the job's PATH's, not the agent's (which execvpe would have used): a command found
// only on the job's PATH runs, and a script without #! runs under /bin/sh, as execvpe runs it.
TEST_F(LaunchFailure, TheProgramIsLookedUpInTheJobsPathNotTheAgents) {
  const fs::path bin = dir_ / "bin";
  fs::create_directories(bin);
  const std::string marker = (dir_ / "ran.txt").string();
  std::ofstream(bin / "job-only-tool") << "echo ran \"$1\" > " << marker << "\n";
  fs::permissions(bin / "job-only-tool", fs::perms::owner_all);
  const auto [failure, status] = spawn({"job-only-tool", "with-arg"}, "/nonexistent-dir::" + bin.string());
  EXPECT_EQ(failure.stage, SpawnStage::none);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::string line;
  std::getline(std::ifstream(marker), line);
  EXPECT_EQ(line, "ran with-arg");
}

TEST_F(LaunchFailure, AReachableWorkingDirectoryIsWhereTheProgramStarts) {
  const fs::path work = dir_ / "exp";
  fs::create_directories(work);
  const std::string pwd_file = (dir_ / "pwd.txt").string();
  const auto [failure, status] = spawn({"/bin/sh", "-c", "pwd > " + pwd_file}, "/usr/bin:/bin", work.c_str());
  EXPECT_EQ(failure.stage, SpawnStage::none);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::string pwd;
  std::getline(std::ifstream(pwd_file), pwd);
  EXPECT_EQ(pwd, work.string());
}

// The agent looks as root; a job hears only what its own account could have found out.
TEST_F(LaunchFailure, AFileBehindADirectoryTheAccountCannotSearchIsNotDescribed) {
  const fs::path hidden = dir_ / "hidden";
  fs::create_directories(hidden);
  std::ofstream(hidden / "train.sh") << "#!/usr/bin/secret-interpreter\n";
  fs::permissions(hidden, fs::perms::owner_all, fs::perm_options::replace);
  JobAccount other{"tyj-9", 61234, 61234, true, {}, "/nonexistent"};
  const std::string program = (hidden / "train.sh").string();
  const SpawnFailure denied{SpawnStage::exec, EACCES, "exec"};
  EXPECT_EQ(describe_launch_failure(denied, LaunchContext{program, "/usr/bin", dir_.string(), std::nullopt, &other}),
            "launch failed: " + program + " cannot be executed by account tyj-9 (uid 61234): Permission denied");
  // The same file described to an account that may look: its mode, and its #! line.
  EXPECT_NE(describe_launch_failure(denied, LaunchContext{program, "/usr/bin", dir_.string(), std::nullopt, nullptr})
                .find("is not executable (mode"),
            std::string::npos);
  const SpawnFailure missing{SpawnStage::exec, ENOENT, "exec"};
  const std::string told =
      describe_launch_failure(missing, LaunchContext{program, "/usr/bin", dir_.string(), std::nullopt, &other});
  EXPECT_EQ(told.find("secret-interpreter"), std::string::npos) << told;
  const std::string workdir = (hidden / "exp").string();
  fs::create_directory(workdir);
  const std::string entered = describe_launch_failure(
      SpawnFailure{SpawnStage::enter_workdir, EACCES, "chdir"}, LaunchContext{"x", "/usr/bin", workdir, workdir, &other});
  EXPECT_EQ(entered.find("mode"), std::string::npos) << entered;
}

// The attempt's mount namespace is the agent's making: a failure to join it is the node's
// ("node files: ", infrastructure in daemon/base/failure_rules.cpp), not the job's.
TEST_F(LaunchFailure, NotJoiningThePrivateTmpIsTheNodesFailure) {
  const std::string told = describe_launch_failure(SpawnFailure{SpawnStage::private_tmp, EINVAL, "joining the attempt's mount namespace"},
                                                   LaunchContext{"x", "/usr/bin", dir_.string(), std::nullopt, nullptr});
  EXPECT_EQ(told, "node files: the attempt's private /tmp and /dev/shm: joining the attempt's mount namespace: Invalid argument");
}

}  // namespace
}  // namespace trainyard::agent
