#include "proto/flag_parser.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

TEST(FlagParser, ASwitchTakesNoValue) {
  bool allow = false;
  std::string name;
  FlagParser flags("test", "");
  flags.add_bool("allow-root-jobs", "", &allow);
  flags.add_string("name", "", &name);
  const char* given[] = {"test", "--allow-root-jobs", "--name", "n1"};
  ASSERT_TRUE(flags.parse(4, given));
  EXPECT_TRUE(allow);
  EXPECT_EQ(name, "n1");

  FlagParser again("test", "");
  again.add_bool("allow-root-jobs", "", &allow);
  const char* with_value[] = {"test", "--allow-root-jobs=yes"};
  try {
    again.parse(2, with_value);
    ADD_FAILURE() << "a switch took a value";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.field(), "--allow-root-jobs");
  }
}

TEST(FlagParser, ASwitchNotGivenStaysOff) {
  bool allow = false;
  FlagParser flags("test", "");
  flags.add_bool("allow-root-jobs", "", &allow);
  const char* given[] = {"test"};
  ASSERT_TRUE(flags.parse(1, given));
  EXPECT_FALSE(allow);
}

}  // namespace
}  // namespace trainyard
