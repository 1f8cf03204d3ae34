// F10 RoPE (rotary position embedding) and, with the scaling rules of F11, its long-context
// variants. Pairs of dimensions are rotated by the angle p·θ_k, θ_k = base^(−2k/r),
// k = 0 … r/2 − 1, where r is the number of rotated dimensions of one head (E08: per head, from
// k = 0, not per model width).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/numeric.h"

namespace lmo::ref {

enum class RopeLayout {
  kInterleaved,  // pairs (2k, 2k+1): 000 §1.5.4, the code in 001 (GPT-J, Meta's original Llama)
  kHalfSplit,    // pairs (k, k + r/2): "rotate_half", the code in 002 (GPT-NeoX, HF Llama)
};

// θ_k = 1 / base^(2k/r) for k = 0 … r/2 − 1, evaluated in T as written (the exponent 2k/r is
// formed in T, then pow, then the reciprocal), the way framework code computes it.
template <class T>
std::vector<T> rope_inv_freq(int64_t rotary_dims, const T& base) {
  using std::pow;
  if (rotary_dims <= 0 || rotary_dims % 2 != 0) {
    throw std::invalid_argument("rope: rotary dimension must be positive and even, got " +
                                std::to_string(rotary_dims));
  }
  std::vector<T> inv(static_cast<size_t>(rotary_dims / 2));
  for (int64_t k = 0; k < rotary_dims / 2; ++k) {
    const T e = T(2 * k) / T(rotary_dims);
    inv[static_cast<size_t>(k)] = T(1) / T(pow(base, e));
  }
  return inv;
}

// Rotate x (one head, length d) at position p: for each pair (a, b) of the layout and k < r/2,
//   x_a' = x_a cos(p θ_k) − x_b sin(p θ_k),   x_b' = x_a sin(p θ_k) + x_b cos(p θ_k);
// dimensions r … d−1 pass through unchanged (partial rotary). r = inv_freq.size() · 2.
template <class T>
std::vector<T> rope(std::span<const T> x, const T& position, std::span<const T> inv_freq,
                    RopeLayout layout) {
  using std::cos;
  using std::sin;
  const int64_t d = static_cast<int64_t>(x.size());
  const int64_t half = static_cast<int64_t>(inv_freq.size());
  if (2 * half > d) {
    throw std::invalid_argument("rope: " + std::to_string(2 * half) +
                                " rotary dimensions exceed the head dimension " + std::to_string(d));
  }
  std::vector<T> y(x.begin(), x.end());
  for (int64_t k = 0; k < half; ++k) {
    const T angle = position * inv_freq[static_cast<size_t>(k)];
    const T c = cos(angle), s = sin(angle);
    const int64_t a = layout == RopeLayout::kInterleaved ? 2 * k : k;
    const int64_t b = layout == RopeLayout::kInterleaved ? 2 * k + 1 : k + half;
    const T xa = x[static_cast<size_t>(a)], xb = x[static_cast<size_t>(b)];
    y[static_cast<size_t>(a)] = xa * c - xb * s;
    y[static_cast<size_t>(b)] = xa * s + xb * c;
  }
  return y;
}

}  // namespace lmo::ref
