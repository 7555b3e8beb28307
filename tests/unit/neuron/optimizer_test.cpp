#include <gtest/gtest.h>

#include <cmath>

#include "neuron/optimizer.h"
#include "neuron/spike_detector.h"

namespace trainyard::neuron {
namespace {

WorkloadSpec schedule(double lr, double min_lr, std::int64_t warmup, std::int64_t steps) {
  WorkloadSpec w;
  w.lr = lr;
  w.min_lr = min_lr;
  w.warmup = warmup;
  w.steps = steps;
  return w;
}

TEST(LearningRate, WarmsUpLinearlyThenFollowsTheCosineToTheMinimum) {
  const WorkloadSpec w = schedule(1e-3, 1e-4, 10, 111);  // 100 decay steps after the peak
  EXPECT_DOUBLE_EQ(learning_rate(w, 0), 1e-4);   // 1/10 of lr
  EXPECT_DOUBLE_EQ(learning_rate(w, 4), 5e-4);
  EXPECT_DOUBLE_EQ(learning_rate(w, 9), 1e-3);
  EXPECT_DOUBLE_EQ(learning_rate(w, 10), 1e-3);  // decay starts at the peak
  // Half way through the decay the cosine is at 0: the midpoint of lr and min_lr.
  EXPECT_NEAR(learning_rate(w, 60), 5.5e-4, 1e-12);
  EXPECT_DOUBLE_EQ(learning_rate(w, 110), 1e-4);  // the last step runs at min_lr
  for (std::int64_t s = 10; s < 110; ++s) EXPECT_GT(learning_rate(w, s), learning_rate(w, s + 1)) << s;
}

TEST(LearningRate, NoWarmupStartsAtThePeak) {
  EXPECT_DOUBLE_EQ(learning_rate(schedule(2e-3, 0, 0, 50), 0), 2e-3);
  EXPECT_DOUBLE_EQ(learning_rate(schedule(2e-3, 0, 0, 1), 0), 2e-3);
}

TEST(GradientClipping, ScalesOnlyNormsAboveTheLimit) {
  std::vector<float> small{0.3f, 0.4f};  // norm 0.5
  EXPECT_NEAR(clip_global_norm(small, 1.0), 0.5, 1e-7);
  EXPECT_EQ(small, (std::vector<float>{0.3f, 0.4f}));

  std::vector<float> large{3.0f, 4.0f};  // norm 5
  EXPECT_NEAR(clip_global_norm(large, 1.0), 5.0, 1e-7);
  EXPECT_NEAR(large[0], 0.6, 1e-6);
  EXPECT_NEAR(large[1], 0.8, 1e-6);
  EXPECT_NEAR(l2_norm(large), 1.0, 1e-6);
}

TEST(AdamW, FirstTwoStepsMatchHandComputedValues) {
  // lr 0.1, wd 0.1, b1 0.9, b2 0.95, eps 1e-5; w = 1, gradients 0.5 then -0.2.
  std::vector<float> w{1.0f}, m{0.0f}, v{0.0f};
  const std::vector<float> g1{0.5f}, g2{-0.2f};
  adamw_update(w, g1, m, v, 0.1, 1, 0.1);
  // m = 0.05, v = 0.0125; bias-corrected m_hat = 0.5, v_hat = 0.25; update = 0.5 / (0.5 + 1e-5).
  // w = 1 * (1 - 0.01) - 0.1 * 0.99998 = 0.890002
  EXPECT_NEAR(m[0], 0.05, 1e-8);
  EXPECT_NEAR(v[0], 0.0125, 1e-9);
  EXPECT_NEAR(w[0], 0.99 - 0.1 * (0.5 / (0.5 + 1e-5)), 1e-7);

  const double w1 = w[0];
  adamw_update(w, g2, m, v, 0.1, 2, 0.1);
  // m = 0.9*0.05 + 0.1*(-0.2) = 0.025; v = 0.95*0.0125 + 0.05*0.04 = 0.013875
  // m_hat = 0.025 / 0.19 ; v_hat = 0.013875 / 0.0975
  const double m_hat = 0.025 / 0.19, v_hat = 0.013875 / 0.0975;
  EXPECT_NEAR(m[0], 0.025, 1e-8);
  EXPECT_NEAR(v[0], 0.013875, 1e-9);
  EXPECT_NEAR(w[0], w1 * 0.99 - 0.1 * m_hat / (std::sqrt(v_hat) + 1e-5), 1e-6);
}

TEST(AdamW, ZeroWeightDecayLeavesOnlyTheAdamStep) {
  std::vector<float> w{2.0f, -1.0f}, m(2, 0.0f), v(2, 0.0f);
  const std::vector<float> g{0.0f, 0.0f};
  adamw_update(w, g, m, v, 0.5, 1, 0.0);
  EXPECT_EQ(w, (std::vector<float>{2.0f, -1.0f}));
  adamw_update(w, g, m, v, 0.5, 2, 0.1);
  EXPECT_FLOAT_EQ(w[0], 2.0f * 0.95f);
}

// Feeds `norms` from step 1 and collects what the detector reports.
std::vector<SpikeObservation> feed(SpikeDetector& d, const std::vector<double>& norms) {
  std::vector<SpikeObservation> seen;
  for (std::size_t i = 0; i < norms.size(); ++i) seen.push_back(d.observe(static_cast<std::int64_t>(i + 1), norms[i]));
  return seen;
}

TEST(SpikeDetector, NeedsAFullWindowBeforeJudging) {
  SpikeDetector d(1.0);
  std::vector<double> norms(19, 0.5);
  norms.push_back(100.0);  // step 20: only 19 norms in the window
  for (const auto& o : feed(d, norms)) EXPECT_FALSE(o.spike_started);
}

TEST(SpikeDetector, FlagsANormAboveMeanPlusThresholdAndCountsStepsToReturn) {
  SpikeDetector d(1.0);
  std::vector<double> norms(20, 0.5);  // mean 0.5: spike level 1.5
  norms.push_back(1.4);                // step 21: below the level
  norms.push_back(3.0);                // step 22: spike
  norms.push_back(2.0);                // step 23: still above 1.5
  norms.push_back(1.6);                // step 24: still above
  norms.push_back(0.6);                // step 25: back, 3 steps after the spike
  const auto seen = feed(d, norms);
  for (int s = 0; s < 21; ++s) EXPECT_FALSE(seen[static_cast<std::size_t>(s)].spike_started) << s + 1;
  EXPECT_TRUE(seen[21].spike_started);
  EXPECT_FALSE(seen[22].steps_to_return.has_value());
  EXPECT_FALSE(seen[23].steps_to_return.has_value());
  EXPECT_EQ(seen[24].steps_to_return, 3);
  EXPECT_FALSE(d.in_spike());
}

TEST(SpikeDetector, ThresholdIsAbsoluteAboveTheRunningMean) {
  SpikeDetector d(0.25);
  std::vector<double> norms(20, 2.0);
  norms.push_back(2.24);
  norms.push_back(2.30);  // mean is now 2.012: level 2.262
  const auto seen = feed(d, norms);
  EXPECT_FALSE(seen[20].spike_started);
  EXPECT_TRUE(seen[21].spike_started);
}

}  // namespace
}  // namespace trainyard::neuron
