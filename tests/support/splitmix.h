// SplitMix64 (Steele, Lea and Flood, 2014): a fixed, seeded stream of 64-bit draws for tests that
// need many arbitrary operands. No <random> distributions: the same values on every machine.
#pragma once

#include <cstdint>

namespace lmo::testing {

// The generator's output for state x (its increment included).
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    const uint64_t r = splitmix64(state);
    state += 0x9e3779b97f4a7c15ULL;
    return r;
  }
  // Uniform in [0, 1), 53 bits.
  double unit() { return static_cast<double>(next() >> 11) * 0x1p-53; }
};

}  // namespace lmo::testing
