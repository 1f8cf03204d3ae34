// The per-row math of the norm kernels (gpu/fused_add_rmsnorm.cuh, gpu/norms.cuh: RMSNorm,
// Gemma's 1 + γ, LayerNorm) as __host__ __device__ functions, so that host tests
// (tests/kernels/gpu_norm_math_test.cc) run the kernels' own arithmetic and judge it against the
// exact reference on a machine without a device. Plain C++ when not compiled by nvcc; no CUDA
// header. Each kernel is one block per row: every lane (thread) of the block folds its strided
// elements j = lane, lane + lanes, … in ascending order, then gpu/common.cuh's fixed halving
// tree combines the lanes' values; no atomics.
//
// fused_add_rmsnorm: fast/norms.cc's FusedAddRmsNormRows, rounding for rounding (the strict
// recipe: FlashInfer's order, the norm of the f32 sum, not of the stored residual):
//   h_i = x_i + r_i in f32 (stored, rounded, to residual_out);
//   a power of two `scale` from max |h_i| where that lies outside [2^-40, 2^40] (row_scale), so
//   that the f32 squares neither overflow nor vanish;
//   S = Σ (h_i·scale)² in f32, each square and sum rounded apart (strided_sum_squares);
//   inv = 1/sqrt(S/d + ε·scale²) formed in double and rounded once to f32, as fast/ does (one
//   scalar per row: double's sqrt and division are IEEE, 0 ulp);
//   y_i = ((h_i·scale)·inv)·γ_i in f32, rounded once more to the storage.
//
// rmsnorm and rmsnorm_gemma: fast/norms.cc's RmsNormRows on a target with FMA (strict+fma: the
// sum of squares fused, a·a + s rounded once, as reference/contraction.h simulates it):
//   max |x| and Σ x² (fused) in one pass (strided_amax_sum_squares); where row_scale(max |x|) is
//   not 1, Σ (x·scale)² (fused) again; inv as above; y = ((x·scale)·inv)·w, w = γ or 1 + γ
//   (gemma_weight: one f32 sum).
//
// layernorm: fast/norms.cc's LayerNormRows (corrected two-pass, strict+fma):
//   max |x| and Σ x in one pass (strided_amax_sum); where the scale is not 1, Σ x·scale again;
//   μ = S/d formed in double and rounded once to f32;
//   t_j = x_j·scale − μ in f32; c = Σ t_j and q = Σ t_j² (fused) (strided_deviation_sums);
//   var = max(0, (q − c²/d)/d) and inv = 1/sqrt(var + ε·scale²) in double, inv and c/d each
//   rounded once to f32; y = (((x·scale − μ) − c/d)·inv)·γ + β in f32, each operation rounded
//   apart (fast/ fuses the last product and sum; the result is within the same bound).
// The mean's pair (μ, c/d) keeps x − mean accurate under a large offset (layernorm/offset-mean),
// where a rounded mean alone, amplified by the cancellation, would dominate the error.
#pragma once

#include <cmath>
#include <cstdint>

#include "gpu/f32_ops.h"

namespace lmo::gpu::norm_math {

// fast/norms.cc's row_scale: the power of two that brings amax into [2^-40, 2^40] (1 when it is
// there already, or when it is 0, inf or NaN).
LMO_HD inline double row_scale(float amax) {
  const bool finite_positive = amax > 0.0f && amax <= 3.40282347e38f;
  if (finite_positive && !(amax > 0x1p-40f && amax < 0x1p40f)) {
    int e = 0;
    (void)::frexp(static_cast<double>(amax), &e);  // amax = m·2^e, m in [0.5, 1)
    return ::ldexp(1.0, -e);
  }
  return 1.0;
}

LMO_HD inline float residual_sum(float x, float r) { return f32::add(x, r); }

// |h| for the row's maximum (the maximum of magnitudes is exact in any order).
LMO_HD inline float magnitude(float h) { return h < 0.0f ? -h : h; }

// Σ (h_j·scale)² over j = lane, lane + lanes, … < d, ascending: one lane's share of the row.
template <class H>
LMO_HD float strided_sum_squares(const H& h, int64_t d, int64_t lane, int64_t lanes, float scale) {
  float s = 0.0f;
  for (int64_t j = lane; j < d; j += lanes) {
    const float v = f32::mul(h(j), scale);
    s = f32::add(s, f32::mul(v, v));
  }
  return s;
}

// 1/sqrt(S/d + ε·scale²), S the scaled sum of squares.
LMO_HD inline float inv_rms(float sum_squares, int64_t d, float eps, double scale) {
  const double ms = static_cast<double>(sum_squares) / static_cast<double>(d);
  return static_cast<float>(1.0 / ::sqrt(ms + f32::dmul(f32::dmul(eps, scale), scale)));
}

LMO_HD inline float normalized(float h, float scale, float inv, float g) {
  return f32::mul(f32::mul(f32::mul(h, scale), inv), g);
}

// max(m, |v|), dropping a NaN v (the row's sum, not its maximum, carries a NaN: row_scale is then
// 1 and the NaN reaches every output through inv).
LMO_HD inline float max_magnitude(float m, float v) {
  const float a = magnitude(v);
  return a > m ? a : m;
}

// One lane's max |v_j| and Σ v_j² (each square fused into the sum) over j = lane, lane + lanes,
// … < d, ascending.
template <class V>
LMO_HD void strided_amax_sum_squares(const V& v, int64_t d, int64_t lane, int64_t lanes,
                                     float& amax, float& sum_squares) {
  float m = 0.0f, s = 0.0f;
  for (int64_t j = lane; j < d; j += lanes) {
    const float x = v(j);
    m = max_magnitude(m, x);
    s = f32::fma(x, x, s);
  }
  amax = m;
  sum_squares = s;
}

// One lane's Σ (v_j·scale)², each square fused into the sum.
template <class V>
LMO_HD float strided_sum_squares_fused(const V& v, int64_t d, int64_t lane, int64_t lanes,
                                       float scale) {
  float s = 0.0f;
  for (int64_t j = lane; j < d; j += lanes) {
    const float x = f32::mul(v(j), scale);
    s = f32::fma(x, x, s);
  }
  return s;
}

// Gemma's weight 1 + γ in f32.
LMO_HD inline float gemma_weight(float g) { return f32::add(1.0f, g); }

// One lane's max |v_j| and Σ v_j·scale (scale 1: Σ v_j).
template <class V>
LMO_HD void strided_amax_sum(const V& v, int64_t d, int64_t lane, int64_t lanes, float scale,
                             float& amax, float& sum) {
  float m = 0.0f, s = 0.0f;
  for (int64_t j = lane; j < d; j += lanes) {
    const float x = v(j);
    m = max_magnitude(m, x);
    s = f32::add(s, f32::mul(x, scale));
  }
  amax = m;
  sum = s;
}

// μ = S/d, formed in double and rounded once.
LMO_HD inline float layernorm_mean(float sum, int64_t d) {
  return static_cast<float>(static_cast<double>(sum) / static_cast<double>(d));
}

// One lane's c = Σ t_j and q = Σ t_j² (fused), t_j = v_j·scale − μ.
template <class V>
LMO_HD void strided_deviation_sums(const V& v, int64_t d, int64_t lane, int64_t lanes,
                                   float scale, float mu, float& c, float& q) {
  float sc = 0.0f, sq = 0.0f;
  for (int64_t j = lane; j < d; j += lanes) {
    const float t = f32::sub(f32::mul(v(j), scale), mu);
    sc = f32::add(sc, t);
    sq = f32::fma(t, t, sq);
  }
  c = sc;
  q = sq;
}

// LayerNorm's row statistics from the deviation sums: inv = 1/sqrt(var + ε·scale²) and c/d,
// each formed in double and rounded once to f32.
struct LayerNormStats {
  float inv;
  float c_mean;  // c/d
};
LMO_HD inline LayerNormStats layernorm_stats(float c, float q, int64_t d, float eps, double scale) {
  const double n = static_cast<double>(d), cd = static_cast<double>(c);
  double var = (static_cast<double>(q) - cd * cd / n) / n;
  if (var < 0.0) var = 0.0;  // a NaN var stays NaN
  return {static_cast<float>(1.0 / ::sqrt(var + f32::dmul(f32::dmul(eps, scale), scale))),
          static_cast<float>(cd / n)};
}

// y = (((x·scale − μ) − c/d)·inv)·γ + β.
LMO_HD inline float layernormed(float x, float scale, float mu, const LayerNormStats& st, float g,
                                float b) {
  const float t = f32::sub(f32::sub(f32::mul(x, scale), mu), st.c_mean);
  return f32::add(f32::mul(f32::mul(t, st.inv), g), b);
}

}  // namespace lmo::gpu::norm_math
