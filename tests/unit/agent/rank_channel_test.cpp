// The channel between the agent and a simulated rank's process (agent/rank_channel.h): whole
// messages, a descriptor passed with one, and what the rank's side may not send.
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "agent/rank_channel.h"
#include "proto/errors.h"

namespace trainyard::agent::testing {
namespace {

TEST(RankChannel, AMessageArrivesWholeWithTheDescriptorPassedAlongside) {
  auto [agent, rank] = make_rank_channel();
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ASSERT_TRUE(send_channel_message(agent.fd(), {{"claimed", {{"id", 7}}}}, pipe_fds[1]));
  ASSERT_TRUE(send_channel_message(agent.fd(), {{"faults", {"core:1=hang"}}}));
  ::close(pipe_fds[1]);

  auto claimed = receive_channel_message(rank.fd());
  ASSERT_TRUE(claimed);
  EXPECT_EQ(claimed->body["claimed"]["id"], 7);
  ASSERT_TRUE(claimed->passed.valid());
  // The passed descriptor is the pipe's write end: what is written to it comes out of the read end.
  ASSERT_EQ(::write(claimed->passed.fd(), "x", 1), 1);
  char byte = 0;
  ASSERT_EQ(::read(pipe_fds[0], &byte, 1), 1);
  EXPECT_EQ(byte, 'x');
  ::close(pipe_fds[0]);

  auto faults = receive_channel_message(rank.fd());
  ASSERT_TRUE(faults);
  EXPECT_FALSE(faults->passed.valid());
  EXPECT_EQ(faults->body["faults"][0], "core:1=hang");

  agent.close();
  EXPECT_FALSE(receive_channel_message(rank.fd())) << "the peer's close ends the stream";
}

TEST(RankChannel, WhatIsNotOneJsonObjectWithOneKeyIsRefusedNamingTheProblem) {
  auto channel = make_rank_channel();  // not a structured binding: the lambda below captures its ends
  neuron::Socket& agent = channel.first;
  neuron::Socket& rank = channel.second;
  const auto refusal = [&](const std::string& text) -> std::string {
    EXPECT_EQ(::send(rank.fd(), text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
    try {
      receive_channel_message(agent.fd());
    } catch (const InvalidInput& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_NE(refusal("[1, 2]").find("one key"), std::string::npos);
  EXPECT_NE(refusal(R"({"progress": {}, "exit": {}})").find("one key"), std::string::npos);
  EXPECT_NE(refusal(std::string(100, '[') + std::string(100, ']')).find("nest"), std::string::npos);
  EXPECT_NE(refusal("{\"exit\": "), "accepted");
  // Still usable after each refusal.
  ASSERT_TRUE(send_channel_message(rank.fd(), {{"progress", {{"step", 3}}}}));
  EXPECT_EQ(receive_channel_message(agent.fd())->body["progress"]["step"], 3);
}

TEST(RankChannel, AMessageLongerThanTheLimitIsRefusedNotTruncated) {
  auto [agent, rank] = make_rank_channel();
  int size = static_cast<int>(kMaxChannelMessageBytes) + 4096;
  ASSERT_EQ(::setsockopt(rank.fd(), SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)), 0);
  const std::string text = "{\"exit\": \"" + std::string(kMaxChannelMessageBytes, 'a') + "\"}";
  if (::send(rank.fd(), text.data(), text.size(), 0) < 0) GTEST_SKIP() << "this kernel refuses a message that long";
  EXPECT_THROW(receive_channel_message(agent.fd()), InvalidInput);
  EXPECT_FALSE(send_channel_message(rank.fd(), {{"exit", std::string(kMaxChannelMessageBytes, 'b')}}))
      << "the sender refuses it too";
}

}  // namespace
}  // namespace trainyard::agent::testing
