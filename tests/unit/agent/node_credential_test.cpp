// The node's own credential on disk: private to the agent's user, replaced whole.
#include "agent/node_credential.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

namespace trainyard::agent {
namespace {

TEST(NodeCredential, IsSavedReadableByTheAgentOnlyAndLoadedBack) {
  const auto dir = std::filesystem::temp_directory_path() / ("node-credential-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = node_credential_path(dir.string());
  EXPECT_EQ(load_node_credential(path), "") << "no file: no credential yet";

  save_node_credential(path, "ty_first");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(load_node_credential(path), "ty_first");

  save_node_credential(path, "ty_second");
  EXPECT_EQ(load_node_credential(path), "ty_second");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trainyard::agent
