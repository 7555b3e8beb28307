#pragma once
// The kernel's model and data: a student MLP (ReLU hidden layers, linear output) trained on a
// synthetic regression task whose targets come from a fixed random teacher MLP (tanh hidden layer).
//
// Sample i of a run is a pure function of (seed, i): inputs are hashed from the counters and the
// target is the teacher's output, so the data a step sees depends only on the global sample index,
// never on how many ranks share the batch or where the run resumed.
//
// Parameters live in one flat vector (layer by layer: weights [in x out] row-major, then bias), so
// the gradient is one buffer for one all-reduce and a checkpoint is one array.
#include <cstdint>
#include <span>
#include <stop_token>
#include <vector>

#include "neuron/device.h"
#include "proto/job.h"

namespace trainyard::neuron {

struct LayerSlice {
  int in;
  int out;
  std::size_t weights;  // offset of the [in x out] weights in the flat vector
  std::size_t bias;     // offset of the [out] bias
};

class ParameterLayout {
 public:
  // `dims`: input, hidden..., output.
  explicit ParameterLayout(const std::vector<int>& dims);
  const std::vector<LayerSlice>& layers() const { return layers_; }
  std::size_t size() const { return size_; }
  int input_dim() const { return layers_.front().in; }
  int output_dim() const { return layers_.back().out; }
  const std::vector<int>& dims() const { return dims_; }

 private:
  std::vector<int> dims_;
  std::vector<LayerSlice> layers_;
  std::size_t size_ = 0;
};

ParameterLayout student_layout(const WorkloadSpec& w);
// Kaiming-uniform weights for ReLU (bound sqrt(6 / fan_in)), zero biases, from `seed`.
std::vector<float> init_student(const ParameterLayout& layout, std::uint64_t seed);

class Teacher {
 public:
  explicit Teacher(const WorkloadSpec& w);
  int input_dim() const { return layout_.input_dim(); }
  int output_dim() const { return layout_.output_dim(); }
  // Fills `x` (count x input_dim) and `y` (count x output_dim) with samples first..first+count-1.
  void make_batch(std::uint64_t first_sample, int count, std::vector<float>& x, std::vector<float>& y) const;

 private:
  std::uint64_t seed_;
  ParameterLayout layout_;
  std::vector<float> params_;
};

// Forward and backward of the student on one NeuronCore. Matmul operands are rounded as
// `operand_rounding` says (bf16 casts in the bf16 precisions); everything else is fp32.
class StudentPass {
 public:
  explicit StudentPass(const ParameterLayout& layout) : layout_(layout) {}

  // Output for `x` (rows x input_dim); keeps the activations for `backward`.
  ConstMatrixView forward(NeuronCore& core, std::span<const float> params, ConstMatrixView x,
                          Rounding operand_rounding, const std::stop_token& stop);
  // Overwrites `grads` with dLoss/dparams given `dy` = dLoss/doutput of the last `forward`.
  void backward(NeuronCore& core, std::span<const float> params, std::span<const float> dy, std::span<float> grads,
                Rounding operand_rounding, const std::stop_token& stop);

 private:
  const ParameterLayout& layout_;
  std::vector<std::vector<float>> inputs_;       // per layer: its input (rows x in)
  std::vector<std::vector<float>> pre_activation_;  // per layer: x*W+b (rows x out)
  std::vector<float> delta_;
  std::vector<float> delta_in_;
  int rows_ = 0;
};

}  // namespace trainyard::neuron
