// A job's output as people who may not read its logs see it (daemon/base/quoted_output.h).
#include "daemon/base/quoted_output.h"

#include <gtest/gtest.h>

namespace trainyard::daemon {
namespace {

TEST(QuotedOutput, ALineIsMaskedStrippedAndBounded) {
  EXPECT_EQ(masked_line("HF_TOKEN=hf_abc PATH=/bin \x1b[1mbold\x07"), "HF_TOKEN=<masked> PATH=/bin [1mbold");
  EXPECT_EQ(masked_line(std::string(300, 'x'), 10), "xxxxxxxxxx...");
}

TEST(QuotedOutput, TheTailKeepsTheNewestLinesThatSaySomethingOldestFirst) {
  EXPECT_EQ(quoted_tail("a\nb\n\n   \nc\nd", 3, 1000), "b\nc\nd");
  EXPECT_EQ(quoted_tail("a\nb\nc\n", 10, 1000), "a\nb\nc");
  EXPECT_EQ(quoted_tail("\n \n\t\n", 5, 1000), "");
  EXPECT_EQ(quoted_tail("", 5, 1000), "");
}

TEST(QuotedOutput, TheTailKeepsWholeLinesWithinItsBound) {
  EXPECT_EQ(quoted_tail("first line\nsecond\nthird", 10, 13), "second\nthird") << "\"first line\" would pass 13";
  EXPECT_EQ(quoted_tail("a very long last line", 10, 5), "") << "never half a line";
}

}  // namespace
}  // namespace trainyard::daemon
