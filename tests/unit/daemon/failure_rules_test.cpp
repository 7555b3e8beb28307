// Failure rules as data: the defaults, operators' own rules before them, and strict validation.
#include <gtest/gtest.h>

#include <csignal>

#include "daemon/failure_rules.h"

namespace trainyard::daemon {
namespace {

AttemptFacts failed_with(std::optional<int> code, std::optional<int> signal, std::string reason, std::string log = "") {
  AttemptFacts f;
  f.exit_code = code;
  f.signal = signal;
  f.reason = std::move(reason);
  f.log_tail = std::move(log);
  return f;
}

TEST(FailureRules, WholeWordMarkersDoNotMatchInsideOtherWords) {
  const FailureRules& rules = FailureRules::defaults();
  EXPECT_EQ(rules.classify(failed_with(1, std::nullopt, "no room left in the queue")).name, "user_error");
  EXPECT_EQ(rules.classify(failed_with(1, std::nullopt, "the nanny process exited")).name, "user_error");
  EXPECT_EQ(rules.classify(failed_with(std::nullopt, SIGKILL, "", "kernel: oom-kill: task python")).name, "oom");
  EXPECT_EQ(rules.classify(failed_with(1, std::nullopt, "nan_loss: loss is nan at step 12")).name, "nan_loss");
  EXPECT_EQ(rules.classify(failed_with(1, std::nullopt,
                                       "collective_timeout: rank 1 (127.0.0.1:4000) did not answer within 5000 ms"))
                .name,
            "collective_timeout");
}

TEST(FailureRules, OperatorRulesComeFirstAndFillTheirSuggestion) {
  const FailureRules mine = FailureRules::parse(Json::parse(R"({"rules": [
    {"class": "preempted", "infrastructure": true, "when": ["signal"], "signal": "15",
     "log_tail": ["*spot instance reclaimed*"], "suggestion": "Reclaimed (signal {signal}); retried elsewhere."}
  ]})"));
  const FailureRules rules = mine.followed_by(FailureRules::defaults());
  EXPECT_EQ(rules.size(), FailureRules::defaults().size() + 1);
  const FailureClass cls = rules.classify(failed_with(std::nullopt, SIGTERM, "", "notice: spot instance reclaimed"));
  EXPECT_EQ(cls.name, "preempted");
  EXPECT_TRUE(cls.infrastructure);
  EXPECT_EQ(cls.suggestion, "Reclaimed (signal 15); retried elsewhere.");
  // Without the marker the defaults still apply.
  EXPECT_EQ(rules.classify(failed_with(std::nullopt, SIGTERM, "")).name, "user_error");
}

TEST(FailureRules, BadRulesAreRefusedNamingTheField) {
  auto field_of = [](const char* text) {
    try {
      FailureRules::parse(Json::parse(text));
    } catch (const InvalidInput& e) {
      return e.field();
    }
    return std::string("<accepted>");
  };
  EXPECT_EQ(field_of(R"({"rules": [{"class": "x", "suggestion": "s", "when": ["raining"]}]})"), "rules[0].when[0]");
  EXPECT_EQ(field_of(R"({"rules": [{"class": "x"}]})"), "rules[0].suggestion");
  EXPECT_EQ(field_of(R"({"rules": [{"class": "x", "suggestion": "s", "regex": "y"}]})"), "rules[0].regex");
  EXPECT_EQ(field_of(R"({"rules": [{"class": "has space", "suggestion": "s"}]})"), "rules[0].class");
  EXPECT_EQ(field_of(R"({"rules": 3})"), "rules");
  EXPECT_EQ(field_of(R"({"rules": [], "extra": 1})"), "extra");
  EXPECT_EQ(field_of(R"({"rules": []})"), "<accepted>");
}

}  // namespace
}  // namespace trainyard::daemon
