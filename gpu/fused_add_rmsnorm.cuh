// Residual add fused with RMSNorm (vLLM's and FlashInfer's fused_add_rmsnorm) in f32: one block
// per row (grid-stride over rows), the per-row math of gpu/norm_math.h (fast/norms.cc's rounding
// order), the sums of squares in f32 over each thread's strided elements and then the fixed
// tree of gpu/common.cuh: no atomics, the same bits on every run and for every grid.
//
// h = x + r is formed again from the inputs in each pass instead of being kept: the passes before
// the last only read, and in the last each thread reads x_i and r_i before it writes
// residual_out_i and y_i of its own elements, so residual_out may alias residual (fast/norms.h's
// in-place update) and no scratch row is needed.
#pragma once

#include "gpu/common.cuh"
#include "gpu/norm_math.h"

namespace lmo::gpu {

template <class T>
__global__ void __launch_bounds__(kThreads)
    fused_add_rmsnorm_kernel(const T* __restrict__ x, const T* residual,
                             const T* __restrict__ gamma, T* residual_out, T* __restrict__ y,
                             int64_t rows, int64_t d, float eps) {
  __shared__ float buf[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * d;
    const T* rr = residual + r * d;
    const auto h = [&](int64_t j) {
      return norm_math::residual_sum(widen_f32(xr[j]), widen_f32(rr[j]));
    };
    float amax = 0.0f;
    for (int64_t j = threadIdx.x; j < d; j += kThreads) {
      amax = fmaxf(amax, norm_math::magnitude(h(j)));  // a NaN h makes the sum, not amax, NaN
    }
    amax = block_reduce(amax, buf, MaxOp{});
    const double scale = norm_math::row_scale(amax);
    const auto fs = static_cast<float>(scale);
    float ss = norm_math::strided_sum_squares(h, d, threadIdx.x, kThreads, fs);
    ss = block_reduce(ss, buf, SumOp{});
    const float inv = norm_math::inv_rms(ss, d, eps, scale);
    T* hr = residual_out + r * d;
    T* yr = y + r * d;
    for (int64_t j = threadIdx.x; j < d; j += kThreads) {
      const float hj = h(j);  // read before this thread's own store to residual_out
      hr[j] = store_f32<T>(hj);
      yr[j] = store_f32<T>(norm_math::normalized(hj, fs, inv, widen_f32(gamma[j])));
    }
  }
}

}  // namespace lmo::gpu
