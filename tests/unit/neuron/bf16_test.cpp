#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "neuron/bf16.h"

namespace trainyard::neuron {
namespace {

// bf16 keeps 7 explicit mantissa bits: neighbours of 1.0 are 1 and 1 + 2^-7.
constexpr float kUlpAtOne = 1.0f / 128.0f;

TEST(Bf16, RepresentableValuesAreUnchanged) {
  for (float v : {0.0f, -0.0f, 1.0f, -2.5f, 1.0f + kUlpAtOne, 65536.0f}) {
    EXPECT_EQ(bf16_round_nearest_even(v), v);
    EXPECT_EQ(bf16_round_stochastic(v, 0xFFFF), v);
  }
}

TEST(Bf16, NearestEvenBreaksTiesTowardEvenMantissa) {
  // Halfway between 1 (even) and 1 + ulp (odd): goes down to the even one.
  EXPECT_EQ(bf16_round_nearest_even(1.0f + kUlpAtOne / 2), 1.0f);
  // Halfway between 1 + ulp (odd) and 1 + 2 ulp (even): goes up.
  EXPECT_EQ(bf16_round_nearest_even(1.0f + 1.5f * kUlpAtOne), 1.0f + 2 * kUlpAtOne);
  EXPECT_EQ(bf16_round_nearest_even(-(1.0f + kUlpAtOne / 2)), -1.0f);
}

TEST(Bf16, NearestEvenRoundsToTheCloserNeighbour) {
  EXPECT_EQ(bf16_round_nearest_even(1.0f + 0.4f * kUlpAtOne), 1.0f);
  EXPECT_EQ(bf16_round_nearest_even(1.0f + 0.6f * kUlpAtOne), 1.0f + kUlpAtOne);
  EXPECT_EQ(bf16_round_nearest_even(-(1.0f + 0.6f * kUlpAtOne)), -(1.0f + kUlpAtOne));
}

TEST(Bf16, SpecialValuesSurvive) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(bf16_round_nearest_even(inf), inf);
  EXPECT_EQ(bf16_round_stochastic(-inf, 0xFFFF), -inf);
  EXPECT_TRUE(std::isnan(bf16_round_nearest_even(std::numeric_limits<float>::quiet_NaN())));
  // A NaN whose payload sits only in the low bits would truncate to infinity without quietening.
  EXPECT_TRUE(std::isnan(bf16_round_stochastic(std::bit_cast<float>(0x7F800001u), 0)));
  EXPECT_EQ(bf16_round_nearest_even(std::numeric_limits<float>::max()), inf);
}

TEST(Bf16, StochasticRoundingPicksANeighbourByTheRandomBits) {
  const float x = 1.0f + 0.25f * kUlpAtOne;  // a quarter of the way up
  EXPECT_EQ(bf16_round_stochastic(x, 0), 1.0f);
  EXPECT_EQ(bf16_round_stochastic(x, 0xBFFF), 1.0f);
  EXPECT_EQ(bf16_round_stochastic(x, 0xC000), 1.0f + kUlpAtOne);
}

TEST(Bf16, StochasticRoundingIsUnbiased) {
  Rng rng(7);
  const float x = 1.0f + 0.3f * kUlpAtOne;
  constexpr int kSamples = 200000;
  std::vector<float> values(kSamples, x);
  round_bf16(values, Rounding::stochastic, rng);
  double sum = 0;
  int up = 0;
  for (float v : values) {
    ASSERT_TRUE(v == 1.0f || v == 1.0f + kUlpAtOne);
    sum += v;
    up += v > 1.0f;
  }
  // P(up) = 0.3 in theory; binomial sd is sqrt(0.21 / n) ~ 0.001, allow 5 sd.
  EXPECT_NEAR(static_cast<double>(up) / kSamples, 0.3, 0.005);
  EXPECT_NEAR(sum / kSamples, static_cast<double>(x), 0.005 * kUlpAtOne);
  // Round to nearest is biased: every copy goes down.
  std::vector<float> nearest(kSamples, x);
  round_bf16(nearest, Rounding::nearest_even, rng);
  EXPECT_EQ(std::count(nearest.begin(), nearest.end(), 1.0f), kSamples);
}

TEST(Bf16, StochasticRoundingIsReproducibleFromTheSeed) {
  std::vector<float> a(64, 0.3f), b(64, 0.3f);
  Rng first(11), second(11);
  round_bf16(a, Rounding::stochastic, first);
  round_bf16(b, Rounding::stochastic, second);
  EXPECT_EQ(a, b);
}

TEST(Bf16, PrecisionsStoreWithTheirRounding) {
  EXPECT_EQ(storage_rounding(Precision::fp32), Rounding::none);
  EXPECT_EQ(storage_rounding(Precision::bf16), Rounding::nearest_even);
  EXPECT_EQ(storage_rounding(Precision::bf16_sr), Rounding::stochastic);
}

}  // namespace
}  // namespace trainyard::neuron
