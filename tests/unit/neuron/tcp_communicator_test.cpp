#include "neuron/tcp_communicator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <tuple>

#include "proto/collective_bandwidth.h"
#include "proto/errors.h"
#include "tests/unit/neuron/ring_harness.h"

namespace trainyard::neuron {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::RingHarness;
using ::testing::HasSubstr;

// Returns the CollectiveError in `error`, failing the test if there is none or it is another type.
CollectiveError collective_error(const std::exception_ptr& error) {
  if (!error) throw std::logic_error("expected a CollectiveError, the rank succeeded");
  try {
    std::rethrow_exception(error);
  } catch (const CollectiveError& e) {
    return e;
  }
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class ExactResultsTest : public ::testing::TestWithParam<std::tuple<int, std::size_t>> {};

TEST_P(ExactResultsTest, AllThreeCollectivesAreExact) {
  const auto [world, size] = GetParam();
  RingHarness ring(world);
  std::vector<std::vector<std::string>> failures(static_cast<std::size_t>(world));
  testing::expect_all_succeeded(ring.run([&, size = size](TcpCommunicator& comm) {
    testing::check_collectives(comm, size, failures[static_cast<std::size_t>(comm.rank())]);
  }));
  for (const auto& rank_failures : failures) EXPECT_THAT(rank_failures, ::testing::IsEmpty());
}

// 1 MiB = 262144 floats; 65537 is prime, so no rank count divides it; 1..7 are smaller than some
// rank counts, so some ranks own empty chunks.
INSTANTIATE_TEST_SUITE_P(WorldsAndSizes, ExactResultsTest,
                         ::testing::Combine(::testing::Range(2, 9),
                                            ::testing::Values(std::size_t{1}, std::size_t{2}, std::size_t{3},
                                                              std::size_t{7}, std::size_t{1000}, std::size_t{65537},
                                                              std::size_t{262144})));

TEST(TcpCommunicatorTest, ConnectionsCarryManyCollectivesInSequence) {
  RingHarness ring(3);
  std::vector<std::vector<std::string>> failures(3);
  testing::expect_all_succeeded(ring.run([&](TcpCommunicator& comm) {
    for (std::size_t size = 0; size < 40; ++size) {
      testing::check_collectives(comm, size, failures[static_cast<std::size_t>(comm.rank())]);
    }
  }));
  for (const auto& rank_failures : failures) EXPECT_THAT(rank_failures, ::testing::IsEmpty());
}

TEST(TcpCommunicatorTest, WorldOfOneCopiesWithoutTheNetwork) {
  DataPlaneServer server({"127.0.0.1", 0}, {});
  // Nothing listens on port 1: any connection attempt would fail.
  TcpCommunicator comm({1, 0, {"127.0.0.1:1"}, milliseconds(100), {}, 0}, server);
  std::vector<float> data = testing::rank_data(0, 5);
  comm.all_reduce_sum(data);
  EXPECT_EQ(data, testing::rank_data(0, 5));
  std::vector<float> all(5);
  comm.all_gather(data, all);
  EXPECT_EQ(all, data);
  std::vector<float> mine(5);
  comm.reduce_scatter_sum(data, mine);
  EXPECT_EQ(mine, data);
}

TEST(TcpCommunicatorTest, MalformedOptionsNameTheField) {
  DataPlaneServer server({"127.0.0.1", 0}, {});
  const auto field_of = [&](TcpCommunicatorOptions options) {
    try {
      TcpCommunicator comm(std::move(options), server);
    } catch (const InvalidInput& e) {
      return e.field();
    }
    return std::string("<accepted>");
  };
  const std::vector<std::string> peers{"127.0.0.1:5000", "127.0.0.1:5001"};
  EXPECT_EQ(field_of({1, 0, {"127.0.0.1:5000", "no-port"}, seconds(1), {}, 0}), "peers[1]");
  EXPECT_EQ(field_of({1, 0, {"127.0.0.1:70000"}, seconds(1), {}, 0}), "peers[0]");
  EXPECT_EQ(field_of({1, 0, {}, seconds(1), {}, 0}), "peers");
  EXPECT_EQ(field_of({1, 2, peers, seconds(1), {}, 0}), "rank");
  EXPECT_EQ(field_of({1, 0, peers, milliseconds(0), {}, 0}), "timeout");
  EXPECT_EQ(field_of({1, 0, peers, seconds(1), {0.0, false}, 0}), "link.throttle");
  EXPECT_EQ(field_of({1, 0, peers, seconds(1), {}, 70000}), "channel");
  EXPECT_EQ(field_of({1, 1, {"[::1]:5000", "localhost:5001"}, seconds(1), {}, 0}), "<accepted>");
}

// Rank 2's agent is up but the rank never joins: its right neighbour, rank 3, waits for it in
// vain and names it; the other ranks fail too (the ring is broken) rather than hang.
TEST(TcpCommunicatorTest, APeerThatNeverJoinsIsNamedByItsRightNeighbour) {
  RingHarness ring(4, milliseconds(300));
  const auto start = std::chrono::steady_clock::now();
  const auto errors = ring.run(
      [](TcpCommunicator& comm) {
        std::vector<float> data(100, 1.0f);
        comm.all_reduce_sum(data);
      },
      {}, std::vector<int>{0, 1, 3});
  EXPECT_LT(seconds_since(start), 10.0);
  for (const auto& error : errors) EXPECT_NO_THROW(collective_error(error));
  const CollectiveError named = collective_error(errors[2]);  // rank 3
  EXPECT_EQ(named.peer_rank(), 2);
  EXPECT_EQ(std::string(named.what()), "rank 2 (" + ring.peers()[2] + ") did not answer within 300 ms");
  EXPECT_FALSE(named.peer_closed());
}

TEST(TcpCommunicatorTest, APeerWithNothingListeningIsNamed) {
  HostPort vacant{"127.0.0.1", 0};
  {
    const Socket probe = listen_tcp(vacant);
    vacant.port = local_port(probe);
  }  // closed: connections to this port are refused
  DataPlaneServer server({"127.0.0.1", 0}, {});
  TcpCommunicator comm({1, 0, {"127.0.0.1:" + std::to_string(server.port()), to_string(vacant)}, milliseconds(200), {}, 0},
                       server);
  std::vector<float> data(10, 1.0f);
  try {
    comm.all_reduce_sum(data);
    FAIL() << "expected a CollectiveError";
  } catch (const CollectiveError& e) {
    EXPECT_EQ(e.peer_rank(), 1);
    EXPECT_EQ(std::string(e.what()), "rank 1 (" + to_string(vacant) + ") did not answer within 200 ms");
  }
}

// A data address that another service answers (it accepts, then says nothing of ours, as sshd on
// port 22 would): the ring never forms, and the rank gives up after the connect timeout, not the
// collective timeout.
TEST(TcpCommunicatorTest, APeerAddressAnsweredByAnotherServiceFailsWithinTheConnectTimeout) {
  HostPort foreign{"127.0.0.1", 0};
  const Socket listener = listen_tcp(foreign);
  foreign.port = local_port(listener);
  DataPlaneServer server({"127.0.0.1", 0}, {});
  TcpCommunicatorOptions options{1, 0, {"127.0.0.1:" + std::to_string(server.port()), to_string(foreign)}, seconds(30), {}, 0};
  options.connect_timeout = milliseconds(300);
  TcpCommunicator comm(options, server);
  std::vector<float> data(10, 1.0f);
  const auto start = std::chrono::steady_clock::now();
  try {
    comm.all_reduce_sum(data);
    FAIL() << "expected a CollectiveError";
  } catch (const CollectiveError& e) {
    EXPECT_EQ(e.peer_rank(), 1);
    EXPECT_EQ(std::string(e.what()), "rank 1 (" + to_string(foreign) + ") did not answer within 300 ms");
  }
  EXPECT_LT(seconds_since(start), 5.0) << "waited out the 30 s collective timeout";
}

TEST(TcpCommunicatorTest, AnUnresolvablePeerIsACollectiveError) {
  DataPlaneServer server({"127.0.0.1", 0}, {});
  TcpCommunicator comm({1, 0, {"127.0.0.1:" + std::to_string(server.port()), "no-such-host.invalid:5000"},
                        milliseconds(200), {}, 0},
                       server);
  std::vector<float> data(10, 1.0f);
  try {
    comm.all_reduce_sum(data);
    FAIL() << "expected a CollectiveError";
  } catch (const CollectiveError& e) {
    EXPECT_EQ(e.peer_rank(), 1);
    EXPECT_THAT(e.what(), HasSubstr("cannot reach rank 1 (no-such-host.invalid:5000)"));
  }
}

TEST(TcpCommunicatorTest, ARankWithoutTheAttemptsSecretNeverJoinsTheRing) {
  RingHarness ring(2, seconds(1));
  std::vector<std::future<void>> ranks;
  for (int r = 0; r < 2; ++r) {
    TcpCommunicatorOptions options = ring.options(r);
    if (r == 1) options.secret = "guessed-secret-0123456789abcdef0123";
    ranks.push_back(std::async(std::launch::async, [&ring, r, options] {
      TcpCommunicator comm(options, ring.server(r));
      std::vector<float> data(100, 1.0f);
      comm.all_reduce_sum(data);
    }));
  }
  for (auto& rank : ranks) EXPECT_THROW(rank.get(), CollectiveError);
  // Whichever claimer met the other's hello first closed it: its MAC fails under the claimer's secret.
  EXPECT_GE(ring.server(0).rejected_connections() + ring.server(1).rejected_connections(), 1u);
}

TEST(TcpCommunicatorTest, ADroppedLinkFailsTheCollectiveOnEveryRank) {
  RingHarness ring(3, seconds(5));
  std::vector<LinkFault> links(3);
  links[1].drop = true;
  std::vector<std::string> second_errors(3);
  const auto start = std::chrono::steady_clock::now();
  const auto errors = ring.run(
      [&](TcpCommunicator& comm) {
        std::vector<float> data(1000, 1.0f);
        try {
          comm.all_reduce_sum(data);
        } catch (const CollectiveError&) {
          try {
            comm.all_reduce_sum(data);
          } catch (const CollectiveError& again) {
            second_errors[static_cast<std::size_t>(comm.rank())] = again.what();
          }
          throw;
        }
      },
      links);
  EXPECT_LT(seconds_since(start), 4.0) << "neighbours see the closed link at once, not at the timeout";
  const CollectiveError dropped = collective_error(errors[1]);
  EXPECT_EQ(dropped.peer_rank(), 2);
  EXPECT_THAT(dropped.what(), HasSubstr("dropped (fault injection)"));
  EXPECT_THAT(second_errors[1], HasSubstr("communicator failed earlier"));
  // The others see the ring break (whichever closed socket they notice first), not a timeout.
  EXPECT_THAT(collective_error(errors[0]).what(), HasSubstr("closed the connection"));
  EXPECT_THAT(collective_error(errors[2]).what(), HasSubstr("closed the connection"));
  // A closed connection is told apart from silence, so the daemon can act on it.
  EXPECT_FALSE(dropped.peer_closed());
  EXPECT_TRUE(collective_error(errors[0]).peer_closed());
  EXPECT_TRUE(collective_error(errors[2]).peer_closed());
}

// Throttled to 1 MB/s, rank 0 must push 256 KiB through its link during a 2-rank all-reduce of
// 256 KiB (half in reduce-scatter, half in all-gather); with at most a 10 kB burst up front that
// cannot take less than (262144 - 10000) / 1e6 s, so its busbw is at most about the rate.
TEST(TcpCommunicatorTest, AThrottledLinkCapsTheRankSendRate) {
  constexpr std::size_t kFloats = 65536;
  constexpr double kBytes = kFloats * sizeof(float);
  constexpr double kRate = 1e6;
  const auto timed_all_reduce = [](std::vector<LinkFault> links) {
    RingHarness ring(2);
    std::vector<double> elapsed(2);
    std::vector<int> exact(2);  // not vector<bool>: its bits share bytes, and both ranks write at once
    testing::expect_all_succeeded(ring.run(
        [&](TcpCommunicator& comm) {
          std::vector<float> data = testing::rank_data(comm.rank(), kFloats);
          const auto start = std::chrono::steady_clock::now();
          comm.all_reduce_sum(data);
          elapsed[static_cast<std::size_t>(comm.rank())] = seconds_since(start);
          bool ok = true;
          for (std::size_t i = 0; i < kFloats; ++i) ok = ok && data[i] == testing::expected_sum(2, i);
          exact[static_cast<std::size_t>(comm.rank())] = ok;
        },
        links));
    EXPECT_TRUE(exact[0] && exact[1]);
    return elapsed[0];
  };
  const double free_seconds = timed_all_reduce({{}, {}});
  const double throttled_seconds = timed_all_reduce({{kRate, false}, {}});
  EXPECT_GE(throttled_seconds, (kBytes - 10000) / kRate);
  EXPECT_LE(busbw(CollectiveKind::all_reduce, 2, kBytes, throttled_seconds), kRate * 1.05);
  EXPECT_GT(busbw(CollectiveKind::all_reduce, 2, kBytes, free_seconds),
            busbw(CollectiveKind::all_reduce, 2, kBytes, throttled_seconds));
}

TEST(TcpCommunicatorTest, RanksInDifferentCollectivesFailInsteadOfMixingData) {
  RingHarness ring(2, seconds(5));
  const auto errors = ring.run([](TcpCommunicator& comm) {
    std::vector<float> data(10 + static_cast<std::size_t>(comm.rank()), 1.0f);
    comm.all_reduce_sum(data);
  });
  EXPECT_THAT(collective_error(errors[0]).what(), HasSubstr("is in a different collective"));
  EXPECT_NO_THROW(collective_error(errors[1]));
}

TEST(BandwidthTest, FollowsNcclTestsDefinitions) {
  EXPECT_DOUBLE_EQ(algbw(8e9, 2.0), 4e9);
  EXPECT_DOUBLE_EQ(busbw(CollectiveKind::all_reduce, 4, 8e9, 2.0), 4e9 * 2 * 3 / 4);
  EXPECT_DOUBLE_EQ(busbw(CollectiveKind::all_gather, 4, 8e9, 2.0), 4e9 * 3 / 4);
  EXPECT_DOUBLE_EQ(busbw(CollectiveKind::reduce_scatter, 8, 8e9, 2.0), 4e9 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw(CollectiveKind::all_reduce, 1, 8e9, 2.0), 0.0);
}

std::size_t entries(const char* directory) {
  return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(directory),
                                                std::filesystem::directory_iterator()));
}

TEST(TcpCommunicatorTest, LeavesNoThreadsOrFileDescriptorsBehind) {
  const std::size_t fds = entries("/proc/self/fd");
  const std::size_t threads = entries("/proc/self/task");
  {
    RingHarness ring(4);
    std::vector<std::vector<std::string>> failures(4);
    testing::expect_all_succeeded(ring.run([&](TcpCommunicator& comm) {
      testing::check_collectives(comm, 1000, failures[static_cast<std::size_t>(comm.rank())]);
    }));
  }
  EXPECT_EQ(entries("/proc/self/fd"), fds);
  EXPECT_EQ(entries("/proc/self/task"), threads);
}

}  // namespace
}  // namespace trainyard::neuron
