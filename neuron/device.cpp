#include "neuron/device.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace trainyard::neuron {
namespace {

// Copies op(m) into `packed` as a row-major (rows x cols) matrix and rounds it.
void pack(ConstMatrixView m, Transpose t, std::vector<float>& packed, Rounding rounding, Rng& rng) {
  packed.resize(static_cast<std::size_t>(m.rows) * static_cast<std::size_t>(m.cols));
  if (t == Transpose::no) {
    std::copy_n(m.data, packed.size(), packed.begin());
  } else {
    for (int r = 0; r < m.rows; ++r) {
      for (int c = 0; c < m.cols; ++c) {
        packed[static_cast<std::size_t>(c) * m.rows + r] = m.data[static_cast<std::size_t>(r) * m.cols + c];
      }
    }
  }
  round_bf16(packed, rounding, rng);
}

// y += a * x. Eight lanes at a time so the compiler emits SIMD code at -O2 (its cheap cost model
// does not vectorise the plain loop); each element still sums in the same order.
void axpy(int n, float a, const float* __restrict x, float* __restrict y) {
  constexpr int kLanes = 8;
  int j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    float lanes[kLanes];
    for (int l = 0; l < kLanes; ++l) lanes[l] = y[j + l] + a * x[j + l];
    for (int l = 0; l < kLanes; ++l) y[j + l] = lanes[l];
  }
  for (; j < n; ++j) y[j] += a * x[j];
}

float apply(ElementwiseOp op, float a, float b) {
  switch (op) {
    case ElementwiseOp::add: return a + b;
    case ElementwiseOp::subtract: return a - b;
    case ElementwiseOp::multiply: return a * b;
    case ElementwiseOp::relu: return a > 0.0f ? a : 0.0f;
    case ElementwiseOp::relu_grad: return b > 0.0f ? a : 0.0f;
  }
  return a;
}

}  // namespace

NeuronCore::NeuronCore(NeuronDevice& device, int index, std::uint64_t seed)
    : device_(device), index_(index), rng_(seed, static_cast<std::uint64_t>(index)) {}

void NeuronCore::admit(const std::stop_token& stop) {
  switch (device_.fault_of(index_)) {
    case CoreFault::crash: throw CoreCrashed(index_);
    case CoreFault::hang: device_.wait_while_hung(index_, stop); break;
    case CoreFault::none:
    case CoreFault::corrupt: break;
  }
}

double NeuronCore::slowdown() const { return device_.slowdown_of(index_); }

void NeuronCore::finish(std::span<float> out, std::chrono::steady_clock::time_point began, const std::stop_token& stop) {
  if (const double factor = slowdown(); factor > 1) {
    const auto took = std::chrono::steady_clock::now() - began;
    device_.wait_until(began + std::chrono::duration_cast<std::chrono::steady_clock::duration>(took * factor), stop);
  }
  ++operations_;
  if (out.empty() || device_.fault_of(index_) != CoreFault::corrupt) return;
  // A different element each time, so repeated runs do not always hit the same spot.
  float& victim = out[operations_ % out.size()];
  victim = victim + 1.0f + std::fabs(victim);
}

void NeuronCore::gemm(ConstMatrixView a, Transpose ta, ConstMatrixView b, Transpose tb, MatrixView out,
                      Rounding operand_rounding, std::stop_token stop) {
  const auto began = std::chrono::steady_clock::now();
  admit(stop);
  const int m = ta == Transpose::no ? a.rows : a.cols;
  const int k = ta == Transpose::no ? a.cols : a.rows;
  const int n = tb == Transpose::no ? b.cols : b.rows;
  assert((tb == Transpose::no ? b.rows : b.cols) == k);
  assert(out.rows == m && out.cols == n);

  pack(a, ta, packed_a_, operand_rounding, rng_);
  pack(b, tb, packed_b_, operand_rounding, rng_);
  const float* __restrict pa = packed_a_.data();
  const float* __restrict pb = packed_b_.data();
  for (int i = 0; i < m; ++i) {
    // A large operation takes seconds on the host: a stop is honoured between rows, not after it.
    if (stop.stop_requested()) throw OperationCancelled();
    float* __restrict row = out.data + static_cast<std::size_t>(i) * n;
    std::fill_n(row, n, 0.0f);
    for (int kk = 0; kk < k; ++kk) {
      const float aik = pa[static_cast<std::size_t>(i) * k + kk];
      const float* __restrict brow = pb + static_cast<std::size_t>(kk) * n;
      axpy(n, aik, brow, row);
    }
  }
  finish({out.data, static_cast<std::size_t>(m) * static_cast<std::size_t>(n)}, began, stop);
}

void NeuronCore::elementwise(ElementwiseOp op, std::span<const float> a, std::span<const float> b,
                             std::span<float> out, Rounding output_rounding, std::stop_token stop) {
  const auto began = std::chrono::steady_clock::now();
  admit(stop);
  assert(out.size() == a.size());
  assert(op == ElementwiseOp::relu || b.size() == a.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = apply(op, a[i], b.empty() ? 0.0f : b[i]);
  round_bf16(out, output_rounding, rng_);
  finish(out, began, stop);
}

NeuronDevice::NeuronDevice(int cores, std::uint64_t seed) : seed_(seed) {
  cores_.reserve(static_cast<std::size_t>(cores));
  for (int i = 0; i < cores; ++i) cores_.push_back(std::unique_ptr<NeuronCore>(new NeuronCore(*this, i, seed)));
}

NeuronDevice::~NeuronDevice() = default;

void NeuronDevice::set_faults(FaultPlan plan) {
  {
    std::lock_guard lock(mutex_);
    plan_ = std::move(plan);
  }
  changed_.notify_all();
}

FaultPlan NeuronDevice::faults() const {
  std::lock_guard lock(mutex_);
  return plan_;
}

CoreFault NeuronDevice::fault_of(int core) const {
  std::lock_guard lock(mutex_);
  const auto it = plan_.cores.find(core);
  return it == plan_.cores.end() ? CoreFault::none : it->second;
}

double NeuronDevice::slowdown_of(int core) const {
  std::lock_guard lock(mutex_);
  return trainyard::slowdown_of(plan_, core);
}

// A stop ends the wait early; the operation's result is still whole.
void NeuronDevice::wait_until(std::chrono::steady_clock::time_point deadline, const std::stop_token& stop) {
  std::unique_lock lock(mutex_);
  changed_.wait_until(lock, stop, deadline, [] { return false; });
}

void NeuronDevice::wait_while_hung(int core, const std::stop_token& stop) {
  std::unique_lock lock(mutex_);
  const bool released = changed_.wait(lock, stop, [&] {
    const auto it = plan_.cores.find(core);
    return it == plan_.cores.end() || it->second != CoreFault::hang;
  });
  if (!released) throw OperationCancelled();
}

}  // namespace trainyard::neuron
