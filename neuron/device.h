#pragma once
// The simulated Trainium device (docs/DESIGN.md "The simulated node"): N NeuronCores, each
// running real tensor operations (GEMM, elementwise) on fp32 storage with optional bf16 rounding.
// Only the hardware is simulated; the arithmetic is done for real on the host CPU.
//
// Faults come from a `FaultPlan` held by the device and may change at any time (agent flag, admin
// API). Each operation consults its core's fault first:
// - crash: throws `CoreCrashed` (the core is gone until the fault is cleared);
// - hang: blocks until the fault is cleared or the caller's stop token fires (then throws
//   `OperationCancelled`), so a stuck run can be diagnosed and killed like a real one;
// - corrupt: computes, then perturbs one output element (x -> x + 1 + |x|, never a fixed point),
//   the silent data corruption a GEMM checksum must catch;
// - slow (a factor k, per core or for the whole node): computes correctly, then waits until the
//   operation has taken k times as long as it did, a straggler.
//
// Threading contract: `NeuronDevice::set_faults`/`faults` may be called from any thread. A core is
// used by one thread at a time (the attempt's training thread or a health test).
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

#include "neuron/bf16.h"
#include "neuron/rng.h"
#include "proto/faults.h"

namespace trainyard::neuron {

// Row-major views; `data` holds rows * cols elements.
struct MatrixView {
  float* data;
  int rows;
  int cols;
};
struct ConstMatrixView {
  const float* data;
  int rows;
  int cols;
  ConstMatrixView(const float* d, int r, int c) : data(d), rows(r), cols(c) {}
  ConstMatrixView(MatrixView m) : data(m.data), rows(m.rows), cols(m.cols) {}  // implicit on purpose
};

enum class Transpose { no, yes };

// relu reads only `a`; relu_grad passes the upstream gradient `a` where the pre-activation `b` > 0.
enum class ElementwiseOp { add, subtract, multiply, relu, relu_grad };

class CoreCrashed : public std::runtime_error {
 public:
  explicit CoreCrashed(int core)
      : std::runtime_error("NeuronCore " + std::to_string(core) + " crashed"), core_(core) {}
  int core() const { return core_; }

 private:
  int core_;
};

class OperationCancelled : public std::runtime_error {
 public:
  OperationCancelled() : std::runtime_error("operation cancelled") {}
};

class NeuronDevice;

class NeuronCore {
 public:
  NeuronCore(const NeuronCore&) = delete;
  NeuronCore& operator=(const NeuronCore&) = delete;

  int index() const { return index_; }
  // How many times longer than a healthy core this one takes (1: not slow); the trainer paces its
  // simulated step time by it too.
  double slowdown() const;

  // out = op(a) * op(b). Operands are first rounded as `operand_rounding` says (casting them to
  // bf16; stochastic rounding draws from this core's seeded generator), products accumulate in
  // fp32 in ascending k order, and `out` is fp32.
  void gemm(ConstMatrixView a, Transpose ta, ConstMatrixView b, Transpose tb, MatrixView out,
            Rounding operand_rounding, std::stop_token stop);

  // out[i] = op(a[i], b[i]), then rounded as `output_rounding` says. `out` may alias `a` or `b`.
  void elementwise(ElementwiseOp op, std::span<const float> a, std::span<const float> b,
                   std::span<float> out, Rounding output_rounding, std::stop_token stop);

 private:
  friend class NeuronDevice;
  NeuronCore(NeuronDevice& device, int index, std::uint64_t seed);

  void admit(const std::stop_token& stop);  // applies crash and hang faults
  // Applies the slow fault to an operation begun at `began`, then the corrupt fault.
  void finish(std::span<float> out, std::chrono::steady_clock::time_point began, const std::stop_token& stop);

  NeuronDevice& device_;
  int index_;
  Rng rng_;
  std::uint64_t operations_ = 0;
  std::vector<float> packed_a_;  // op(a) as rows x k, rounded
  std::vector<float> packed_b_;  // op(b) as k x cols, rounded
};

class NeuronDevice {
 public:
  static constexpr int kDefaultCores = 32;  // trn1.32xlarge: 16 devices x 2 NeuronCores

  explicit NeuronDevice(int cores = kDefaultCores, std::uint64_t seed = 0);
  ~NeuronDevice();

  int core_count() const { return static_cast<int>(cores_.size()); }
  std::uint64_t seed() const { return seed_; }
  NeuronCore& core(int index) { return *cores_.at(static_cast<std::size_t>(index)); }

  // Replaces the plan; a hung core whose hang is cleared resumes.
  void set_faults(FaultPlan plan);
  FaultPlan faults() const;

 private:
  friend class NeuronCore;
  CoreFault fault_of(int core) const;
  double slowdown_of(int core) const;
  void wait_while_hung(int core, const std::stop_token& stop);
  void wait_until(std::chrono::steady_clock::time_point deadline, const std::stop_token& stop);

  mutable std::mutex mutex_;
  std::condition_variable_any changed_;
  FaultPlan plan_;
  std::uint64_t seed_;
  std::vector<std::unique_ptr<NeuronCore>> cores_;
};

}  // namespace trainyard::neuron
