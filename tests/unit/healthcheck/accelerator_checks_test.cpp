#include "healthcheck/accelerator_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <functional>
#include <random>

namespace trainyard::healthcheck {
namespace {

using ::testing::HasSubstr;

// A plain fp32 GEMM as the device computes it (products and sums rounded to fp32, ascending k).
std::vector<float> fp32_gemm(const std::vector<float>& a, const std::vector<float>& b, int m, int k, int n) {
  std::vector<float> out(static_cast<std::size_t>(m) * n, 0.0f);
  for (int i = 0; i < m; ++i) {
    for (int kk = 0; kk < k; ++kk) {
      for (int j = 0; j < n; ++j) {
        const float product = a[static_cast<std::size_t>(i) * k + kk] * b[static_cast<std::size_t>(kk) * n + j];
        out[static_cast<std::size_t>(i) * n + j] += product;
      }
    }
  }
  return out;
}

std::vector<float> uniform(std::size_t count, float lo, float hi, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> between(lo, hi);
  std::vector<float> v(count);
  for (float& x : v) x = between(rng);
  return v;
}

struct GemmCase {
  int m = 48, k = 96, n = 40;
  std::vector<float> a = uniform(48 * 96, -1, 1, 1);
  std::vector<float> b = uniform(96 * 40, -1, 1, 2);
};

TEST(GemmAssessmentTest, AnHonestFp32ProductIsWithinTheBoundButNotExact) {
  const GemmCase c;
  const Assessment result = assess_gemm(c.a, c.b, fp32_gemm(c.a, c.b, c.m, c.k, c.n), c.m, c.k, c.n);
  EXPECT_TRUE(result.passed()) << result.finding;
  EXPECT_GT(result.measured, 0.0) << "fp32 rounding shows against the fp64 reference, so the bound is not vacuous";
  EXPECT_LE(result.measured, result.limit);
  EXPECT_LT(result.limit, 1e-3) << "a corruption of 1 + |x| must stand out";
}

TEST(GemmAssessmentTest, OneWrongElementIsNamedWithItsErrorAndTolerance) {
  const GemmCase c;
  std::vector<float> out = fp32_gemm(c.a, c.b, c.m, c.k, c.n);
  out[5 * c.n + 17] += 1.5f;
  const Assessment result = assess_gemm(c.a, c.b, out, c.m, c.k, c.n);
  EXPECT_FALSE(result.passed());
  EXPECT_NEAR(result.measured, 1.5, 1e-3);
  EXPECT_THAT(result.finding, HasSubstr("GEMM element [5,17] off by 1.5 (tolerance "));
}

TEST(GemmAssessmentTest, AnErrorJustOverTheBoundFailsAndNaNFails) {
  const GemmCase c;
  const std::vector<float> honest = fp32_gemm(c.a, c.b, c.m, c.k, c.n);
  const Assessment clean = assess_gemm(c.a, c.b, honest, c.m, c.k, c.n);
  std::vector<float> nudged = honest;
  // Worst element moved by three times its tolerance: small in absolute terms, still caught.
  for (std::size_t i = 0; i < nudged.size(); ++i) nudged[i] += static_cast<float>(3 * clean.limit);
  EXPECT_FALSE(assess_gemm(c.a, c.b, nudged, c.m, c.k, c.n).passed());
  std::vector<float> garbage = honest;
  garbage[0] = std::nanf("");
  EXPECT_THAT(assess_gemm(c.a, c.b, garbage, c.m, c.k, c.n).finding, HasSubstr("GEMM element [0,0]"));
}

// Rounds each input as `rounder(x, neighbours-position)` decides, for synthetic rounders.
std::vector<float> rounded_by(const std::vector<float>& inputs, const std::function<float(float)>& rounder) {
  std::vector<float> out;
  for (float x : inputs) out.push_back(rounder(x));
  return out;
}

float truncate_bf16(float x) { return std::bit_cast<float>(std::bit_cast<std::uint32_t>(x) & 0xFFFF0000u); }
float away_bf16(float x) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  return (bits & 0xFFFFu) == 0 ? x : std::bit_cast<float>((bits & 0xFFFF0000u) + 0x10000u);
}

// Stochastic rounding as docs/DESIGN.md "The simulated node" defines it: add random bits below the bf16 mantissa, then
// truncate (no NaN or infinity among the inputs here).
float stochastic_bf16(float x, std::uint16_t random_bits) {
  return truncate_bf16(std::bit_cast<float>(std::bit_cast<std::uint32_t>(x) + random_bits));
}

constexpr double kAlpha = 1e-9;

TEST(StochasticRoundingAssessmentTest, TrueStochasticRoundingPassesWithABoundFarBelowAnUlp) {
  const std::vector<float> inputs = uniform(1 << 16, -4, 4, 3);
  std::mt19937_64 rng(4);
  const Assessment result = assess_stochastic_rounding(
      inputs, rounded_by(inputs, [&](float x) { return stochastic_bf16(x, static_cast<std::uint16_t>(rng())); }), kAlpha);
  EXPECT_TRUE(result.passed()) << result.finding;
  EXPECT_GT(result.measured, 0.0);
  // The spacing of bf16 values in [2, 4) is 2^-6; the bound must resolve a bias of a few percent of it.
  EXPECT_LT(result.limit, 0.02 * 0x1p-6);
}

TEST(StochasticRoundingAssessmentTest, TheBoundShrinksLikeOneOverRootN) {
  const auto bound = [](std::size_t n) {
    const std::vector<float> inputs = uniform(n, 1, 2, 5);
    return assess_stochastic_rounding(inputs, rounded_by(inputs, truncate_bf16), kAlpha).limit;
  };
  // Quadrupling N halves the variance term; the 1/N term makes it shrink a little faster.
  const double ratio = bound(1 << 12) / bound(1 << 14);
  EXPECT_GT(ratio, 2.0);
  EXPECT_LT(ratio, 2.5);
}

TEST(StochasticRoundingAssessmentTest, BiasedRoundersAreCaught) {
  const std::vector<float> positive = uniform(1 << 16, 1, 4, 6);
  const Assessment truncating = assess_stochastic_rounding(positive, rounded_by(positive, truncate_bf16), kAlpha);
  EXPECT_FALSE(truncating.passed());
  EXPECT_THAT(truncating.finding, HasSubstr("stochastic rounding bias -"));
  EXPECT_THAT(truncating.finding, HasSubstr("over 65536 roundings exceeds bound"));

  // Rounds away from zero 5 percentage points more often than it should.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0, 1);
  const auto slightly_biased = [&](float x) {
    const double position = (std::bit_cast<std::uint32_t>(x) & 0xFFFFu) / 65536.0;
    return unit(rng) < position + 0.05 ? away_bf16(x) : truncate_bf16(x);
  };
  EXPECT_FALSE(assess_stochastic_rounding(positive, rounded_by(positive, slightly_biased), kAlpha).passed());
}

TEST(StochasticRoundingAssessmentTest, AResultThatIsNotANeighbourIsNamed) {
  const std::vector<float> inputs = uniform(1000, -4, 4, 8);
  std::vector<float> rounded = rounded_by(inputs, truncate_bf16);
  rounded[17] = rounded[17] + 1.0f + std::fabs(rounded[17]);
  const Assessment result = assess_stochastic_rounding(inputs, rounded, kAlpha);
  EXPECT_FALSE(result.passed());
  EXPECT_THAT(result.finding, HasSubstr("stochastic rounding of element 17 ("));
  EXPECT_THAT(result.finding, HasSubstr("not a bf16 neighbour"));
}

TEST(MemoryAssessmentTest, ExactBitsPassAndFlippedBitsAreCountedAndNamed) {
  const std::vector<std::uint32_t> written{0x55555555u, 0xAAAAAAAAu, 0x00000001u, 0x80000000u};
  std::vector<float> read;
  for (std::uint32_t w : written) read.push_back(std::bit_cast<float>(w));
  EXPECT_TRUE(assess_memory("checkerboard", written, read).passed());

  read[1] = std::bit_cast<float>(0xAAAAAAABu);
  read[3] = 0.0f;  // -0.0 == 0.0 as floats, but not as bits
  const Assessment result = assess_memory("checkerboard", written, read);
  EXPECT_EQ(result.measured, 2);
  EXPECT_EQ(result.finding, "memory pattern checkerboard word 1 read 0xaaaaaaab, wrote 0xaaaaaaaa (2 words wrong)");
}

}  // namespace
}  // namespace trainyard::healthcheck
