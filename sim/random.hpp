// Random numbers for simulations: xoshiro256** seeded through splitmix64.
//
// Why our own: std::mt19937_64 is slower (2.5 KB state) and the std distributions are not specified
// bit-for-bit, so the same seed could give different runs with another standard library. These
// generators are fully specified (Blackman & Vigna, https://prng.di.unimi.it/): the same seed gives
// the same stream everywhere, which keeps runs reproducible. Not for cryptography.
#pragma once

#include <cmath>
#include <cstdint>

namespace gp::sim {

// SplitMix64: a 64-bit counter through a mixing function; used to expand one seed into a state.
class SplitMix64 {
 public:
  explicit constexpr SplitMix64(std::uint64_t seed) : s_(seed) {}
  constexpr std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t s_;
};

// xoshiro256**: period 2^256 - 1, passes BigCrush; ~1 ns per draw.
class Rng {
 public:
  // Any seed, 0 included, gives a valid state.
  explicit constexpr Rng(std::uint64_t seed) {
    SplitMix64 sm(seed);
    for (auto& w : s_) w = sm.next();
  }

  // Uniform 64-bit integer.
  constexpr std::uint64_t next_u64() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1), 53 random bits.
  constexpr double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  // Uniform integer in [0, n). Precondition: n > 0. Lemire's multiply-shift (bias < n / 2^64).
  constexpr std::uint64_t below(std::uint64_t n) {
    __extension__ using U128 = unsigned __int128;  // __extension__: GCC/Clang type, silences -Wpedantic
    return static_cast<std::uint64_t>((static_cast<U128>(next_u64()) * n) >> 64);
  }

  // Uniform in (0, 1], 53 random bits: safe to take the logarithm of.
  constexpr double uniform_pos() { return static_cast<double>((next_u64() >> 11) + 1) * 0x1.0p-53; }

  // Exponential with the given mean (> 0), by inversion (log is ~2x cheaper than log1p here).
  double exponential(double mean) { return -mean * std::log(uniform_pos()); }

  // Normal(mean, stddev) by the Box-Muller transform (one of the pair is discarded for simplicity).
  double normal(double mean, double stddev) {
    const double u1 = uniform_pos();
    const double u2 = uniform();
    return mean + stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

  // Log-normal whose *own* mean and coefficient of variation are given (mean > 0, cv >= 0):
  // a service time with spread and no negative values.
  double lognormal_mean_cv(double mean, double cv) {
    const double s2 = std::log1p(cv * cv);
    return std::exp(normal(std::log(mean) - 0.5 * s2, std::sqrt(s2)));
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4]{};
};

}  // namespace gp::sim
