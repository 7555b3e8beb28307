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

TEST(QuotedOutput, KeyColonValueSecretsAndHttpCredentialsAreMasked) {
  EXPECT_EQ(masked_line("PASSWORD: hunter2 and more"), "PASSWORD: <masked> and more");
  EXPECT_EQ(masked_line("db_password:hunter2"), "db_password:<masked>");
  EXPECT_EQ(masked_line("Authorization: Bearer ty_0123456789abcdef0123456789abcdef"), "Authorization: Bearer <masked>");
  EXPECT_EQ(masked_line("curl -H 'x: Basic dXNlcjpwYXNz'"), "curl -H 'x: Basic <masked>");
  EXPECT_EQ(masked_line("step: 40 loss: 2.1 url: http://a/b"), "step: 40 loss: 2.1 url: http://a/b") << "names that look harmless stay";
}

TEST(QuotedOutput, WordsShapedLikeCredentialsAreMaskedWherever) {
  EXPECT_EQ(masked_line("using ty_0123456789abcdef0123456789abcdef now"), "using <masked> now");
  EXPECT_EQ(masked_line("ghp_ABCDEFGHIJKLMNOPQRSTuvwx1234 xoxb-1234567890-abcdefghij"), "<masked> <masked>");
  EXPECT_EQ(masked_line("id AKIAIOSFODNN7EXAMPLE"), "id <masked>");
  EXPECT_EQ(masked_line("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"), "jwt <masked>");
  EXPECT_EQ(masked_line("ty_short sk-no hf_x"), "ty_short sk-no hf_x") << "too short to be a credential";
}

}  // namespace
}  // namespace trainyard::daemon
