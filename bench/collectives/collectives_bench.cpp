// Collective bandwidth over loopback TCP, printed the way nccl-tests prints it.
//
// Each rank is a separate PROCESS (forked per rank count) with its own DataPlaneServer, as agents
// on different nodes would be; the parent only collects the ports and hands out the peer list.
// Per collective and size: one warm-up call, a barrier, `iters` timed calls; the reported time is
// the slowest rank's average, then one call on fresh integer-valued data is checked (#wrong).
//
//   collectives_bench [--ranks 2,4,8] [--sizes 1M,64M,256M] [--ops all_reduce,all_gather,reduce_scatter]
//                     [--iters N]
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "neuron/data_plane.h"
#include "neuron/tcp_communicator.h"
#include "proto/collective_bandwidth.h"
#include "proto/errors.h"

namespace trainyard::neuron {
namespace {

struct BenchOptions {
  std::vector<int> ranks{2, 4, 8};
  std::vector<std::size_t> sizes{1u << 20, 64u << 20, 256u << 20};
  std::vector<CollectiveKind> ops{CollectiveKind::all_reduce, CollectiveKind::all_gather,
                                  CollectiveKind::reduce_scatter};
  int iters = 0;  // 0: chosen per size
};

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) items.push_back(item);
  return items;
}

std::size_t parse_size(const std::string& text) {
  std::size_t used = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(text, &used);
  } catch (const std::exception&) {
    throw InvalidInput("--sizes", "not a size: \"" + text + "\"");
  }
  const std::string suffix = text.substr(used);
  const unsigned shift = suffix == "" ? 0 : suffix == "K" ? 10 : suffix == "M" ? 20 : suffix == "G" ? 30 : 99;
  if (shift == 99 || value == 0 || (shift == 0 && value % 4 != 0)) {
    throw InvalidInput("--sizes", "expected bytes (a multiple of 4) with optional K, M or G: \"" + text + "\"");
  }
  return static_cast<std::size_t>(value) << shift;
}

BenchOptions parse_options(int argc, char** argv) {
  BenchOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw InvalidInput(flag, "needs a value");
    const std::string value = argv[++i];
    if (flag == "--ranks") {
      options.ranks.clear();
      for (const auto& item : split(value)) {
        const int n = std::atoi(item.c_str());
        if (n < 1 || n > 64) throw InvalidInput("--ranks", "each must be 1..64");
        options.ranks.push_back(n);
      }
    } else if (flag == "--sizes") {
      options.sizes.clear();
      for (const auto& item : split(value)) options.sizes.push_back(parse_size(item));
    } else if (flag == "--ops") {
      options.ops.clear();
      for (const auto& item : split(value)) {
        bool known = false;
        for (auto kind : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter}) {
          if (item == to_string(kind)) {
            options.ops.push_back(kind);
            known = true;
          }
        }
        if (!known) throw InvalidInput("--ops", "unknown collective \"" + item + "\"");
      }
    } else if (flag == "--iters") {
      options.iters = std::atoi(value.c_str());
      if (options.iters < 1) throw InvalidInput("--iters", "must be positive");
    } else {
      throw InvalidInput(flag, "unknown flag");
    }
  }
  return options;
}

int iterations_for(std::size_t bytes, const BenchOptions& options) {
  if (options.iters > 0) return options.iters;
  return bytes <= (1u << 20) ? 50 : bytes <= (64u << 20) ? 5 : 2;
}

// Small integers, so sums over up to 64 ranks are exact in float.
float bench_value(int rank, std::size_t i) { return static_cast<float>(i % 251) + static_cast<float>(rank); }
float bench_sum(int world, std::size_t i) {
  return static_cast<float>(world) * static_cast<float>(i % 251) + static_cast<float>(world * (world - 1) / 2);
}

// The collective under test, on buffers prepared once, so the timed loop only communicates.
class Workload {
 public:
  Workload(Communicator& comm, CollectiveKind kind, std::size_t count)
      : comm_(comm), kind_(kind), own_(chunk_of(count, comm.world_size(), comm.rank())), buffer_(count), mine_(own_.count) {
    fill();
  }
  void fill() {
    for (std::size_t i = 0; i < buffer_.size(); ++i) buffer_[i] = bench_value(comm_.rank(), i);
    for (std::size_t i = 0; i < mine_.size(); ++i) mine_[i] = bench_value(comm_.rank(), own_.begin + i);
  }
  void run() {
    switch (kind_) {
      case CollectiveKind::all_reduce: return comm_.all_reduce_sum(buffer_);
      case CollectiveKind::all_gather: return comm_.all_gather(mine_, buffer_);
      case CollectiveKind::reduce_scatter: return comm_.reduce_scatter_sum(buffer_, mine_);
    }
  }
  std::size_t wrong() const {
    const int world = comm_.world_size();
    std::size_t wrong = 0;
    switch (kind_) {
      case CollectiveKind::all_reduce:
        for (std::size_t i = 0; i < buffer_.size(); ++i) wrong += buffer_[i] != bench_sum(world, i);
        break;
      case CollectiveKind::all_gather:
        for (int r = 0; r < world; ++r) {
          const ElementRange chunk = chunk_of(buffer_.size(), world, r);
          for (std::size_t i = chunk.begin; i < chunk.begin + chunk.count; ++i) wrong += buffer_[i] != bench_value(r, i);
        }
        break;
      case CollectiveKind::reduce_scatter:
        for (std::size_t i = 0; i < mine_.size(); ++i) wrong += mine_[i] != bench_sum(world, own_.begin + i);
        break;
    }
    return wrong;
  }

 private:
  Communicator& comm_;
  CollectiveKind kind_;
  ElementRange own_;
  std::vector<float> buffer_;
  std::vector<float> mine_;
};

// Largest value across ranks, via an all-gather of one float per rank.
float max_over_ranks(Communicator& comm, float value) {
  std::vector<float> all(static_cast<std::size_t>(comm.world_size()));
  comm.all_gather(std::span(&value, 1), all);
  float max = value;
  for (float v : all) max = std::max(max, v);
  return max;
}

void print_header(CollectiveKind kind, int world) {
  std::printf("#\n# collective=%s ranks=%d transport=tcp-loopback processes=separate\n",
              std::string(to_string(kind)).c_str(), world);
  std::printf("#%12s %12s %8s %6s %10s %8s %8s %7s\n", "size", "count", "type", "redop", "time", "algbw", "busbw",
              "#wrong");
  std::printf("#%12s %12s %8s %6s %10s %8s %8s %7s\n", "(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", "");
}

void bench_rank(Communicator& comm, const BenchOptions& options) {
  const int world = comm.world_size();
  for (CollectiveKind kind : options.ops) {
    if (comm.rank() == 0) print_header(kind, world);
    for (std::size_t bytes : options.sizes) {
      const std::size_t count = bytes / sizeof(float);
      Workload workload(comm, kind, count);
      workload.run();  // warm-up: connections, page faults
      float barrier = 0;
      comm.all_reduce_sum(std::span(&barrier, 1));
      const int iters = iterations_for(bytes, options);
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) workload.run();
      const double mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iters;
      const double seconds = max_over_ranks(comm, static_cast<float>(mine));
      workload.fill();
      workload.run();
      float wrong = static_cast<float>(workload.wrong());
      comm.all_reduce_sum(std::span(&wrong, 1));
      if (comm.rank() == 0) {
        const double size = static_cast<double>(bytes);
        std::printf(" %12zu %12zu %8s %6s %10.1f %8.2f %8.2f %7.0f\n", bytes, count, "float",
                    kind == CollectiveKind::all_gather ? "none" : "sum", seconds * 1e6, algbw(size, seconds) / 1e9,
                    busbw(kind, world, size, seconds) / 1e9, wrong);
        std::fflush(stdout);
      }
    }
  }
}

// One rank's process: announce the data-plane port, learn the peers, run, exit.
[[noreturn]] void child(int rank, int port_pipe, int peers_pipe, const BenchOptions& options) {
  int status = 0;
  try {
    DataPlaneServer server({"127.0.0.1", 0}, {});
    const int announce[2] = {rank, server.port()};
    if (::write(port_pipe, announce, sizeof announce) != sizeof announce) throw std::runtime_error("announce");
    std::string peers_text;
    char buffer[4096];
    for (ssize_t n; (n = ::read(peers_pipe, buffer, sizeof buffer)) > 0;) peers_text.append(buffer, static_cast<std::size_t>(n));
    std::vector<std::string> peers = split(peers_text);
    TcpCommunicator comm({1, rank, peers, std::chrono::seconds(120), {}, 0}, server);
    bench_rank(comm, options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    status = 1;
  }
  std::fflush(stdout);
  ::_exit(status);
}

bool run_world(int world, const BenchOptions& options) {
  int ports[2];
  if (::pipe(ports) != 0) throw std::runtime_error("pipe");
  std::vector<int> peer_writers;
  std::vector<pid_t> children;
  std::fflush(stdout);
  for (int rank = 0; rank < world; ++rank) {
    int peers[2];
    if (::pipe(peers) != 0) throw std::runtime_error("pipe");
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(ports[0]);
      ::close(peers[1]);
      for (int fd : peer_writers) ::close(fd);
      child(rank, ports[1], peers[0], options);
    }
    ::close(peers[0]);
    peer_writers.push_back(peers[1]);
    children.push_back(pid);
  }
  ::close(ports[1]);
  std::vector<std::string> addresses(static_cast<std::size_t>(world));
  for (int i = 0; i < world; ++i) {
    int announce[2];
    if (::read(ports[0], announce, sizeof announce) != sizeof announce) break;
    addresses[static_cast<std::size_t>(announce[0])] = "127.0.0.1:" + std::to_string(announce[1]);
  }
  ::close(ports[0]);
  std::string peers_text;
  for (const auto& address : addresses) peers_text += (peers_text.empty() ? "" : ",") + address;
  for (int fd : peer_writers) {
    [[maybe_unused]] const ssize_t n = ::write(fd, peers_text.data(), peers_text.size());
    ::close(fd);
  }
  bool ok = true;
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  return ok;
}

}  // namespace
}  // namespace trainyard::neuron

int main(int argc, char** argv) {
  using namespace trainyard::neuron;
  spdlog::set_level(spdlog::level::warn);
  BenchOptions options;
  try {
    options = parse_options(argc, argv);
  } catch (const trainyard::InvalidInput& e) {
    std::cerr << "collectives_bench: " << e.what() << "\n";
    return 2;
  }
  bool ok = true;
  for (int world : options.ranks) ok = run_world(world, options) && ok;
  return ok ? 0 : 1;
}
