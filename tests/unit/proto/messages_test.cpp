#include <gtest/gtest.h>

#include "proto/messages.h"
#include "proto/time.h"

namespace trainyard {
namespace {

TEST(Messages, HelloRoundTrips) {
  HelloMsg hello;
  hello.agent_version = "0.1.0";
  hello.name = "node-1";
  hello.cores = 32;
  hello.memory_mb = 1024;
  hello.labels = {{"rack", "r1"}};
  hello.data_addr = "127.0.0.1:4000";
  hello.attempts = {AttemptReport{7, 3, 12, from_unix_ms(1000), "forward"}};
  const auto parsed = std::get<HelloMsg>(parse_agent_message(encode(AgentMessage{hello})));
  EXPECT_EQ(parsed.name, "node-1");
  EXPECT_EQ(parsed.labels.at("rack"), "r1");
  EXPECT_EQ(parsed.attempts, hello.attempts);
}

TEST(Messages, LaunchRoundTrips) {
  LaunchMsg launch;
  launch.attempt_id = 5;
  launch.job_id = 2;
  launch.kind = JobKind::command;
  launch.command.argv = {"/bin/echo", "hi"};
  launch.rank = 1;
  launch.world_size = 2;
  launch.peers = {"127.0.0.1:1", "127.0.0.1:2"};
  launch.resume_from = "/ckpt/step-10";
  const auto parsed = std::get<LaunchMsg>(parse_daemon_message(encode(DaemonMessage{launch})));
  EXPECT_EQ(parsed.command.argv, launch.command.argv);
  EXPECT_EQ(parsed.peers, launch.peers);
  EXPECT_EQ(parsed.resume_from, launch.resume_from);
}

TEST(Messages, RejectsMalformedWithFieldNamed) {
  auto field_of = [](const std::string& text) {
    try {
      parse_agent_message(text);
    } catch (const InvalidInput& e) {
      return e.field();
    }
    return std::string("<accepted>");
  };
  EXPECT_EQ(field_of(R"({"type":"nope"})"), "type");
  EXPECT_EQ(field_of(R"({"type":"attempt_started"})"), "attempt_id");
  EXPECT_EQ(field_of(R"({"type":"attempt_started","attempt_id":"x"})"), "attempt_id");
  EXPECT_EQ(field_of(R"({"type":"heartbeat","attempts":[{"attempt_id":1,"job_id":1,"step":-1}]})"), "attempts[0].step");
  EXPECT_EQ(field_of(R"({"type":"heartbeat","extra":1})"), "extra");
  EXPECT_EQ(field_of("[1,2"), "");
}

TEST(Time, FormatsAndParsesRfc3339) {
  const TimePoint t = from_unix_ms(1'795'000'000'123);
  EXPECT_EQ(parse_time(format_time(t)), t);
  EXPECT_FALSE(parse_time("yesterday").has_value());
  EXPECT_FALSE(parse_time("2026-13-01T00:00:00Z").has_value());
}

}  // namespace
}  // namespace trainyard
