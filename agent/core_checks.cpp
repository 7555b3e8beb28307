#include "agent/core_checks.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "neuron/rng.h"

namespace trainyard::agent {
namespace {

using neuron::ElementwiseOp;
using neuron::Rounding;

// One pattern for the memory test: word i of the buffer.
struct MemoryPattern {
  const char* name;
  std::function<std::uint32_t(std::size_t)> word;
};

// All words are finite floats (no exponent of all ones), so the copy cannot canonicalise a NaN.
const std::vector<MemoryPattern>& memory_patterns() {
  static const std::vector<MemoryPattern> patterns{
      {"checkerboard", [](std::size_t i) { return i % 2 == 0 ? 0x55555555u : 0xAAAAAAAAu; }},
      {"inverse_checkerboard", [](std::size_t i) { return i % 2 == 0 ? 0xAAAAAAAAu : 0x55555555u; }},
      {"walking_ones", [](std::size_t i) { return 1u << (i % 32); }},
      // Bit 30 cleared keeps the exponent below all ones.
      {"address", [](std::size_t i) { return static_cast<std::uint32_t>(neuron::splitmix64(i)) & ~0x40000000u; }},
  };
  return patterns;
}

// Seeded size x size operands in [-1, 1) for the core, and room for the product.
struct GemmOperands {
  std::vector<float> a, b, out;
};
GemmOperands gemm_operands(const neuron::NeuronCore& core, int size, std::uint64_t seed) {
  neuron::Rng rng(seed, static_cast<std::uint64_t>(core.index()));
  const std::size_t elements = static_cast<std::size_t>(size) * size;
  GemmOperands o{std::vector<float>(elements), std::vector<float>(elements), std::vector<float>(elements)};
  for (float& x : o.a) x = rng.uniform(-1, 1);
  for (float& x : o.b) x = rng.uniform(-1, 1);
  return o;
}

}  // namespace

healthcheck::Assessment run_gemm_test(neuron::NeuronCore& core, int size, std::uint64_t seed, std::stop_token stop) {
  auto [a, b, out] = gemm_operands(core, size, seed);
  core.gemm({a.data(), size, size}, neuron::Transpose::no, {b.data(), size, size}, neuron::Transpose::no,
            {out.data(), size, size}, Rounding::none, stop);
  return healthcheck::assess_gemm(a, b, out, size, size, size);
}

GemmTimer::GemmTimer(neuron::NeuronCore& core, int size, std::uint64_t seed) : core_(&core), size_(size) {
  auto [a, b, out] = gemm_operands(core, size, seed);
  a_ = std::move(a);
  b_ = std::move(b);
  out_ = std::move(out);
}

double GemmTimer::time_one(std::stop_token stop) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  core_->gemm({a_.data(), size_, size_}, neuron::Transpose::no, {b_.data(), size_, size_}, neuron::Transpose::no,
              {out_.data(), size_, size_}, Rounding::none, stop);
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

healthcheck::Assessment run_stochastic_rounding_test(neuron::NeuronCore& core, std::size_t samples,
                                                double false_alarm_probability, std::uint64_t seed,
                                                std::stop_token stop) {
  neuron::Rng rng(seed, static_cast<std::uint64_t>(core.index()));
  std::vector<float> inputs(samples), zeros(samples, 0.0f), rounded(samples);
  for (float& x : inputs) x = rng.uniform(-4, 4);
  // x + 0 is exact, so the only change is the core's rounding of the result.
  core.elementwise(ElementwiseOp::add, inputs, zeros, rounded, Rounding::stochastic, stop);
  return healthcheck::assess_stochastic_rounding(inputs, rounded, false_alarm_probability);
}

healthcheck::Assessment run_memory_test(neuron::NeuronCore& core, std::size_t words, std::stop_token stop) {
  const std::vector<float> gate(words, 1.0f);
  std::vector<std::uint32_t> written(words);
  std::vector<float> source(words), buffer(words);
  for (const MemoryPattern& pattern : memory_patterns()) {
    for (std::size_t i = 0; i < words; ++i) {
      written[i] = pattern.word(i);
      source[i] = std::bit_cast<float>(written[i]);
    }
    core.elementwise(ElementwiseOp::relu_grad, source, gate, buffer, Rounding::none, stop);
    core.elementwise(ElementwiseOp::relu_grad, buffer, gate, buffer, Rounding::none, stop);
    healthcheck::Assessment result = healthcheck::assess_memory(pattern.name, written, buffer);
    if (!result.passed()) return result;
  }
  return {};
}

}  // namespace trainyard::agent
