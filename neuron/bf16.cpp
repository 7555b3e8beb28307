#include "neuron/bf16.h"

#include <bit>

namespace trainyard::neuron {
namespace {

constexpr std::uint32_t kAbsMask = 0x7FFFFFFFu;
constexpr std::uint32_t kInfBits = 0x7F800000u;
constexpr std::uint32_t kQuietBit = 0x00400000u;  // survives truncation, so NaN stays NaN
constexpr std::uint32_t kKeptMask = 0xFFFF0000u;

bool is_nan_bits(std::uint32_t bits) { return (bits & kAbsMask) > kInfBits; }

}  // namespace

Rounding storage_rounding(Precision p) {
  switch (p) {
    case Precision::fp32: return Rounding::none;
    case Precision::bf16: return Rounding::nearest_even;
    case Precision::bf16_sr: return Rounding::stochastic;
  }
  return Rounding::none;
}

float bf16_round_nearest_even(float x) {
  std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  if (is_nan_bits(bits)) return std::bit_cast<float>((bits | kQuietBit) & kKeptMask);
  const std::uint32_t lowest_kept = (bits >> 16) & 1u;
  bits += 0x7FFFu + lowest_kept;
  return std::bit_cast<float>(bits & kKeptMask);
}

float bf16_round_stochastic(float x, std::uint16_t random_bits) {
  std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  if (is_nan_bits(bits)) return std::bit_cast<float>((bits | kQuietBit) & kKeptMask);
  bits += random_bits;
  return std::bit_cast<float>(bits & kKeptMask);
}

void round_bf16(std::span<float> values, Rounding rounding, Rng& rng) {
  switch (rounding) {
    case Rounding::none:
      return;
    case Rounding::nearest_even:
      for (float& v : values) v = bf16_round_nearest_even(v);
      return;
    case Rounding::stochastic: {
      // One 64-bit draw feeds four elements.
      std::size_t i = 0;
      while (i < values.size()) {
        std::uint64_t bits = rng.next();
        for (int lane = 0; lane < 4 && i < values.size(); ++lane, ++i, bits >>= 16) {
          values[i] = bf16_round_stochastic(values[i], static_cast<std::uint16_t>(bits));
        }
      }
      return;
    }
  }
}

}  // namespace trainyard::neuron
