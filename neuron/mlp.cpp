#include "neuron/mlp.h"

#include <algorithm>
#include <cmath>

#include "neuron/rng.h"

namespace trainyard::neuron {
namespace {

// Separate random streams of one seed.
constexpr std::uint64_t kTeacherStream = 1;
constexpr std::uint64_t kStudentStream = 2;
constexpr std::uint64_t kDataDomain = 0xDA7A;

std::vector<float> uniform_weights(const ParameterLayout& layout, Rng& rng, double gain) {
  std::vector<float> params(layout.size(), 0.0f);
  for (const LayerSlice& layer : layout.layers()) {
    const float bound = static_cast<float>(std::sqrt(gain / layer.in));
    for (std::size_t i = 0; i < static_cast<std::size_t>(layer.in) * layer.out; ++i) {
      params[layer.weights + i] = rng.uniform(-bound, bound);
    }
  }
  return params;
}

MatrixView weights_of(std::span<float> params, const LayerSlice& layer) {
  return {params.data() + layer.weights, layer.in, layer.out};
}
ConstMatrixView weights_of(std::span<const float> params, const LayerSlice& layer) {
  return {params.data() + layer.weights, layer.in, layer.out};
}

void add_bias(std::span<float> rows, std::span<const float> bias) {
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] += bias[i % bias.size()];
}

}  // namespace

ParameterLayout::ParameterLayout(const std::vector<int>& dims) : dims_(dims) {
  for (std::size_t l = 0; l + 1 < dims.size(); ++l) {
    LayerSlice layer{dims[l], dims[l + 1], size_, 0};
    size_ += static_cast<std::size_t>(layer.in) * layer.out;
    layer.bias = size_;
    size_ += static_cast<std::size_t>(layer.out);
    layers_.push_back(layer);
  }
}

ParameterLayout student_layout(const WorkloadSpec& w) {
  std::vector<int> dims{w.input_dim};
  dims.insert(dims.end(), static_cast<std::size_t>(w.depth), w.width);
  dims.push_back(w.output_dim);
  return ParameterLayout(dims);
}

std::vector<float> init_student(const ParameterLayout& layout, std::uint64_t seed) {
  Rng rng(seed, kStudentStream);
  return uniform_weights(layout, rng, 6.0);
}

Teacher::Teacher(const WorkloadSpec& w)
    : seed_(w.seed), layout_(std::vector<int>{w.input_dim, w.width, w.output_dim}) {
  Rng rng(w.seed, kTeacherStream);
  // Unit-variance pre-activations, so the tanh layer is neither saturated nor linear.
  params_ = uniform_weights(layout_, rng, 3.0);
  for (const LayerSlice& layer : layout_.layers()) {
    for (int o = 0; o < layer.out; ++o) params_[layer.bias + static_cast<std::size_t>(o)] = rng.uniform(-0.5f, 0.5f);
  }
}

void Teacher::make_batch(std::uint64_t first_sample, int count, std::vector<float>& x, std::vector<float>& y) const {
  const LayerSlice& hidden = layout_.layers()[0];
  const LayerSlice& output = layout_.layers()[1];
  x.resize(static_cast<std::size_t>(count) * hidden.in);
  y.assign(static_cast<std::size_t>(count) * output.out, 0.0f);
  std::vector<float> h(static_cast<std::size_t>(hidden.out));
  const float half_width = std::sqrt(3.0f);  // unit variance
  for (int s = 0; s < count; ++s) {
    const std::uint64_t sample = first_sample + static_cast<std::uint64_t>(s);
    float* xs = x.data() + static_cast<std::size_t>(s) * hidden.in;
    for (int j = 0; j < hidden.in; ++j) {
      xs[j] = half_width * (2.0f * unit_float(counter_hash(seed_ ^ kDataDomain, sample, static_cast<std::uint64_t>(j))) - 1.0f);
    }
    for (int o = 0; o < hidden.out; ++o) {
      float z = params_[hidden.bias + static_cast<std::size_t>(o)];
      for (int j = 0; j < hidden.in; ++j) z += xs[j] * params_[hidden.weights + static_cast<std::size_t>(j) * hidden.out + o];
      h[static_cast<std::size_t>(o)] = std::tanh(z);
    }
    float* ys = y.data() + static_cast<std::size_t>(s) * output.out;
    for (int o = 0; o < output.out; ++o) {
      float z = params_[output.bias + static_cast<std::size_t>(o)];
      for (int j = 0; j < output.in; ++j) z += h[static_cast<std::size_t>(j)] * params_[output.weights + static_cast<std::size_t>(j) * output.out + o];
      ys[o] = z;
    }
  }
}

ConstMatrixView StudentPass::forward(NeuronCore& core, std::span<const float> params, ConstMatrixView x,
                                     Rounding operand_rounding, const std::stop_token& stop) {
  const auto& layers = layout_.layers();
  rows_ = x.rows;
  inputs_.resize(layers.size());
  pre_activation_.resize(layers.size());
  inputs_[0].assign(x.data, x.data + static_cast<std::size_t>(x.rows) * x.cols);
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const LayerSlice& layer = layers[l];
    std::vector<float>& z = pre_activation_[l];
    z.resize(static_cast<std::size_t>(rows_) * layer.out);
    core.gemm({inputs_[l].data(), rows_, layer.in}, Transpose::no, weights_of(params, layer), Transpose::no,
              {z.data(), rows_, layer.out}, operand_rounding, stop);
    add_bias(z, params.subspan(layer.bias, static_cast<std::size_t>(layer.out)));
    if (l + 1 < layers.size()) {
      inputs_[l + 1].resize(z.size());
      core.elementwise(ElementwiseOp::relu, z, {}, inputs_[l + 1], Rounding::none, stop);
    }
  }
  return {pre_activation_.back().data(), rows_, layers.back().out};
}

void StudentPass::backward(NeuronCore& core, std::span<const float> params, std::span<const float> dy,
                           std::span<float> grads, Rounding operand_rounding, const std::stop_token& stop) {
  const auto& layers = layout_.layers();
  delta_.assign(dy.begin(), dy.end());
  for (std::size_t l = layers.size(); l-- > 0;) {
    const LayerSlice& layer = layers[l];
    const ConstMatrixView delta{delta_.data(), rows_, layer.out};
    core.gemm({inputs_[l].data(), rows_, layer.in}, Transpose::yes, delta, Transpose::no, weights_of(grads, layer),
              operand_rounding, stop);
    std::span<float> bias_grad = grads.subspan(layer.bias, static_cast<std::size_t>(layer.out));
    std::fill(bias_grad.begin(), bias_grad.end(), 0.0f);
    for (int r = 0; r < rows_; ++r) {
      for (int o = 0; o < layer.out; ++o) bias_grad[static_cast<std::size_t>(o)] += delta_[static_cast<std::size_t>(r) * layer.out + o];
    }
    if (l == 0) break;
    delta_in_.resize(static_cast<std::size_t>(rows_) * layer.in);
    core.gemm(delta, Transpose::no, weights_of(params, layer), Transpose::yes, {delta_in_.data(), rows_, layer.in},
              operand_rounding, stop);
    delta_.resize(delta_in_.size());
    core.elementwise(ElementwiseOp::relu_grad, delta_in_, pre_activation_[l - 1], delta_, Rounding::none, stop);
  }
}

}  // namespace trainyard::neuron
