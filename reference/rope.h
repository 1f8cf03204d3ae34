// F10 RoPE (rotary position embedding) and, with the scaling rules of F11 (rope_scaling.h:
// other inverse frequencies for the same functions), its long-context variants. Pairs of
// dimensions are rotated by the angle p·θ_k, θ_k = base^(−2k/r), k = 0 … r/2 − 1, where r is the
// number of rotated dimensions of one head (E08: per head, from k = 0, not per model width).
// Two evaluation routes, as in real kernels: angles from positions (rope), or a cos/sin table
// indexed by position (rope_table, rope_from_table, rope_sequence); and the gradient
// (rope_backward, rope_from_table_backward).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/linalg.h"
#include "reference/numeric.h"
#include "reference/parallel.h"

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

// The integer position p as a T, rounded once (through mp, never through double: an int64 above
// 2^53 would otherwise be rounded twice). A narrow T cannot hold large positions: bfloat16 keeps
// 8 significant bits, so 1000001 becomes 999424; float holds integers exactly only up to 2^24.
// Kernels that carry positions in such a type compute the wrong angles at long context; the
// reference reproduces that when asked to run in T, and the caller sees it here.
template <class T>
T rope_position(int64_t p) {
  return from_mp<T>(mp(p));
}

// F10 from a precomputed row of cos(p θ_k) and sin(p θ_k), k < r/2 (one row of rope_table):
// for each pair (a, b) of the layout,
//   x_a' = x_a c_k − x_b s_k,   x_b' = x_a s_k + x_b c_k;
// dimensions r … d−1 pass through unchanged (partial rotary). Every product and sum in T.
template <class T>
std::vector<T> rope_from_table(std::span<const T> x, std::span<const T> cos_row,
                               std::span<const T> sin_row, RopeLayout layout) {
  const int64_t d = static_cast<int64_t>(x.size());
  const int64_t half = static_cast<int64_t>(cos_row.size());
  if (sin_row.size() != cos_row.size()) {
    throw std::invalid_argument("rope: cos row of " + std::to_string(cos_row.size()) +
                                " but sin row of " + std::to_string(sin_row.size()));
  }
  if (2 * half > d) {
    throw std::invalid_argument("rope: " + std::to_string(2 * half) +
                                " rotary dimensions exceed the head dimension " +
                                std::to_string(d));
  }
  std::vector<T> y(x.begin(), x.end());
  for (int64_t k = 0; k < half; ++k) {
    const T& c = cos_row[static_cast<size_t>(k)];
    const T& s = sin_row[static_cast<size_t>(k)];
    const int64_t a = layout == RopeLayout::kInterleaved ? 2 * k : k;
    const int64_t b = layout == RopeLayout::kInterleaved ? 2 * k + 1 : k + half;
    const T xa = x[static_cast<size_t>(a)], xb = x[static_cast<size_t>(b)];
    y[static_cast<size_t>(a)] = xa * c - xb * s;
    y[static_cast<size_t>(b)] = xa * s + xb * c;
  }
  return y;
}

// Rotate x (one head, length d) at position p: for each pair (a, b) of the layout and k < r/2,
//   x_a' = x_a cos(p θ_k) − x_b sin(p θ_k),   x_b' = x_a sin(p θ_k) + x_b cos(p θ_k);
// dimensions r … d−1 pass through unchanged (partial rotary). r = inv_freq.size() · 2.
// The angle p·θ_k is formed in T, then cos and sin of it in T: in mp the argument reduction of
// a large angle (p = 10^6) is exact to 50 digits; in a narrow T it is not, as in a kernel.
template <class T>
std::vector<T> rope(std::span<const T> x, const T& position, std::span<const T> inv_freq,
                    RopeLayout layout) {
  std::vector<T> angles(inv_freq.size()), c(inv_freq.size()), s(inv_freq.size());
  for (size_t k = 0; k < inv_freq.size(); ++k) angles[k] = position * inv_freq[k];
  sin_cos_each(std::span<const T>(angles), std::span<T>(s), std::span<T>(c));
  return rope_from_table(x, std::span<const T>(c), std::span<const T>(s), layout);
}

// Gradient of rope_from_table: the rotation is orthogonal, so dx = R(p)ᵀ dy = R(−p) dy:
//   dx_a = dy_a c_k + dy_b s_k,   dx_b = −dy_a s_k + dy_b c_k;   pass-through dims copy dy.
template <class T>
std::vector<T> rope_from_table_backward(std::span<const T> dy, std::span<const T> cos_row,
                                        std::span<const T> sin_row, RopeLayout layout) {
  std::vector<T> neg_sin(sin_row.size());
  // −s is exact, and x_a c − x_b (−s) = x_a c + x_b s exactly: the same values as writing the
  // transposed rotation out.
  for (size_t k = 0; k < sin_row.size(); ++k) neg_sin[k] = -sin_row[k];
  return rope_from_table(dy, cos_row, std::span<const T>(neg_sin), layout);
}

// Gradient of rope with respect to x: rotation of dy by −p θ_k (see rope_from_table_backward).
template <class T>
std::vector<T> rope_backward(std::span<const T> dy, const T& position, std::span<const T> inv_freq,
                             RopeLayout layout) {
  return rope(dy, T(-position), inv_freq, layout);
}

// cos and sin of p θ_k for a list of positions: row t holds position positions[t], column k the
// frequency inv_freq[k] (positions × r/2 each). This is the table kernels precompute once and
// index by position. attention_factor multiplies both (YaRN's mscale applied to cos/sin, as HF
// transformers does for rope_type "yarn"); the default 1 leaves them exactly as computed.
template <class T>
struct RopeTable {
  Mat<T> cos;
  Mat<T> sin;
};

template <class T>
RopeTable<T> rope_table(std::span<const T> positions, std::span<const T> inv_freq,
                        const T& attention_factor = T(1)) {
  const int64_t n = static_cast<int64_t>(positions.size());
  const int64_t half = static_cast<int64_t>(inv_freq.size());
  RopeTable<T> t{Mat<T>(n, half), Mat<T>(n, half)};
  parallel_for(n, [&](int64_t i) {
    std::vector<T> angles(static_cast<size_t>(half)), s(angles.size()), c(angles.size());
    for (int64_t k = 0; k < half; ++k) {
      angles[static_cast<size_t>(k)] =
          positions[static_cast<size_t>(i)] * inv_freq[static_cast<size_t>(k)];
    }
    sin_cos_each(std::span<const T>(angles), std::span<T>(s), std::span<T>(c));
    for (int64_t k = 0; k < half; ++k) {
      t.cos(i, k) = c[static_cast<size_t>(k)] * attention_factor;
      t.sin(i, k) = s[static_cast<size_t>(k)] * attention_factor;
    }
  });
  return t;
}

// F10 over a sequence: x is tokens × (heads · head_dim), each row the heads of one token laid
// side by side (the [tokens, heads, head_dim] layout flattened); token t is rotated with row t
// of the table in every head.
template <class T>
Mat<T> rope_sequence(const Mat<T>& x, int64_t heads, const RopeTable<T>& table, RopeLayout layout) {
  if (heads <= 0 || x.cols % heads != 0) {
    throw std::invalid_argument("rope_sequence: heads " + std::to_string(heads) +
                                " must be positive and divide the row width " +
                                std::to_string(x.cols));
  }
  if (table.cos.rows != x.rows || table.sin.rows != x.rows) {
    throw std::invalid_argument("rope_sequence: table has " + std::to_string(table.cos.rows) +
                                " rows for " + std::to_string(x.rows) + " tokens");
  }
  const int64_t head_dim = x.cols / heads;
  Mat<T> y(x.rows, x.cols);
  parallel_for(x.rows, [&](int64_t t) {
    for (int64_t h = 0; h < heads; ++h) {
      const std::vector<T> r = rope_from_table(
          x.row(t).subspan(static_cast<size_t>(h * head_dim), static_cast<size_t>(head_dim)),
          table.cos.row(t), table.sin.row(t), layout);
      for (int64_t c = 0; c < head_dim; ++c) y(t, h * head_dim + c) = r[static_cast<size_t>(c)];
    }
  });
  return y;
}

// F10 over a sequence at the given positions (one per token): rope_sequence with
// rope_table(positions, inv_freq). Equal, value for value, to rope() on each head.
template <class T>
Mat<T> rope_sequence(const Mat<T>& x, int64_t heads, std::span<const T> positions,
                     std::span<const T> inv_freq, RopeLayout layout) {
  if (static_cast<int64_t>(positions.size()) != x.rows) {
    throw std::invalid_argument("rope_sequence: " + std::to_string(positions.size()) +
                                " positions for " + std::to_string(x.rows) + " tokens");
  }
  return rope_sequence(x, heads, rope_table(positions, inv_freq), layout);
}

}  // namespace lmo::ref
