// The a priori error bound of the blocked sums of the certified path (attention_enclosure.cc,
// cross_entropy_enclosure.cc), derived in attention_enclosure.cc's header: a sum of n terms of k
// double words each, summed as S ← 2Sum(S, high word) with the errors and low words gathered in
// one double L, is off by at most chain_coefficient(n, k) times the sum of the terms' magnitudes.
#pragma once

#include <cstdint>

namespace lmo::ref {

inline constexpr double kChainU = 0x1p-53;  // unit roundoff of double

// 1.01·k·n·(n + k − 1)·u²: L's rounding, at most γ_{kn−1} times the sum of the kn magnitudes.
constexpr double chain_coefficient(int64_t n, int64_t k) {
  return 1.01 * static_cast<double>(k * n * (n + k - 1)) * kChainU * kChainU;
}

}  // namespace lmo::ref
