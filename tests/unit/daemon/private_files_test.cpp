// The daemon's private files: token files others could read are refused, the rest made private.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "daemon/nodes/private_files.h"

namespace trainyard::daemon {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class PrivateFiles : public ::testing::Test {
 protected:
  PrivateFiles() : dir(fs::path(::testing::TempDir()) / ("private-" + std::to_string(::getpid()))) {
    fs::create_directories(dir);
  }
  ~PrivateFiles() override { fs::remove_all(dir); }
  fs::path dir;
};

TEST_F(PrivateFiles, ATokenFileOthersCanReadIsRefusedNamingItAndItsMode) {
  const fs::path token = dir / "admin.token";
  EXPECT_TRUE(check_token_file_private(token).ok()) << "a missing file is made, not refused";
  write_file_atomically(token, "ty_x\n", 0600);
  EXPECT_TRUE(check_token_file_private(token).ok());
  fs::permissions(token, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  const Result<void> refusal = check_token_file_private(token);
  ASSERT_FALSE(refusal.ok());
  EXPECT_EQ(refusal.error().code, ErrorCode::invalid_input);
  EXPECT_EQ(refusal.error().field, token.string());
  EXPECT_THAT(refusal.error().message, HasSubstr("mode 0644"));
  fs::permissions(token, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_write);
  EXPECT_THAT(check_token_file_private(token).error().message, HasSubstr("mode 0620")) << "writable by the group: replaceable";
}

TEST_F(PrivateFiles, MakePrivateTightensAnExistingFileAndIgnoresAMissingOne) {
  const fs::path db = dir / "trainyard.db";
  make_private(db, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_FALSE(fs::exists(db));
  write_file_atomically(db, "x", 0644);
  fs::permissions(db, fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_read);
  make_private(db, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(fs::status(db).permissions() & fs::perms::mask, fs::perms::owner_read | fs::perms::owner_write);
}

}  // namespace
}  // namespace trainyard::daemon
