#pragma once
// The pass/fail arithmetic of the three per-core sanity tests of the accelerator suite: pure
// assessments of what a core returned, tested on their own with synthetic outputs. Driving the core
// (the device part of each test) is the agent's (agent/core_checks.h).
//
// - GEMM: random fp32 operands in [-1, 1), multiplied on the core without operand rounding, and
//   compared per element with an fp64 reference. The tolerance is the standard error bound of an
//   fp32 dot product of length k (products and sums each rounded once, u = 2^-24):
//   |computed - exact| <= gamma_k * sum_k |a_ik b_kj|, gamma_k = k u / (1 - k u), plus the same bound
//   with u = 2^-53 for the reference's own rounding. A correct core can never exceed it; a
//   corrupted element (x -> x + 1 + |x|) exceeds it by orders of magnitude.
// - Stochastic rounding: N inputs spread over [-4, 4) are rounded to bf16 on the core. Every result
//   must be one of the input's two bf16 neighbours (exact check), and the mean rounding error must
//   be near zero: each error has mean 0 and a variance known from the input, h^2 p (1 - p) (h the
//   neighbours' spacing, p the input's position between them), so Bernstein's inequality gives the
//   bound t on |mean error| that an unbiased rounder exceeds with probability at most `alpha`:
//   t = (2ML/3 + sqrt((2ML/3)^2 + 8 N var L)) / (2N), L = ln(2/alpha), var the mean variance, M the
//   largest spacing. A rounder that is biased by even a few percent of an ulp lands far outside.
// - Memory: the device offers no raw memory interface, only operations that read input buffers and
//   write output buffers, so patterns (checkerboards, walking ones, address-derived words; all
//   finite floats) are written through the core with a bit-exact copy (relu_grad with a positive
//   gate returns its input unchanged), copied again in place (read and write the same buffer), and
//   compared bit for bit.
#include <cstdint>
#include <span>
#include <string>

namespace trainyard::healthcheck {

// A test's figure of merit against its bound; `finding` says what is wrong, empty when it passed.
struct Assessment {
  double measured = 0;
  double limit = 0;
  std::string finding;
  bool passed() const { return finding.empty(); }
};

// out = a * b (row-major; a is m x k, b is k x n, out is m x n), judged against fp64.
Assessment assess_gemm(std::span<const float> a, std::span<const float> b, std::span<const float> out, int m, int k,
                       int n);
// `rounded[i]` is `inputs[i]` rounded to bf16 by the rounder under test.
Assessment assess_stochastic_rounding(std::span<const float> inputs, std::span<const float> rounded,
                                      double false_alarm_probability);
// `read` should hold exactly the bits of `written`; `pattern` names the pattern in the finding.
Assessment assess_memory(const std::string& pattern, std::span<const std::uint32_t> written,
                         std::span<const float> read);

}  // namespace trainyard::healthcheck
