// The per-row math of the fused residual add + RMSNorm kernel (gpu/fused_add_rmsnorm.cuh) as
// __host__ __device__ functions, so that a host test (tests/kernels/gpu_norm_math_test.cc) runs
// the kernel's own arithmetic and judges it against the exact reference on a machine without a
// device. Plain C++ when not compiled by nvcc; no CUDA header.
//
// fast/norms.cc's FusedAddRmsNormRows, rounding for rounding (the strict recipe: FlashInfer's
// order, the norm of the f32 sum, not of the stored residual):
//   h_i = x_i + r_i in f32 (stored, rounded, to residual_out);
//   a power of two `scale` from max |h_i| where that lies outside [2^-40, 2^40] (row_scale), so
//   that the f32 squares neither overflow nor vanish;
//   S = Σ (h_i·scale)² in f32: each lane of the block sums its strided elements in ascending
//   order (strided_sum_squares), then gpu/common.cuh's fixed tree adds the lanes' sums;
//   inv = 1/sqrt(S/d + ε·scale²) formed in double and rounded once to f32, as fast/ does (one
//   scalar per row: double's sqrt and division are IEEE, 0 ulp);
//   y_i = ((h_i·scale)·inv)·γ_i in f32, rounded once more to the storage.
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
  return static_cast<float>(1.0 / ::sqrt(ms + static_cast<double>(eps) * scale * scale));
}

LMO_HD inline float normalized(float h, float scale, float inv, float g) {
  return f32::mul(f32::mul(f32::mul(h, scale), inv), g);
}

}  // namespace lmo::gpu::norm_math
