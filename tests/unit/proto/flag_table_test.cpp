// The flag table reader under FlagParser and every CLI command.
#include <gtest/gtest.h>

#include "proto/flag_parser.h"

namespace trainyard::inline proto {
namespace {

const std::vector<FlagSpec> kFlags = {
    {"--count", "N", "how many"},
    {"--tag", "T", "a tag", true},
    {"--fast", "", "a switch"},
};

std::string rejected(const std::vector<std::string>& args) {
  try {
    parse_flags(args, kFlags, "test");
  } catch (const InvalidInput& e) {
    return e.field();
  }
  return "<accepted>";
}

TEST(Flags, ReadsEveryForm) {
  const ParsedArgs p = parse_flags({"a", "--count", "3", "--tag=x", "b", "--tag", "y", "--fast", "--", "--count", "-h"},
                                   kFlags, "test");
  EXPECT_EQ(p.positionals, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(p.opt_integer("--count", 0, 10), 3);
  EXPECT_EQ(p.all("--tag"), (std::vector<std::string>{"x", "y"}));
  EXPECT_TRUE(p.has("--fast"));
  EXPECT_FALSE(p.help);  // "-h" after "--" belongs to the program
  EXPECT_EQ(p.trailing, (std::vector<std::string>{"--count", "-h"}));
}

TEST(Flags, ValuesMayLookLikeFlagsOrBeEmpty) {
  const ParsedArgs p = parse_flags({"--count", "-1", "--tag="}, kFlags, "test");
  EXPECT_EQ(p.opt_string("--count"), "-1");
  EXPECT_EQ(p.opt_string("--tag"), "");
  EXPECT_FALSE(p.trailing.has_value());
}

TEST(Flags, StdinDashIsAPositional) {
  EXPECT_EQ(parse_flags({"-"}, kFlags, "test").positionals, std::vector<std::string>{"-"});
}

TEST(Flags, HelpIsRecognisedAnywhereBeforeDashDash) {
  EXPECT_TRUE(parse_flags({"x", "--help"}, kFlags, "test").help);
  EXPECT_TRUE(parse_flags({"-h", "--count", "1"}, kFlags, "test").help);
}

TEST(Flags, MistakesNameTheFlag) {
  EXPECT_EQ(rejected({"--cuont", "1"}), "--cuont");
  EXPECT_EQ(rejected({"-c"}), "-c");
  EXPECT_EQ(rejected({"--count"}), "--count");
  EXPECT_EQ(rejected({"--count", "1", "--count", "2"}), "--count");
  EXPECT_EQ(rejected({"--fast=yes"}), "--fast");
  EXPECT_EQ(rejected({"--tag", "a", "--tag", "b"}), "<accepted>");
}

TEST(Flags, IntegersAreCheckedForSyntaxAndRange) {
  const ParsedArgs p = parse_flags({"--count", "11"}, kFlags, "test");
  EXPECT_THROW(p.opt_integer("--count", 0, 10), InvalidInput);
  EXPECT_EQ(p.opt_integer("--count", 0, 11), 11);
  EXPECT_EQ(parse_flags({}, kFlags, "test").opt_integer("--count", 0, 10), std::nullopt);
  for (const char* bad : {"", "1.5", "0x10", "12abc", " 1", "99999999999999999999"}) {
    EXPECT_THROW(parse_integer("--n", bad, 0, 100), InvalidInput) << bad;
  }
  EXPECT_EQ(parse_integer("--n", "-5", -10, 10), -5);
}

TEST(Flags, HelpListsEveryFlag) {
  const std::string help = format_flag_help(kFlags);
  EXPECT_NE(help.find("--count N"), std::string::npos);
  EXPECT_NE(help.find("a tag (repeatable)"), std::string::npos);
  EXPECT_NE(help.find("--fast"), std::string::npos);
}

}  // namespace
}  // namespace trainyard::inline proto
