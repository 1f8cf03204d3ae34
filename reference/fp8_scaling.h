// fp8 scaling ([workloads] item 4): quantization of a matrix to E4M3 (or E5M2) with one scale
// per tile, dequantization, and the block-scaled linear layer of DeepSeek-V3 (§3.3: activations
// scaled per 1×128 group of a token, weights per 128×128 block, f32 accumulation).
//
// The formula, for a tile G of x (rows × cols) with fp8 maximum M (448 for E4M3, 57344 for E5M2):
//   amax_G = max(max_{i∈G} |x_i|, floor)      floor: a case parameter (0 allowed)
//   s_G    = f32(amax_G / M)                  the scale as stored: amax/M rounded once to f32
//            or 2^⌈log2(amax_G / M)⌉          UE8M0 scales (a power of two at or above)
//   q_i    = fp8(clamp(x_i / s_G, −M, M))     x_i / s_G exact, rounded once, saturated
// The scale is defined as the stored f32 value because the dequantization q_i·s_G reads that
// very value: the quantized elements must be correct relative to it, not to the real amax/M.
// fp8_scaled gives clamp(x_i / s_G, ±M) before that last rounding: the oracle's op stores it as
// its fp8 output, so that the rounding is the store's, judged as every output's is (a kernel
// forming x/s in f32 rounds twice, and 448·x/amax often lies on an fp8 midpoint when x and amax
// are bf16 values: the margin of the policy knows the unrounded value, fp8_quantize's does not).
// A NaN in a tile makes its amax, scale and every q of the tile NaN (torch's amax propagates).
// x_i / s_G never exceeds M·(1 + 2^-24), which rounds to M: the clamp only matters for a
// kernel's own rounding, and is kept so that the formula saturates as the kernels do.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/formats.h"
#include "reference/linalg.h"
#include "reference/numeric.h"
#include "reference/round_to_format.h"

namespace lmo::ref {

// Which elements of a rows × cols matrix share one scale: tiles of tile_rows × tile_cols,
// row-major over the tile grid; tiles at the right and bottom edges may be partial.
//   per tensor: rows × cols; per token: 1 × cols; per token group: 1 × g; per block: b × b.
struct ScaleTiling {
  int64_t rows = 0, cols = 0, tile_rows = 1, tile_cols = 1;

  int64_t tiles_down() const { return (rows + tile_rows - 1) / tile_rows; }
  int64_t tiles_across() const { return (cols + tile_cols - 1) / tile_cols; }
  int64_t scales() const { return tiles_down() * tiles_across(); }
  int64_t scale_of(int64_t r, int64_t c) const {
    return (r / tile_rows) * tiles_across() + c / tile_cols;
  }
  void check(const char* fn, size_t values) const {
    if (rows < 1 || cols < 1 || tile_rows < 1 || tile_cols < 1 ||
        static_cast<int64_t>(values) != rows * cols) {
      throw std::invalid_argument(std::string(fn) + ": " + std::to_string(values) +
                                  " values for a " + std::to_string(rows) + "x" +
                                  std::to_string(cols) + " matrix in tiles of " +
                                  std::to_string(tile_rows) + "x" + std::to_string(tile_cols));
    }
  }
};

enum class ScaleForm : uint8_t {
  kF32,   // amax/M rounded to f32
  kPow2,  // UE8M0: the least power of two at or above amax/M (DeepGEMM's scale_ue8m0)
};

struct Fp8Scaling {
  Format fp8 = Format::e4m3;
  ScaleForm form = ScaleForm::kF32;
  double amax_floor = 0;  // as a double; SGLang's per_token_group_quant_fp8 uses 1e-10
};

// The largest finite value of an fp8 format: 448 (E4M3FN), 57344 (E5M2).
inline double fp8_max(Format f) { return decode<double>(f, max_finite_bits(f)); }

// The least power of two at or above r > 0. The double nearest r gives the exponent; the
// comparisons settle it in r's own type (mp, balls: decided or counted).
template <class T>
T pow2_at_or_above(const T& r) {
  int e = 0;
  (void)std::frexp(to_double(r), &e);  // 2^(e−1) ≤ double(r) < 2^e
  while (e > -1074 && r <= T(std::ldexp(1.0, e - 1))) --e;
  while (r > T(std::ldexp(1.0, e))) ++e;
  return T(std::ldexp(1.0, e));
}

template <class T>
struct Fp8Tensor {
  std::vector<T> q;       // rows × cols fp8 values (held in T)
  std::vector<T> scales;  // tiles_down × tiles_across
};

// The scale of every tile of x.
template <class T>
std::vector<T> fp8_scales(std::span<const T> x, const ScaleTiling& t, const Fp8Scaling& how) {
  using std::abs;
  using std::isnan;
  t.check("fp8_scales", x.size());
  std::vector<T> amax(static_cast<size_t>(t.scales()), T(0));
  std::vector<bool> nan(amax.size(), false);
  for (int64_t r = 0; r < t.rows; ++r) {
    for (int64_t c = 0; c < t.cols; ++c) {
      const T& v = x[static_cast<size_t>(r * t.cols + c)];
      const auto g = static_cast<size_t>(t.scale_of(r, c));
      if (isnan(v)) nan[g] = true;
      const T a = abs(v);
      if (a > amax[g]) amax[g] = a;
    }
  }
  const T floor_value = T(how.amax_floor);
  const T m = T(fp8_max(how.fp8));
  std::vector<T> s(amax.size());
  for (size_t g = 0; g < amax.size(); ++g) {
    if (nan[g]) {
      s[g] = T(std::nan(""));
      continue;
    }
    const T a = amax[g] < floor_value ? floor_value : amax[g];
    const T ratio = a / m;
    s[g] =
        how.form == ScaleForm::kF32 ? round_to_format(Format::f32, ratio) : pow2_at_or_above(ratio);
  }
  return s;
}

// clamp(x_i / s, −M, M) with the given scales (one per tile), not yet rounded to fp8.
template <class T>
std::vector<T> fp8_scaled(std::span<const T> x, std::span<const T> scales, const ScaleTiling& t,
                          Format fp8) {
  t.check("fp8_quantize", x.size());
  if (static_cast<int64_t>(scales.size()) != t.scales()) {
    throw std::invalid_argument("fp8_quantize: " + std::to_string(scales.size()) + " scales for " +
                                std::to_string(t.scales()) + " tiles");
  }
  const T m = T(fp8_max(fp8));
  std::vector<T> q(x.size());
  for (int64_t r = 0; r < t.rows; ++r) {
    for (int64_t c = 0; c < t.cols; ++c) {
      const auto i = static_cast<size_t>(r * t.cols + c);
      T v = x[i] / scales[static_cast<size_t>(t.scale_of(r, c))];
      if (v > m) v = m;
      if (v < -m) v = -m;
      q[i] = v;
    }
  }
  return q;
}

// The scales and the fp8 values: fp8_scaled rounded once to nearest-even in fp8 (saturating).
// `round_q` false: q as fp8_scaled leaves it (the oracle's op, whose store rounds).
template <class T>
Fp8Tensor<T> fp8_quantize(std::span<const T> x, const ScaleTiling& t, const Fp8Scaling& how,
                          bool round_q = true) {
  Fp8Tensor<T> out;
  out.scales = fp8_scales(x, t, how);
  out.q = fp8_scaled<T>(x, out.scales, t, how.fp8);
  if (round_q) {
    for (T& v : out.q) v = round_to_format(how.fp8, v, Overflow::kSaturate);
  }
  return out;
}

// x_i = q_i · s_tile(i), formed in T.
template <class T>
std::vector<T> fp8_dequantize(std::span<const T> q, std::span<const T> scales,
                              const ScaleTiling& t) {
  t.check("fp8_dequantize", q.size());
  if (static_cast<int64_t>(scales.size()) != t.scales()) {
    throw std::invalid_argument("fp8_dequantize: " + std::to_string(scales.size()) +
                                " scales for " + std::to_string(t.scales()) + " tiles");
  }
  std::vector<T> x(q.size());
  for (int64_t r = 0; r < t.rows; ++r) {
    for (int64_t c = 0; c < t.cols; ++c) {
      const auto i = static_cast<size_t>(r * t.cols + c);
      x[i] = q[i] * scales[static_cast<size_t>(t.scale_of(r, c))];
    }
  }
  return x;
}

// The block-scaled linear layer: y = dequant(A) · dequant(W)ᵀ, A (m × k) and W (n × k) each with
// its tiling. Exact in mp: the product of the dequantized operands, which any order of
// accumulation (DeepGEMM's per-block partial sums scaled as they are promoted to f32) computes
// up to its own roundings.
template <class T, class Acc = T>
Mat<T> fp8_linear(std::span<const T> a, std::span<const T> a_scales, const ScaleTiling& at,
                  std::span<const T> w, std::span<const T> w_scales, const ScaleTiling& wt) {
  if (at.cols != wt.cols) {
    throw std::invalid_argument("fp8_linear: A is " + std::to_string(at.rows) + "x" +
                                std::to_string(at.cols) + " but W " + std::to_string(wt.rows) +
                                "x" + std::to_string(wt.cols) + " (both k wide)");
  }
  const Mat<T> ad(at.rows, at.cols, fp8_dequantize<T>(a, a_scales, at));
  const Mat<T> wd(wt.rows, wt.cols, fp8_dequantize<T>(w, w_scales, wt));
  return matmul<T, Acc>(ad, transpose(wd));
}

}  // namespace lmo::ref
