#include <gtest/gtest.h>

#include "proto/messages.h"
#include "proto/text.h"

namespace trainyard::inline proto {
namespace {

TEST(JsonText, ReplacesInvalidUtf8InsteadOfThrowing) {
  const Json value = {{"text", std::string("hello\xff\n")}};
  EXPECT_THROW((void)value.dump(), Json::exception);  // what took the agent down
  EXPECT_EQ(json_text(value), "{\"text\":\"hello\xEF\xBF\xBD\\n\"}");
}

TEST(JsonText, AnAgentMessageWithABinaryLogTailEncodesAndParsesBack) {
  AttemptExitedMsg exit;
  exit.attempt_id = 3;
  exit.exit_code = 0;
  exit.reason = "exited with code 0 \x1b[2J";
  exit.log_tail = std::string("hello\377\n\xe2\x82", 9);  // an invalid byte and a cut euro sign
  const std::string text = encode(AgentMessage{exit});
  const auto parsed = std::get<AttemptExitedMsg>(parse_agent_message(text));
  EXPECT_EQ(parsed.log_tail, "hello\xEF\xBF\xBD\n\xEF\xBF\xBD");
  EXPECT_EQ(parsed.reason, exit.reason);
}

TEST(Utf8Tail, CutsOnACharacterBoundary) {
  const std::string text = "ab\xe2\x82\xac" "cd";  // "ab€cd": the euro sign is 3 bytes
  EXPECT_EQ(utf8_tail(text, 100), text);
  EXPECT_EQ(utf8_tail(text, 5), "\xe2\x82\xac" "cd");
  EXPECT_EQ(utf8_tail(text, 4), "cd");  // would start inside the euro sign
  EXPECT_EQ(utf8_tail(text, 3), "cd");
  EXPECT_EQ(utf8_tail(text, 0), "");
}

TEST(Utf8Tail, DropsAtMostThreeContinuationBytes) {
  EXPECT_EQ(drop_partial_utf8_prefix("\x80\x80\x80\x80z"), "\x80z");
  EXPECT_EQ(drop_partial_utf8_prefix("plain"), "plain");
}

}  // namespace
}  // namespace trainyard::inline proto
