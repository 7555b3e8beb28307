#include "healthcheck/accelerator_checks.h"

#include <bit>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <limits>

#include "healthcheck/format.h"

namespace trainyard::healthcheck {
namespace {

// gamma_k of the rounding-error analysis of a length-k dot product with unit roundoff u.
double gamma(int k, double unit_roundoff) {
  const double ku = k * unit_roundoff;
  return ku / (1 - ku);
}

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr double kFp32Roundoff = 0x1p-24;
constexpr double kFp64Roundoff = 0x1p-53;
constexpr std::uint32_t kBf16KeptMask = 0xFFFF0000u;
constexpr std::uint32_t kBf16Ulp = 0x10000u;  // one step of the bf16 mantissa in fp32 bits

std::string hex_word(std::uint32_t word) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", word);
  return text;
}

// The two bf16 values around `x`: `toward_zero` (the truncation) and `away` (one bf16 step further
// from zero). They are equal when x is already a bf16 value.
struct Bf16Neighbours {
  float toward_zero;
  float away;
  double position;  // where x lies between them, in [0, 1): the probability of rounding away
};

Bf16Neighbours bf16_neighbours(float x) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  const std::uint32_t low = bits & ~kBf16KeptMask;
  const float toward_zero = std::bit_cast<float>(bits & kBf16KeptMask);
  if (low == 0) return {toward_zero, toward_zero, 0.0};
  return {toward_zero, std::bit_cast<float>((bits & kBf16KeptMask) + kBf16Ulp), low / 65536.0};
}

}  // namespace

Assessment assess_gemm(std::span<const float> a, std::span<const float> b, std::span<const float> out, int m, int k,
                       int n) {
  assert(a.size() == static_cast<std::size_t>(m) * k && b.size() == static_cast<std::size_t>(k) * n);
  assert(out.size() == static_cast<std::size_t>(m) * n);
  const double relative_bound = gamma(k, kFp32Roundoff) + gamma(k, kFp64Roundoff);
  Assessment worst;
  double worst_ratio = -1;
  int worst_i = 0;
  int worst_j = 0;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double exact = 0;
      double magnitude = 0;
      for (int kk = 0; kk < k; ++kk) {
        const double product = static_cast<double>(a[static_cast<std::size_t>(i) * k + kk]) *
                               b[static_cast<std::size_t>(kk) * n + j];  // exact in fp64
        exact += product;
        magnitude += std::fabs(product);
      }
      // A NaN element (garbage) is as wrong as an element can be.
      const double difference = std::fabs(out[static_cast<std::size_t>(i) * n + j] - exact);
      const double error = std::isnan(difference) ? kInfinity : difference;
      const double tolerance = relative_bound * magnitude;
      // Ranked by error/tolerance, so the worst element is the most suspicious, not the largest.
      const double ratio = error == 0 ? 0 : (tolerance > 0 ? error / tolerance : kInfinity);
      if (ratio > worst_ratio) {
        worst_ratio = ratio;
        worst = {error, tolerance, ""};
        worst_i = i;
        worst_j = j;
      }
    }
  }
  if (worst.measured > worst.limit) {
    worst.finding = "GEMM element [" + std::to_string(worst_i) + "," + std::to_string(worst_j) + "] off by " +
                    short_number(worst.measured) + " (tolerance " + short_number(worst.limit) + ")";
  }
  return worst;
}

Assessment assess_stochastic_rounding(std::span<const float> inputs, std::span<const float> rounded,
                                      double false_alarm_probability) {
  assert(inputs.size() == rounded.size() && !inputs.empty());
  double error_sum = 0;
  double variance_sum = 0;
  double largest_spacing = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Bf16Neighbours around = bf16_neighbours(inputs[i]);
    const float r = rounded[i];
    if (std::bit_cast<std::uint32_t>(r) != std::bit_cast<std::uint32_t>(around.toward_zero) &&
        std::bit_cast<std::uint32_t>(r) != std::bit_cast<std::uint32_t>(around.away)) {
      return {1, 0,
              "stochastic rounding of element " + std::to_string(i) + " (" + short_number(inputs[i]) + ") gave " +
                  short_number(r) + ", not a bf16 neighbour"};
    }
    const double spacing = std::fabs(static_cast<double>(around.away) - around.toward_zero);
    error_sum += static_cast<double>(r) - inputs[i];
    variance_sum += spacing * spacing * around.position * (1 - around.position);
    largest_spacing = std::max(largest_spacing, spacing);
  }
  const double n = static_cast<double>(inputs.size());
  const double log_term = std::log(2 / false_alarm_probability);
  const double linear = 2 * largest_spacing * log_term / 3;
  const double bound = (linear + std::sqrt(linear * linear + 8 * variance_sum * log_term)) / (2 * n);
  Assessment result{std::fabs(error_sum / n), bound, ""};
  if (result.measured > result.limit) {
    result.finding = "stochastic rounding bias " + short_number(error_sum / n) + " over " +
                     std::to_string(inputs.size()) + " roundings exceeds bound " + short_number(bound);
  }
  return result;
}

Assessment assess_memory(const std::string& pattern, std::span<const std::uint32_t> written,
                         std::span<const float> read) {
  assert(written.size() == read.size());
  Assessment result;
  for (std::size_t i = 0; i < written.size(); ++i) {
    const std::uint32_t got = std::bit_cast<std::uint32_t>(read[i]);
    if (got == written[i]) continue;
    if (result.measured == 0) {
      result.finding = "memory pattern " + pattern + " word " + std::to_string(i) + " read " + hex_word(got) +
                       ", wrote " + hex_word(written[i]);
    }
    ++result.measured;
  }
  if (result.measured > 1) result.finding += " (" + short_number(result.measured) + " words wrong)";
  return result;
}

}  // namespace trainyard::healthcheck
