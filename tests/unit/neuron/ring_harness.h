#pragma once
// Test support: a ring of ranks as threads in one process, each with its own DataPlaneServer on
// 127.0.0.1 port 0 (as separate agents would have), talking real TCP over loopback.
#include <chrono>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "neuron/data_plane.h"
#include "neuron/tcp_communicator.h"

namespace trainyard::neuron::testing {

// Integer-valued test data: sums over up to 8 ranks stay far below 2^24, so float sums are exact
// in any order.
inline float test_value(int rank, std::size_t index) {
  return static_cast<float>(static_cast<int>((index * 7 + static_cast<std::size_t>(rank) * 13) % 1024) - 512);
}

inline float expected_sum(int world, std::size_t index) {
  float sum = 0;
  for (int r = 0; r < world; ++r) sum += test_value(r, index);
  return sum;
}

inline std::vector<float> rank_data(int rank, std::size_t size) {
  std::vector<float> data(size);
  for (std::size_t i = 0; i < size; ++i) data[i] = test_value(rank, i);
  return data;
}

class RingHarness {
 public:
  explicit RingHarness(int world, std::chrono::milliseconds timeout = std::chrono::seconds(20),
                       DataPlaneServer::Options server_options = {})
      : world_(world), timeout_(timeout) {
    for (int r = 0; r < world; ++r) {
      servers_.push_back(std::make_unique<DataPlaneServer>(HostPort{"127.0.0.1", 0}, server_options));
      peers_.push_back("127.0.0.1:" + std::to_string(servers_.back()->port()));
    }
  }

  TcpCommunicatorOptions options(int rank, LinkFault link = {}) const {
    return TcpCommunicatorOptions{kAttempt, rank, peers_, timeout_, link, 0, "ring-secret-0123456789abcdef0123"};
  }
  DataPlaneServer& server(int rank) { return *servers_[static_cast<std::size_t>(rank)]; }
  const std::vector<std::string>& peers() const { return peers_; }

  // Runs `body` on every rank in `ranks` (all ranks by default), each on its own thread with its
  // own communicator; returns each rank's exception (null when it succeeded).
  std::vector<std::exception_ptr> run(const std::function<void(TcpCommunicator&)>& body,
                                      const std::vector<LinkFault>& links = {},
                                      std::optional<std::vector<int>> ranks = std::nullopt) {
    if (!ranks) {
      ranks.emplace();
      for (int r = 0; r < world_; ++r) ranks->push_back(r);
    }
    std::vector<std::future<void>> done;
    for (int r : *ranks) {
      const LinkFault link = links.empty() ? LinkFault{} : links[static_cast<std::size_t>(r)];
      done.push_back(std::async(std::launch::async, [this, r, link, &body] {
        TcpCommunicator communicator(options(r, link), server(r));
        body(communicator);
      }));
    }
    std::vector<std::exception_ptr> errors;
    for (auto& f : done) {
      try {
        f.get();
        errors.push_back(nullptr);
      } catch (...) {
        errors.push_back(std::current_exception());
      }
    }
    return errors;
  }

  static constexpr std::int64_t kAttempt = 42;

 private:
  int world_;
  std::chrono::milliseconds timeout_;
  std::vector<std::unique_ptr<DataPlaneServer>> servers_;
  std::vector<std::string> peers_;
};

// Rethrows the first failure, so a test sees the real message.
inline void expect_all_succeeded(const std::vector<std::exception_ptr>& errors) {
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

// Checks the three collectives on one ring: every rank contributes `rank_data`.
inline void check_collectives(TcpCommunicator& comm, std::size_t size, std::vector<std::string>& failures) {
  const int world = comm.world_size();
  const int rank = comm.rank();
  const ElementRange own = chunk_of(size, world, rank);
  const auto note = [&](const std::string& what, std::size_t i, float got, float want) {
    failures.push_back("rank " + std::to_string(rank) + " " + what + "[" + std::to_string(i) +
                       "]=" + std::to_string(got) + " want " + std::to_string(want));
  };

  std::vector<float> data = rank_data(rank, size);
  comm.all_reduce_sum(data);
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] != expected_sum(world, i)) return note("all_reduce", i, data[i], expected_sum(world, i));
  }

  std::vector<float> all(size, -1.0f);
  const std::vector<float> source = rank_data(rank, size);
  comm.all_gather(std::span(source).subspan(own.begin, own.count), all);
  for (int r = 0; r < world; ++r) {
    const ElementRange chunk = chunk_of(size, world, r);
    for (std::size_t i = chunk.begin; i < chunk.begin + chunk.count; ++i) {
      if (all[i] != test_value(r, i)) return note("all_gather", i, all[i], test_value(r, i));
    }
  }

  std::vector<float> mine(own.count, -1.0f);
  comm.reduce_scatter_sum(source, mine);
  for (std::size_t i = 0; i < own.count; ++i) {
    const float want = expected_sum(world, own.begin + i);
    if (mine[i] != want) return note("reduce_scatter", own.begin + i, mine[i], want);
  }
}

}  // namespace trainyard::neuron::testing
