#pragma once
// Seeded randomness for the simulated device and the kernel. Two kinds, for two needs:
// - `Rng` (xoshiro256**) is a stream whose whole state is four words, so a checkpoint can hold it
//   and a resumed run continues the exact same sequence.
// - `counter_hash` is stateless: a value is a pure function of (seed, counters). Synthetic data uses
//   it, so sample i is the same no matter how many ranks share the batch or where a run resumed.
#include <array>
#include <bit>
#include <cstdint>

namespace trainyard::neuron {

constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

constexpr std::uint64_t counter_hash(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0) {
  return splitmix64(splitmix64(splitmix64(seed) ^ a) ^ b);
}

// Uniform in [0, 1) from the top 24 bits, so every value is exactly representable in float.
constexpr float unit_float(std::uint64_t bits) {
  return static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);
}

using RngState = std::array<std::uint64_t, 4>;

class Rng {
 public:
  // `stream` separates independent uses of one seed (teacher, init, rounding, ...).
  explicit Rng(std::uint64_t seed, std::uint64_t stream = 0) {
    std::uint64_t x = splitmix64(seed) ^ splitmix64(stream + 0x5851F42D4C957F2DULL);
    for (auto& word : state_) word = x = splitmix64(x);
  }
  static Rng from_state(const RngState& state) { return Rng(state); }
  const RngState& state() const { return state_; }

  std::uint64_t next() {
    const std::uint64_t result = std::rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = std::rotl(state_[3], 45);
    return result;
  }
  float uniform() { return unit_float(next()); }
  float uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }

 private:
  explicit Rng(const RngState& state) : state_(state) {}
  RngState state_{};
};

}  // namespace trainyard::neuron
