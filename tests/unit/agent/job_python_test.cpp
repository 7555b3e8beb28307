#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "agent/job_python.h"

namespace trainyard::agent {
namespace {

namespace fs = std::filesystem;

// Every job account reads them, whatever the agent's umask; a job cannot change them.
TEST(JobPython, WritesEveryFileReadableByAllAndWritableByTheAgentAlone) {
  const fs::path dir = fs::temp_directory_path() / ("job-python-" + std::to_string(::getpid()));
  const mode_t old_mask = ::umask(077);
  install_job_python((dir / "python").string());
  install_job_python((dir / "python").string());  // again, as a restarted agent does
  ::umask(old_mask);
  ASSERT_FALSE(job_python_files().empty());
  for (const auto& file : job_python_files()) {
    const fs::path path = dir / "python" / file.path;
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), file.content) << path;
    EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read)
        << path;
    for (fs::path folder = path.parent_path(); folder != dir; folder = folder.parent_path()) {
      EXPECT_EQ(fs::status(folder).permissions() & fs::perms::others_exec, fs::perms::others_exec) << folder;
    }
  }
  EXPECT_TRUE(fs::exists(dir / "python" / "sitecustomize.py"));
  EXPECT_TRUE(fs::exists(dir / "python" / "trainyard" / "__init__.py"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace trainyard::agent
