// The one reader of outside JSON: nesting is bounded while the text is read (a value nested deeper
// would overflow the stack when copied or printed), keys are unique, and every refusal is an
// InvalidInput naming where and what.
#include <gtest/gtest.h>

#include <string>

#include "proto/json_reader.h"

namespace trainyard::inline proto {
namespace {

std::string nested_arrays(std::size_t levels) { return std::string(levels, '[') + std::string(levels, ']'); }

std::string parse_refusal(std::string_view text) {
  try {
    parse_json_text(text);
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "<accepted>";
}

TEST(JsonReader, NestingUpToTheLimitIsReadAndOneLevelMoreIsRefusedNamingTheLimit) {
  EXPECT_EQ(parse_json_text(nested_arrays(kMaxJsonDepth)).dump(), nested_arrays(kMaxJsonDepth));
  std::string open_arrays;
  for (int i = 0; i < kMaxJsonDepth; ++i) open_arrays += "[]";
  EXPECT_EQ(parse_refusal(nested_arrays(kMaxJsonDepth + 1)),
            open_arrays + ": nested deeper than 64 levels of arrays and objects");
}

TEST(JsonReader, APatchBodyNestedAHundredAndFiftyThousandDeepIsRefusedWithoutBuildingIt) {
  // The shape that crashed the daemon through PATCH /v1/jobs/{id}: about 300 KB, under the body limit.
  const std::string body = "{\"priority\":" + nested_arrays(150'000) + "}";
  EXPECT_NE(parse_refusal(body).find("priority[][]"), std::string::npos) << parse_refusal(body).substr(0, 200);
  EXPECT_NE(parse_refusal(body).find("nested deeper than 64 levels"), std::string::npos);
}

TEST(JsonReader, AMillionLevelsOfObjectsInsideAMessageAreRefused) {
  std::string text = "{\"type\":\"health_result\",\"result\":{\"checks\":";
  for (int i = 0; i < 1'000'000; ++i) text += "{\"checks\":";
  text += "[]";
  text += std::string(1'000'000, '}');
  text += "}}";
  const std::string why = parse_refusal(text);
  EXPECT_NE(why.find("result.checks.checks"), std::string::npos) << why.substr(0, 200);
  EXPECT_NE(why.find("nested deeper than"), std::string::npos);
}

TEST(JsonReader, AKeyGivenTwiceInOneObjectIsRefusedAtAnyDepthButMayRepeatAcrossObjects) {
  EXPECT_EQ(parse_refusal(R"({"priority": 1, "priority": 9999})"), "priority: is given twice");
  EXPECT_EQ(parse_refusal(R"({"env": {"A": "1", "A": "2"}})"), "env.A: is given twice");
  EXPECT_EQ(parse_refusal(R"({"ranks": [{"x": 1, "x": 1}]})"), "ranks[].x: is given twice");
  const Json ok = parse_json_text(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 3}, {"x": 4}]})");
  EXPECT_EQ(ok["c"][1]["x"], 4);
}

TEST(JsonReader, AHugeKeyIsCutInTheError) {
  const std::string key(100'000, 'k');
  const std::string why = parse_refusal("{\"" + key + "\": 1, \"" + key + "\": 2}");
  EXPECT_EQ(why, std::string(64, 'k') + "...: is given twice");
}

TEST(JsonReader, SyntaxErrorsAndHugeNumbersNameTheProblem) {
  EXPECT_EQ(parse_refusal(R"({"a": )"), "malformed JSON at byte 7");
  EXPECT_EQ(parse_refusal("1e999"), "malformed JSON: a number is out of range");
  EXPECT_EQ(parse_refusal("{} // note"), "malformed JSON at byte 4");
}

TEST(JsonReader, CommentsAreAllowedOnlyInTheReaderForHandWrittenFiles) {
  const Json config = parse_commented_json_text("{\n  // the port\n  \"port\": 8080 /* tcp */\n}");
  EXPECT_EQ(config["port"], 8080);
  EXPECT_THROW(parse_commented_json_text(nested_arrays(kMaxJsonDepth + 1)), InvalidInput);
  EXPECT_THROW(parse_commented_json_text(R"({"port": 1, "port": 2})"), InvalidInput);
}

}  // namespace
}  // namespace trainyard::inline proto
