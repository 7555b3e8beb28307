#include "neuron/data_plane.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <cstring>
#include <functional>
#include <future>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

namespace trainyard::neuron {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

SteadyTime in(milliseconds d) { return std::chrono::steady_clock::now() + d; }

// Whether `condition` came to hold within `limit`: the server's thread acts in its own time.
bool within(milliseconds limit, const std::function<bool()>& condition) {
  const SteadyTime deadline = in(limit);
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(1));  // the polling interval of the condition
  }
  return true;
}

const DataPlaneHello kHello{7, 1, 2, 3};
constexpr std::string_view kSecret = "attempt-7-secret-0123456789abcdef";

TEST(DataPlaneHelloTest, RoundTrips) {
  const DataPlaneHello hello{-5, 3, 7, 65535};
  EXPECT_EQ(decode_hello(encode_hello(hello)), hello);
}

TEST(DataPlaneHelloTest, RejectsWrongMagicVersionAndNegativeRanks) {
  auto bytes = encode_hello(kHello);
  bytes[0] = std::byte{'X'};
  EXPECT_FALSE(decode_hello(bytes));

  bytes = encode_hello(kHello);
  bytes[5] = std::byte{1};  // protocol version 1: no MAC
  EXPECT_FALSE(decode_hello(bytes));

  EXPECT_FALSE(decode_hello(encode_hello({7, -1, 2, 0})));
  EXPECT_FALSE(decode_hello(encode_hello({7, 1, -2, 0})));
}

TEST(DataPlaneHelloTest, TheMacBindsSecretNonceAndHello) {
  const HelloNonce nonce{std::byte{1}};
  const auto hello = encode_hello(kHello);
  const HelloMac mac = hello_mac(kSecret, nonce, hello);
  EXPECT_EQ(hello_mac(kSecret, nonce, hello), mac);
  EXPECT_NE(hello_mac("another secret", nonce, hello), mac);
  EXPECT_NE(hello_mac(kSecret, HelloNonce{std::byte{2}}, hello), mac);
  EXPECT_NE(hello_mac(kSecret, nonce, encode_hello({8, 1, 2, 3})), mac);
}

class DataPlaneServerTest : public ::testing::Test {
 protected:
  // A connection whose server nonce has been read: what a dialer has before it says hello.
  Socket dial(HelloNonce* nonce = nullptr) {
    auto socket = connect_tcp({"127.0.0.1", server_.port()}, in(seconds(5)));
    EXPECT_TRUE(socket.has_value());
    if (!socket) return Socket();
    HelloNonce got{};
    EXPECT_EQ(read_all(*socket, got, in(seconds(5))), IoResult::done) << "the server sends its nonce first";
    if (nonce) *nonce = got;
    return std::move(*socket);
  }
  Socket dial_and_say_hello(std::string_view secret) {
    auto socket = connect_tcp({"127.0.0.1", server_.port()}, in(seconds(5)));
    EXPECT_TRUE(socket.has_value());
    if (!socket) return Socket();
    EXPECT_EQ(send_hello(*socket, kHello, secret, in(seconds(5))), IoResult::done);
    return std::move(*socket);
  }
  // The server closes connections it rejects; a client sees that as end of stream. A whole hello
  // parked before its claimer came was acknowledged with one byte first: read past it.
  static IoResult wait_for_close(const Socket& socket) {
    const SteadyTime deadline = in(seconds(10));
    std::byte byte{};
    const IoResult first = read_all(socket, std::span(&byte, 1), deadline);
    return first == IoResult::done ? read_all(socket, std::span(&byte, 1), deadline) : first;
  }

  DataPlaneServer server_{HostPort{"127.0.0.1", 0}, {milliseconds(300), milliseconds(300)}};
};

TEST_F(DataPlaneServerTest, HandsTheConnectionToTheClaimerOfItsHello) {
  Socket client = dial_and_say_hello(kSecret);
  auto claimed = server_.claim(kHello, kSecret, in(seconds(5)));
  ASSERT_TRUE(claimed.has_value());

  // The claimed socket is the client's connection: bytes flow end to end.
  const std::array<std::byte, 3> payload{std::byte{1}, std::byte{2}, std::byte{3}};
  ASSERT_EQ(write_all(client, payload, in(seconds(5))), IoResult::done);
  std::array<std::byte, 3> got{};
  ASSERT_EQ(read_all(*claimed, got, in(seconds(5))), IoResult::done);
  EXPECT_EQ(got, payload);
  EXPECT_EQ(server_.rejected_connections(), 0u);
}

TEST_F(DataPlaneServerTest, ClaimOfAnotherAttemptTimesOutAndTheStrangerIsClosed) {
  Socket client = dial_and_say_hello(kSecret);
  DataPlaneHello other = kHello;
  other.attempt_id = 8;
  EXPECT_FALSE(server_.claim(other, kSecret, in(milliseconds(50))).has_value());
  EXPECT_EQ(wait_for_close(client), IoResult::closed) << "unclaimed connections are closed after the timeout";
  EXPECT_EQ(server_.rejected_connections(), 1u);
  EXPECT_FALSE(server_.claim(kHello, kSecret, in(milliseconds(50))).has_value()) << "an expired hello is gone";
}

TEST_F(DataPlaneServerTest, AHelloWithoutTheAttemptsSecretNeverJoinsAndIsClosed) {
  Socket stranger = dial_and_say_hello("a guess");
  EXPECT_FALSE(server_.claim(kHello, kSecret, in(milliseconds(200))).has_value());
  EXPECT_EQ(wait_for_close(stranger), IoResult::closed);
  EXPECT_EQ(server_.rejected_connections(), 1u);

  // A hello without a MAC at all is never parked.
  Socket bare = dial();
  ASSERT_EQ(write_all(bare, encode_hello(kHello), in(seconds(5))), IoResult::done);
  EXPECT_FALSE(server_.claim(kHello, kSecret, in(milliseconds(100))).has_value());
  EXPECT_EQ(wait_for_close(bare), IoResult::closed) << "a hello without its MAC times out";
}

TEST_F(DataPlaneServerTest, TheGenuineRankIsClaimedPastAStrangerWithTheSameHello) {
  Socket genuine = dial_and_say_hello(kSecret);
  Socket stranger = dial_and_say_hello("a guess");  // newer, so it would have replaced the genuine one
  auto claimed = server_.claim(kHello, kSecret, in(seconds(5)));
  ASSERT_TRUE(claimed.has_value());
  const std::array<std::byte, 1> payload{std::byte{42}};
  ASSERT_EQ(write_all(genuine, payload, in(seconds(5))), IoResult::done);
  std::array<std::byte, 1> got{};
  ASSERT_EQ(read_all(*claimed, got, in(seconds(5))), IoResult::done);
  EXPECT_EQ(got, payload) << "the claimed connection is the genuine rank's";
  EXPECT_EQ(wait_for_close(stranger), IoResult::closed);
}

TEST_F(DataPlaneServerTest, AReplayedHelloFailsOnAnotherConnection) {
  HelloNonce first{};
  Socket recorded = dial(&first);
  const auto fields = encode_hello(kHello);
  const HelloMac mac = hello_mac(kSecret, first, fields);
  HelloNonce second{};
  Socket replay = dial(&second);
  EXPECT_NE(first, second) << "every connection gets its own nonce";
  ASSERT_EQ(write_all(replay, fields, in(seconds(5))), IoResult::done);
  ASSERT_EQ(write_all(replay, mac, in(seconds(5))), IoResult::done);
  EXPECT_FALSE(server_.claim(kHello, kSecret, in(milliseconds(200))).has_value());
  EXPECT_EQ(wait_for_close(replay), IoResult::closed);
}

TEST_F(DataPlaneServerTest, WrongMagicIsRejected) {
  Socket client = dial();
  auto bytes = encode_hello(kHello);
  bytes[1] = std::byte{'Z'};
  ASSERT_EQ(write_all(client, bytes, in(seconds(5))), IoResult::done);
  EXPECT_EQ(wait_for_close(client), IoResult::closed);
  EXPECT_EQ(server_.rejected_connections(), 1u);
}

TEST_F(DataPlaneServerTest, GarbageAndSilentClientsAreClosedAndTheServerKeepsServing) {
  std::mt19937 random(1234);
  std::vector<std::byte> garbage(4096);
  for (auto& b : garbage) b = static_cast<std::byte>(random());
  garbage[0] = std::byte{0};  // cannot start with the magic
  Socket noisy = dial();
  (void)write_all(noisy, garbage, in(seconds(5)));  // the server may hang up mid-write
  Socket half = dial();
  const auto hello = encode_hello(kHello);
  ASSERT_EQ(write_all(half, std::span(hello).first(10), in(seconds(5))), IoResult::done);
  Socket silent = dial();

  EXPECT_EQ(wait_for_close(noisy), IoResult::closed);
  EXPECT_EQ(wait_for_close(half), IoResult::closed) << "a partial hello times out";
  EXPECT_EQ(wait_for_close(silent), IoResult::closed);
  EXPECT_EQ(server_.rejected_connections(), 3u);

  Socket good = dial_and_say_hello(kSecret);
  EXPECT_TRUE(server_.claim(kHello, kSecret, in(seconds(5))).has_value());
}

TEST_F(DataPlaneServerTest, StopWakesClaimersAndClosesHeldConnections) {
  Socket parked = dial_and_say_hello(kSecret);
  Socket pending = dial();
  DataPlaneHello other = kHello;
  other.channel = 9;
  auto waiter = std::async(std::launch::async, [&] { return server_.claim(other, kSecret, in(seconds(30))); });
  server_.stop();
  EXPECT_EQ(waiter.wait_for(seconds(10)), std::future_status::ready);
  EXPECT_FALSE(waiter.get().has_value());
  EXPECT_EQ(wait_for_close(parked), IoResult::closed);
  EXPECT_EQ(wait_for_close(pending), IoResult::closed);
  server_.stop();  // idempotent
}

// A connection from `source` (any 127/8 address reaches the loopback server) whose nonce was read.
Socket dial_from(const std::string& source, std::uint16_t port) {
  Socket socket(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in local{};
  local.sin_family = AF_INET;
  ::inet_pton(AF_INET, source.c_str(), &local.sin_addr);
  EXPECT_EQ(::bind(socket.fd(), reinterpret_cast<sockaddr*>(&local), sizeof local), 0);
  sockaddr_in server{};
  server.sin_family = AF_INET;
  server.sin_port = htons(port);
  ::inet_pton(AF_INET, "127.0.0.1", &server.sin_addr);
  EXPECT_EQ(::connect(socket.fd(), reinterpret_cast<sockaddr*>(&server), sizeof server), 0);
  HelloNonce nonce{};
  EXPECT_EQ(read_all(socket, nonce, in(seconds(5))), IoResult::done);
  return socket;
}

IoResult say_hello(const Socket& socket, const HelloNonce& nonce, std::string_view secret) {
  std::array<std::byte, kHelloBytes + kMacBytes> out{};
  const auto fields = encode_hello(kHello);
  const HelloMac mac = hello_mac(secret, nonce, fields);
  std::memcpy(out.data(), fields.data(), kHelloBytes);
  std::memcpy(out.data() + kHelloBytes, mac.data(), kMacBytes);
  return write_all(socket, out, in(seconds(5)));
}

// The rank's connection reached the claimer: a byte written by the rank comes out of the claimed socket.
void expect_same_connection(const Socket& rank, const Socket& claimed) {
  const std::array<std::byte, 1> payload{std::byte{42}};
  ASSERT_EQ(write_all(rank, payload, in(seconds(5))), IoResult::done);
  std::array<std::byte, 1> got{};
  ASSERT_EQ(read_all(claimed, got, in(seconds(5))), IoResult::done);
  EXPECT_EQ(got, payload);
}

TEST(DataPlaneFloodTest, SilentConnectionsOfTheRanksOwnAddressDoNotShutItOut) {
  DataPlaneServer server({"127.0.0.1", 0}, {});
  std::vector<Socket> flood;
  // More than the server holds in total, all from the address the genuine rank dials from.
  for (int i = 0; i < 300; ++i) flood.push_back(dial_from("127.0.0.1", server.port()));
  HelloNonce nonce{};
  auto rank = connect_tcp({"127.0.0.1", server.port()}, in(seconds(5)));
  ASSERT_TRUE(rank.has_value());
  ASSERT_EQ(read_all(*rank, nonce, in(seconds(5))), IoResult::done) << "the rank got in";
  ASSERT_EQ(say_hello(*rank, nonce, kSecret), IoResult::done);
  auto claimed = server.claim(kHello, kSecret, in(seconds(5)));
  ASSERT_TRUE(claimed.has_value());
  expect_same_connection(*rank, *claimed);
}

TEST(DataPlaneFloodTest, AFloodFromOneSourceDoesNotDropAnothersConnection) {
  DataPlaneServer server({"127.0.0.1", 0}, {seconds(30), seconds(30), {16, 8}, {16, 8}});
  HelloNonce nonce{};
  auto rank = connect_tcp({"127.0.0.1", server.port()}, in(seconds(5)));
  ASSERT_TRUE(rank.has_value());
  ASSERT_EQ(read_all(*rank, nonce, in(seconds(5))), IoResult::done);
  // The rank has not said hello yet (the oldest connection of all) when another source floods.
  std::vector<Socket> flood;
  for (int i = 0; i < 100; ++i) flood.push_back(dial_from("127.0.0.2", server.port()));
  ASSERT_EQ(say_hello(*rank, nonce, kSecret), IoResult::done);
  auto claimed = server.claim(kHello, kSecret, in(seconds(5)));
  ASSERT_TRUE(claimed.has_value());
  expect_same_connection(*rank, *claimed);
}

TEST(DataPlaneFloodTest, StrangersWithTheRanksHelloDoNotPushTheParkedRankOut) {
  DataPlaneServer server({"127.0.0.1", 0}, {});
  HelloNonce nonce{};
  auto genuine = connect_tcp({"127.0.0.1", server.port()}, in(seconds(5)));
  ASSERT_TRUE(genuine.has_value());
  ASSERT_EQ(read_all(*genuine, nonce, in(seconds(5))), IoResult::done);
  ASSERT_EQ(say_hello(*genuine, nonce, kSecret), IoResult::done);
  std::vector<Socket> strangers;
  for (int i = 0; i < 10; ++i) {
    auto stranger = connect_tcp({"127.0.0.1", server.port()}, in(seconds(5)));
    ASSERT_TRUE(stranger.has_value());
    ASSERT_EQ(send_hello(*stranger, kHello, "a guess", in(seconds(5))), IoResult::done);
    strangers.push_back(std::move(*stranger));
  }
  auto claimed = server.claim(kHello, kSecret, in(seconds(5)));
  ASSERT_TRUE(claimed.has_value());
  expect_same_connection(*genuine, *claimed);
}

TEST(DataPlaneFloodTest, AWaitingClaimerClosesAWrongSecretAtOnce) {
  DataPlaneServer server({"127.0.0.1", 0}, {});
  auto claimer = std::async(std::launch::async, [&] { return server.claim(kHello, kSecret, in(seconds(30))); });
  // The claim is registered once a stranger's hello is rejected while it waits; retried until then.
  const SteadyTime deadline = in(seconds(10));
  while (server.rejected_connections() == 0 && std::chrono::steady_clock::now() < deadline) {
    auto stranger = connect_tcp({"127.0.0.1", server.port()}, in(seconds(5)));
    ASSERT_TRUE(stranger.has_value());
    // Closed at once when the claim was registered; else parked (acknowledged), then closed by the woken claimer.
    if (send_hello(*stranger, kHello, "a guess", in(seconds(5))) == IoResult::done) {
      std::byte byte{};
      EXPECT_EQ(read_all(*stranger, std::span(&byte, 1), in(seconds(5))), IoResult::closed);
    }
  }
  EXPECT_GE(server.rejected_connections(), 1u);
  EXPECT_EQ(claimer.wait_for(milliseconds(0)), std::future_status::timeout) << "the stranger woke nobody";
  auto genuine = connect_tcp({"127.0.0.1", server.port()}, in(seconds(5)));
  ASSERT_TRUE(genuine.has_value());
  ASSERT_EQ(send_hello(*genuine, kHello, kSecret, in(seconds(5))), IoResult::done);
  auto claimed = claimer.get();
  ASSERT_TRUE(claimed.has_value());
  expect_same_connection(*genuine, *claimed);
}

TEST(DataPlaneFloodTest, ADialerWhoseConnectionWasDroppedBeforeItsHelloIsToldSoToDialAgain) {
  DataPlaneServer server({"127.0.0.1", 0}, {seconds(30), seconds(30), {1, 1}, {16, 8}});
  auto dropped = connect_tcp({"127.0.0.1", server.port()}, in(seconds(5)));
  ASSERT_TRUE(dropped.has_value());
  Socket newer = dial_from("127.0.0.1", server.port());  // accepted after `dropped`, which made room for it
  // Its hello must come after the drop: one already there would be read and parked first.
  ASSERT_TRUE(within(seconds(5), [&] { return server.rejected_connections() >= 1; }))
      << "the server never made room for the newer connection";
  EXPECT_EQ(send_hello(*dropped, kHello, kSecret, in(seconds(5))), IoResult::closed)
      << "a hello written into a dropped connection must not pass for one the server has";
  auto again = connect_tcp({"127.0.0.1", server.port()}, in(seconds(5)));
  ASSERT_TRUE(again.has_value());
  ASSERT_EQ(send_hello(*again, kHello, kSecret, in(seconds(5))), IoResult::done);
  auto claimed = server.claim(kHello, kSecret, in(seconds(5)));
  ASSERT_TRUE(claimed.has_value());
  expect_same_connection(*again, *claimed);
}

TEST(DataPlaneFloodTest, RejectionsAreLoggedOncePerIntervalWithTheCountHeldBack) {
  std::ostringstream log;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("counting", sink));
  {
    DataPlaneServer server({"127.0.0.1", 0}, {seconds(30), seconds(30), {256, 64}, {256, 64}, std::chrono::hours(1)});
    for (int i = 0; i < 200; ++i) {
      Socket garbage = dial_from("127.0.0.1", server.port());
      ASSERT_EQ(write_all(garbage, std::array<std::byte, kHelloBytes>{}, in(seconds(5))), IoResult::done);
      std::byte byte{};
      EXPECT_EQ(read_all(garbage, std::span(&byte, 1), in(seconds(5))), IoResult::closed);
    }
    EXPECT_EQ(server.rejected_connections(), 200u);
  }
  spdlog::set_default_logger(previous);
  std::size_t lines = 0;
  for (std::size_t at = log.str().find("event=rejected"); at != std::string::npos;
       at = log.str().find("event=rejected", at + 1))
    ++lines;
  EXPECT_EQ(lines, 1u) << "one line for the reason bad_hello within the interval:\n" << log.str();
}

}  // namespace
}  // namespace trainyard::neuron
