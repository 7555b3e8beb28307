#pragma once
// bfloat16 rounding, done on fp32 storage: a "bf16 value" here is a float whose low 16 bits are
// zero, so tensors keep one element type and the math stays fp32 between roundings, as on
// Trainium (bf16 operands, fp32 accumulation).
// - Round to nearest even: add 0x7FFF plus the lowest kept bit, then truncate; ties go to even.
// - Stochastic: add 16 uniform random bits below the bf16 mantissa, then truncate, so a value
//   rounds up with probability equal to its distance from the lower neighbour: unbiased on
//   average, which is why small updates survive where round-to-nearest drops them.
// NaN stays NaN (quietened), infinities stay infinite.
#include <cstdint>
#include <span>

#include "neuron/rng.h"
#include "proto/job.h"

namespace trainyard::neuron {

enum class Rounding { none, nearest_even, stochastic };

// The rounding a precision applies when it stores a value: fp32 none, bf16 nearest even,
// bf16_sr stochastic.
Rounding storage_rounding(Precision p);

float bf16_round_nearest_even(float x);
float bf16_round_stochastic(float x, std::uint16_t random_bits);

// Rounds every element in place; `rng` supplies the random bits of stochastic rounding.
void round_bf16(std::span<float> values, Rounding rounding, Rng& rng);

}  // namespace trainyard::neuron
