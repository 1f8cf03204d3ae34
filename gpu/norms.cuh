// F01 LayerNorm and F02 RMSNorm (+ Gemma's 1 + γ) kernels in f32: one block per row (grid-stride
// over rows), the per-row math of gpu/norm_math.h (fast/norms.cc's rounding points: a power-of-two
// row scale from max |x| where the squares would overflow or vanish, the sums of squares with
// each square fused into the sum, the row's reciprocal root formed in double and rounded once),
// each thread folding a fixed strided subset of the row, then the fixed tree of common.cuh: no
// atomics, the same bits on every run and for every grid. The gpu backend declares strict+fma for
// them (oracle/backends/gpu_recipes.cc); gpu_norm_math_test judges the same functions on the host.
#pragma once

#include "gpu/common.cuh"
#include "gpu/norm_math.h"

namespace lmo::gpu {

template <class T>
__global__ void __launch_bounds__(kThreads)
    rmsnorm_kernel(const T* __restrict__ x, const T* __restrict__ gamma, T* __restrict__ y,
                   int64_t rows, int64_t d, float eps, bool one_plus_gamma) {
  __shared__ float buf[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * d;
    T* yr = y + r * d;
    const auto v = [xr](int64_t j) { return widen_f32(xr[j]); };
    float amax, ss;
    norm_math::strided_amax_sum_squares(v, d, threadIdx.x, kThreads, amax, ss);
    amax = block_reduce(amax, buf, MaxOp{});
    const double scale = norm_math::row_scale(amax);
    const auto fs = static_cast<float>(scale);
    // Where the scale is 1 the unscaled sum is the scaled one bit for bit (x·1 is exact).
    if (scale != 1.0) ss = norm_math::strided_sum_squares_fused(v, d, threadIdx.x, kThreads, fs);
    ss = block_reduce(ss, buf, SumOp{});
    const float inv = norm_math::inv_rms(ss, d, eps, scale);
    for (int64_t j = threadIdx.x; j < d; j += kThreads) {
      float w = widen_f32(gamma[j]);
      if (one_plus_gamma) w = norm_math::gemma_weight(w);
      yr[j] = store_f32<T>(norm_math::normalized(v(j), fs, inv, w));
    }
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    layernorm_kernel(const T* __restrict__ x, const T* __restrict__ gamma,
                     const T* __restrict__ beta, T* __restrict__ y, int64_t rows, int64_t d,
                     float eps) {
  __shared__ float buf[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * d;
    T* yr = y + r * d;
    const auto v = [xr](int64_t j) { return widen_f32(xr[j]); };
    float amax, s;
    norm_math::strided_amax_sum(v, d, threadIdx.x, kThreads, 1.0f, amax, s);
    amax = block_reduce(amax, buf, MaxOp{});
    const double scale = norm_math::row_scale(amax);
    const auto fs = static_cast<float>(scale);
    if (scale != 1.0) norm_math::strided_amax_sum(v, d, threadIdx.x, kThreads, fs, amax, s);
    s = block_reduce(s, buf, SumOp{});
    const float mu = norm_math::layernorm_mean(s, d);
    float c, q;
    norm_math::strided_deviation_sums(v, d, threadIdx.x, kThreads, fs, mu, c, q);
    c = block_reduce(c, buf, SumOp{});
    q = block_reduce(q, buf, SumOp{});
    const norm_math::LayerNormStats st = norm_math::layernorm_stats(c, q, d, eps, scale);
    for (int64_t j = threadIdx.x; j < d; j += kThreads) {
      yr[j] = store_f32<T>(
          norm_math::layernormed(v(j), fs, mu, st, widen_f32(gamma[j]), widen_f32(beta[j])));
    }
  }
}

}  // namespace lmo::gpu
