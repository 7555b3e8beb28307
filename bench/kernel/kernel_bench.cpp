// Prints GEMM throughput per precision on one simulated NeuronCore (host CPU, single thread), and
// training steps/s per precision for a few model sizes and data-parallel degrees (in-process ranks,
// one thread each).
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

#include "neuron/in_process_communicator.h"
#include "neuron/trainer.h"

namespace trainyard::neuron {
namespace {

using Clock = std::chrono::steady_clock;

const Precision kPrecisions[] = {Precision::fp32, Precision::bf16, Precision::bf16_sr};

// Matmul operands per precision, as the device applies them.
Rounding gemm_rounding(Precision p) {
  return p == Precision::fp32 ? Rounding::none : (p == Precision::bf16 ? Rounding::nearest_even : Rounding::stochastic);
}

// Repeats `op` until `seconds` have passed; returns calls per second.
double rate(double seconds, const std::function<void()>& op) {
  op();  // warm caches and buffers
  const Clock::time_point start = Clock::now();
  long calls = 0;
  double elapsed = 0;
  do {
    op();
    ++calls;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < seconds);
  return static_cast<double>(calls) / elapsed;
}

void bench_gemm(double seconds) {
  std::printf("GEMM on one NeuronCore (C = A x B, square n, fp32 accumulation)\n");
  std::printf("%6s %10s %12s\n", "n", "precision", "GFLOP/s");
  NeuronDevice device(1, 1);
  Rng rng(1);
  for (int n : {64, 256, 512}) {
    std::vector<float> a(static_cast<std::size_t>(n) * n), b(a.size()), c(a.size());
    for (float& x : a) x = rng.uniform(-1, 1);
    for (float& x : b) x = rng.uniform(-1, 1);
    for (Precision p : kPrecisions) {
      const double per_s = rate(seconds, [&] {
        device.core(0).gemm({a.data(), n, n}, Transpose::no, {b.data(), n, n}, Transpose::no, {c.data(), n, n},
                            gemm_rounding(p), {});
      });
      std::printf("%6d %10s %12.2f\n", n, to_string(p).c_str(), per_s * 2.0 * n * n * n / 1e9);
    }
  }
}

// Steps/s of `world` in-process ranks training `w` for its configured steps.
double steps_per_second(const WorkloadSpec& w, int world) {
  auto comms = make_in_process_group(world);
  const Clock::time_point start = Clock::now();
  {
    std::vector<std::jthread> ranks;
    for (int r = 0; r < world; ++r) {
      ranks.emplace_back([&, r] {
        NeuronDevice device(1, static_cast<std::uint64_t>(r));
        Trainer(w, *comms[static_cast<std::size_t>(r)], device.core(0), {}).run({});
      });
    }
  }
  return static_cast<double>(w.steps) / std::chrono::duration<double>(Clock::now() - start).count();
}

void bench_training(double seconds) {
  struct Model {
    int width, depth, batch;
  };
  std::printf("\nTraining steps/s (student MLP, input 32, output 8; in-process ranks)\n");
  std::printf("%6s %6s %6s %6s %10s %10s %12s\n", "width", "depth", "batch", "ranks", "precision", "steps/s",
              "samples/s");
  for (const Model m : {Model{64, 2, 64}, Model{256, 4, 256}}) {
    for (int world : {1, 2}) {
      for (Precision p : kPrecisions) {
        WorkloadSpec w;
        w.width = m.width;
        w.depth = m.depth;
        w.global_batch = m.batch;
        w.precision = p;
        w.steps = 5;
        w.warmup = 0;
        // Size the run to about `seconds` from a short probe.
        w.steps = std::max<std::int64_t>(5, static_cast<std::int64_t>(seconds * steps_per_second(w, world)));
        const double sps = steps_per_second(w, world);
        std::printf("%6d %6d %6d %6d %10s %10.1f %12.0f\n", m.width, m.depth, m.batch, world, to_string(p).c_str(), sps,
                    sps * m.batch);
      }
    }
  }
}

}  // namespace
}  // namespace trainyard::neuron

int main(int argc, char** argv) {
  double seconds = 0.5;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: kernel_bench [--seconds S]\n");
      return 2;
    }
  }
  spdlog::set_level(spdlog::level::warn);
  trainyard::neuron::bench_gemm(seconds);
  trainyard::neuron::bench_training(seconds);
  return 0;
}
