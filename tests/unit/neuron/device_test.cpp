#include <gtest/gtest.h>

#include <cmath>
#include <future>
#include <thread>

#include "neuron/device.h"

namespace trainyard::neuron {
namespace {

std::vector<float> random_values(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = rng.uniform(-1.0f, 1.0f);
  return v;
}

float element(const std::vector<float>& m, int cols, int r, int c, Transpose t) {
  // Element (r, c) of op(m), where m is stored row-major with `cols` columns.
  return t == Transpose::no ? m[static_cast<std::size_t>(r) * cols + c] : m[static_cast<std::size_t>(c) * cols + r];
}

// Double-precision reference of op(a) * op(b), with the operands first rounded as given.
std::vector<double> reference_gemm(std::vector<float> a, int a_cols, Transpose ta, std::vector<float> b, int b_cols,
                                   Transpose tb, int m, int k, int n, bool round_operands) {
  if (round_operands) {
    for (float& x : a) x = bf16_round_nearest_even(x);
    for (float& x : b) x = bf16_round_nearest_even(x);
  }
  std::vector<double> out(static_cast<std::size_t>(m) * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int kk = 0; kk < k; ++kk)
        out[static_cast<std::size_t>(i) * n + j] +=
            static_cast<double>(element(a, a_cols, i, kk, ta)) * element(b, b_cols, kk, j, tb);
  return out;
}

struct GemmCase {
  int m, k, n;
  Transpose ta, tb;
};

class DeviceGemm : public ::testing::TestWithParam<GemmCase> {};

TEST_P(DeviceGemm, MatchesDoubleReferenceInEveryPrecision) {
  const auto [m, k, n, ta, tb] = GetParam();
  // Storage shapes: op(a) is m x k, op(b) is k x n.
  const int a_rows = ta == Transpose::no ? m : k, a_cols = ta == Transpose::no ? k : m;
  const int b_rows = tb == Transpose::no ? k : n, b_cols = tb == Transpose::no ? n : k;
  const auto a = random_values(static_cast<std::size_t>(a_rows) * a_cols, 1);
  const auto b = random_values(static_cast<std::size_t>(b_rows) * b_cols, 2);
  NeuronDevice device(2, 5);
  std::vector<float> out(static_cast<std::size_t>(m) * n);

  device.core(0).gemm({a.data(), a_rows, a_cols}, ta, {b.data(), b_rows, b_cols}, tb, {out.data(), m, n},
                      Rounding::none, {});
  const auto exact = reference_gemm(a, a_cols, ta, b, b_cols, tb, m, k, n, false);
  for (std::size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], exact[i], 1e-5 * k) << i;

  device.core(0).gemm({a.data(), a_rows, a_cols}, ta, {b.data(), b_rows, b_cols}, tb, {out.data(), m, n},
                      Rounding::nearest_even, {});
  const auto rounded = reference_gemm(a, a_cols, ta, b, b_cols, tb, m, k, n, true);
  double max_from_exact = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    ASSERT_NEAR(out[i], rounded[i], 1e-5 * k) << i;
    max_from_exact = std::max(max_from_exact, std::fabs(out[i] - exact[i]));
  }
  // bf16 operands carry a relative error up to 2^-9 each: the product moves, but only that much.
  EXPECT_GT(max_from_exact, 1e-5);
  EXPECT_LT(max_from_exact, k * 2 * std::ldexp(1.0, -9));

  device.core(1).gemm({a.data(), a_rows, a_cols}, ta, {b.data(), b_rows, b_cols}, tb, {out.data(), m, n},
                      Rounding::stochastic, {});
  for (std::size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], exact[i], k * 2 * std::ldexp(1.0, -8)) << i;
}

INSTANTIATE_TEST_SUITE_P(Shapes, DeviceGemm,
                         ::testing::Values(GemmCase{7, 13, 5, Transpose::no, Transpose::no},
                                           GemmCase{16, 33, 9, Transpose::yes, Transpose::no},
                                           GemmCase{4, 64, 31, Transpose::no, Transpose::yes},
                                           GemmCase{12, 10, 12, Transpose::yes, Transpose::yes},
                                           GemmCase{1, 1, 1, Transpose::no, Transpose::no}));

TEST(Device, StochasticGemmIsReproducibleFromTheDeviceSeed) {
  const auto a = random_values(8 * 8, 3), b = random_values(8 * 8, 4);
  std::vector<float> first(64), second(64);
  NeuronDevice one(1, 42), two(1, 42);
  one.core(0).gemm({a.data(), 8, 8}, Transpose::no, {b.data(), 8, 8}, Transpose::no, {first.data(), 8, 8},
                   Rounding::stochastic, {});
  two.core(0).gemm({a.data(), 8, 8}, Transpose::no, {b.data(), 8, 8}, Transpose::no, {second.data(), 8, 8},
                   Rounding::stochastic, {});
  EXPECT_EQ(first, second);
}

TEST(Device, ElementwiseOpsComputeAndRound) {
  NeuronDevice device(1);
  const std::vector<float> a{1.0f, -2.0f, 0.5f, 3.0f + 1.0f / 1024};
  const std::vector<float> b{2.0f, 1.0f, -1.0f, 0.0f};
  std::vector<float> out(4);
  device.core(0).elementwise(ElementwiseOp::add, a, b, out, Rounding::none, {});
  EXPECT_EQ(out, (std::vector<float>{3.0f, -1.0f, -0.5f, 3.0f + 1.0f / 1024}));
  device.core(0).elementwise(ElementwiseOp::multiply, a, b, out, Rounding::none, {});
  EXPECT_EQ(out, (std::vector<float>{2.0f, -2.0f, -0.5f, 0.0f}));
  device.core(0).elementwise(ElementwiseOp::relu, a, {}, out, Rounding::none, {});
  EXPECT_EQ(out, (std::vector<float>{1.0f, 0.0f, 0.5f, 3.0f + 1.0f / 1024}));
  device.core(0).elementwise(ElementwiseOp::relu_grad, a, b, out, Rounding::none, {});
  EXPECT_EQ(out, (std::vector<float>{1.0f, -2.0f, 0.0f, 0.0f}));
  // 3 + 2^-10 is not a bf16 value (ulp at 3 is 2^-6): rounds to 3.
  device.core(0).elementwise(ElementwiseOp::subtract, a, b, out, Rounding::nearest_even, {});
  EXPECT_EQ(out, (std::vector<float>{-1.0f, -3.0f, 1.5f, 3.0f}));
}

TEST(DeviceFaults, CorruptChangesExactlyOneOutputElement) {
  NeuronDevice device(4);
  const auto a = random_values(6 * 5, 8), b = random_values(5 * 7, 9);
  std::vector<float> clean(42), dirty(42);
  device.core(2).gemm({a.data(), 6, 5}, Transpose::no, {b.data(), 5, 7}, Transpose::no, {clean.data(), 6, 7},
                      Rounding::none, {});
  device.set_faults(FaultPlan{{{2, CoreFault::corrupt}}, {}});
  device.core(2).gemm({a.data(), 6, 5}, Transpose::no, {b.data(), 5, 7}, Transpose::no, {dirty.data(), 6, 7},
                      Rounding::none, {});
  int differing = 0;
  for (std::size_t i = 0; i < clean.size(); ++i) differing += clean[i] != dirty[i];
  EXPECT_EQ(differing, 1);
  // Other cores are unaffected.
  device.core(3).gemm({a.data(), 6, 5}, Transpose::no, {b.data(), 5, 7}, Transpose::no, {dirty.data(), 6, 7},
                      Rounding::none, {});
  EXPECT_EQ(dirty, clean);
}

TEST(DeviceFaults, CrashThrowsNamingTheCore) {
  NeuronDevice device(8);
  FaultPlan plan;
  apply_fault_spec(plan, "core:5=crash", 8);
  device.set_faults(plan);
  std::vector<float> v(4, 1.0f), out(4);
  try {
    device.core(5).elementwise(ElementwiseOp::add, v, v, out, Rounding::none, {});
    FAIL() << "a crashed core computed";
  } catch (const CoreCrashed& e) {
    EXPECT_EQ(e.core(), 5);
  }
  device.core(4).elementwise(ElementwiseOp::add, v, v, out, Rounding::none, {});
  EXPECT_EQ(out, std::vector<float>(4, 2.0f));
  EXPECT_EQ(device.faults(), plan);
}

TEST(DeviceFaults, HangBlocksUntilTheStopTokenFires) {
  NeuronDevice device(2);
  device.set_faults(FaultPlan{{{1, CoreFault::hang}}, {}});
  std::stop_source stop;
  std::vector<float> v(4, 1.0f), out(4, 0.0f);
  auto hung = std::async(std::launch::async, [&] {
    device.core(1).elementwise(ElementwiseOp::add, v, v, out, Rounding::none, stop.get_token());
  });
  EXPECT_EQ(hung.wait_for(std::chrono::milliseconds(20)), std::future_status::timeout);
  stop.request_stop();
  EXPECT_THROW(hung.get(), OperationCancelled);
  EXPECT_EQ(out, std::vector<float>(4, 0.0f));
}

// A cancel of a job with a huge simulated model must not wait for a GEMM that takes seconds: the
// stop is seen between rows, before the output is complete.
TEST(Device, AGemmStopsBetweenRowsWhenItsStopTokenFires) {
  NeuronDevice device(1);
  constexpr int kSize = 64;
  std::vector<float> a(kSize * kSize, 1.0f), b(kSize * kSize, 1.0f), out(kSize * kSize, -1.0f);
  std::stop_source stop;
  stop.request_stop();
  EXPECT_THROW(device.core(0).gemm({a.data(), kSize, kSize}, Transpose::no, {b.data(), kSize, kSize}, Transpose::no,
                                   {out.data(), kSize, kSize}, Rounding::none, stop.get_token()),
               OperationCancelled);
  EXPECT_EQ(out, std::vector<float>(kSize * kSize, -1.0f)) << "computed rows after the stop";
  std::stop_source running;
  device.core(0).gemm({a.data(), kSize, kSize}, Transpose::no, {b.data(), kSize, kSize}, Transpose::no,
                      {out.data(), kSize, kSize}, Rounding::none, running.get_token());
  EXPECT_EQ(out, std::vector<float>(kSize * kSize, static_cast<float>(kSize)));
}

TEST(DeviceFaults, ClearingAHangLetsTheOperationFinish) {
  NeuronDevice device(2);
  device.set_faults(FaultPlan{{{0, CoreFault::hang}}, {}});
  std::vector<float> v(3, 1.5f), out(3, 0.0f);
  auto hung = std::async(std::launch::async, [&] {
    device.core(0).elementwise(ElementwiseOp::add, v, v, out, Rounding::none, {});
  });
  device.set_faults({});
  hung.get();
  EXPECT_EQ(out, std::vector<float>(3, 3.0f));
}

}  // namespace
}  // namespace trainyard::neuron
