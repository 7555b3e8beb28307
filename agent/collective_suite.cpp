#include "agent/collective_suite.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "healthcheck/format.h"

namespace trainyard::agent {
namespace {

using healthcheck::CollectiveMeasurement;
using healthcheck::CollectiveSuiteOptions;
using healthcheck::RankCollectiveResult;
using healthcheck::short_number;

using Clock = std::chrono::steady_clock;
using neuron::chunk_begin;

// Small integers (|value| <= 512): sums over thousands of ranks stay exact in fp32.
float contribution(int rank, std::size_t index) {
  return static_cast<float>(static_cast<int>((index * 7 + static_cast<std::size_t>(rank) * 13) % 1025) - 512);
}

float sum_over_ranks(int world, std::size_t index) {
  float sum = 0;
  for (int r = 0; r < world; ++r) sum += contribution(r, index);
  return sum;
}

struct Chunk {
  std::size_t begin;
  std::size_t end;
};

Chunk chunk(std::size_t total, int world, int rank) {
  return {chunk_begin(total, world, rank), chunk_begin(total, world, rank + 1)};
}

// One collective on fresh buffers; sets `elapsed` to the time of the collective call alone and
// returns the first wrong element as text, empty if exact.
using Trial = std::function<std::string(neuron::Communicator&, std::size_t, Clock::duration& elapsed)>;

template <typename Call>
void timed(Clock::duration& elapsed, Call&& call) {
  const Clock::time_point start = Clock::now();
  call();
  elapsed = Clock::now() - start;
}

std::string mismatch(const char* buffer, std::size_t index, float got, float want) {
  return std::string(buffer) + " element " + std::to_string(index) + " is " + short_number(got) + ", want " +
         short_number(want);
}

std::string all_reduce_trial(neuron::Communicator& comm, std::size_t n, Clock::duration& elapsed) {
  std::vector<float> data(n);
  for (std::size_t i = 0; i < n; ++i) data[i] = contribution(comm.rank(), i);
  timed(elapsed, [&] { comm.all_reduce_sum(data); });
  for (std::size_t i = 0; i < n; ++i) {
    const float want = sum_over_ranks(comm.world_size(), i);
    if (data[i] != want) return mismatch("all_reduce", i, data[i], want);
  }
  return "";
}

std::string all_gather_trial(neuron::Communicator& comm, std::size_t n, Clock::duration& elapsed) {
  const Chunk own = chunk(n, comm.world_size(), comm.rank());
  std::vector<float> mine(own.end - own.begin);
  for (std::size_t i = own.begin; i < own.end; ++i) mine[i - own.begin] = contribution(comm.rank(), i);
  std::vector<float> all(n);
  timed(elapsed, [&] { comm.all_gather(mine, all); });
  for (int r = 0; r < comm.world_size(); ++r) {
    const Chunk theirs = chunk(n, comm.world_size(), r);
    for (std::size_t i = theirs.begin; i < theirs.end; ++i) {
      if (all[i] != contribution(r, i)) return mismatch("all_gather", i, all[i], contribution(r, i));
    }
  }
  return "";
}

std::string reduce_scatter_trial(neuron::Communicator& comm, std::size_t n, Clock::duration& elapsed) {
  std::vector<float> input(n);
  for (std::size_t i = 0; i < n; ++i) input[i] = contribution(comm.rank(), i);
  const Chunk own = chunk(n, comm.world_size(), comm.rank());
  std::vector<float> mine(own.end - own.begin);
  timed(elapsed, [&] { comm.reduce_scatter_sum(input, mine); });
  for (std::size_t i = own.begin; i < own.end; ++i) {
    const float want = sum_over_ranks(comm.world_size(), i);
    if (mine[i - own.begin] != want) return mismatch("reduce_scatter", i, mine[i - own.begin], want);
  }
  return "";
}

Trial trial_of(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_reduce: return all_reduce_trial;
    case CollectiveKind::all_gather: return all_gather_trial;
    case CollectiveKind::reduce_scatter: return reduce_scatter_trial;
  }
  return all_reduce_trial;
}

// Runs warm-up plus timed iterations; checks every one. Throws CollectiveError from the transport.
CollectiveMeasurement measure(CollectiveKind kind, neuron::Communicator& comm, const CollectiveSuiteOptions& options) {
  const Trial trial = trial_of(kind);
  CollectiveMeasurement m{kind, false, options.elements * sizeof(float), 0, 0, ""};
  Clock::duration elapsed{};
  m.error = trial(comm, options.elements, elapsed);  // warm-up
  Clock::duration fastest = Clock::duration::max();
  for (int i = 0; i < options.iterations; ++i) {
    std::string wrong = trial(comm, options.elements, elapsed);
    fastest = std::min(fastest, elapsed);
    if (m.error.empty()) m.error = std::move(wrong);
  }
  m.exact = m.error.empty();
  m.seconds = std::chrono::duration<double>(fastest).count();
  m.busbw = m.seconds > 0 ? busbw(kind, comm.world_size(), static_cast<double>(m.bytes), m.seconds) : 0;
  return m;
}

}  // namespace

RankCollectiveResult run_collective_suite(neuron::Communicator& communicator, const CollectiveSuiteOptions& options) {
  RankCollectiveResult result{communicator.rank(), communicator.world_size(), {}, "", std::nullopt};
  for (CollectiveKind kind : {CollectiveKind::all_gather, CollectiveKind::all_reduce, CollectiveKind::reduce_scatter}) {
    try {
      result.collectives.push_back(measure(kind, communicator, options));
    } catch (const neuron::CollectiveError& e) {
      result.error = std::string(to_string(kind)) + ": " + e.what();
      if (e.peer_rank() >= 0) result.failed_peer = e.peer_rank();
      break;
    }
  }
  return result;
}

}  // namespace trainyard::agent
