// fp8 scaling kernels in f32 (gpu/fp8_math.h's per-element math, fast/fp8.cc's rounding order):
//  - fp8_scales_kernel: one block per scale tile (grid-stride over tiles), each thread taking the
//    max |x| of a strided share of the tile's elements, then gpu/common.cuh's fixed tree (a
//    maximum is exact in any order; a NaN flag rides along); thread 0 forms the scale;
//  - fp8_quantize_kernel, fp8_dequantize_kernel: one thread per element;
//  - fp8_linear_kernel: one thread per output element running its whole k loop
//    (fp8_math::linear_element): no sum is shared between threads, so the result cannot depend
//    on the launch. Consecutive threads take consecutive output columns.
// No atomics: the same bits on every run.
#pragma once

#include "gpu/common.cuh"
#include "gpu/fp8_math.h"

namespace lmo::gpu {

template <class T>
__global__ void __launch_bounds__(kThreads)
    fp8_scales_kernel(const T* __restrict__ x, kernels::Fp8Tiling t, kernels::Fp8Format f,
                      bool pow2, double amax_floor, float* __restrict__ scales) {
  __shared__ float buf[kThreads];
  const int64_t across = (t.cols + t.tile_cols - 1) / t.tile_cols;
  const int64_t tiles = (t.rows + t.tile_rows - 1) / t.tile_rows * across;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t r0 = tile / across * t.tile_rows, c0 = tile % across * t.tile_cols;
    const int64_t h = min(t.tile_rows, t.rows - r0), w = min(t.tile_cols, t.cols - c0);
    float amax = 0.0f, nan = 0.0f;
    for (int64_t e = threadIdx.x; e < h * w; e += kThreads) {
      const float v = widen_f32(x[(r0 + e / w) * t.cols + c0 + e % w]);
      if (v != v) nan = 1.0f;
      amax = fmaxf(amax, fabsf(v));
    }
    amax = block_reduce(amax, buf, MaxOp{});
    nan = block_reduce(nan, buf, MaxOp{});
    if (threadIdx.x == 0) scales[tile] = fp8_math::scale(amax, nan != 0.0f, f, pow2, amax_floor);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    fp8_quantize_kernel(const T* __restrict__ x, const float* __restrict__ scales,
                        kernels::Fp8Tiling t, kernels::Fp8Format f, uint8_t* __restrict__ q) {
  const int64_t n = t.rows * t.cols;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += step) {
    const float s = scales[fp8_math::tile_of(i / t.cols, i % t.cols, t)];
    q[i] = fp8_math::quantize(widen_f32(x[i]), s, f);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    fp8_dequantize_kernel(const uint8_t* __restrict__ q, const float* __restrict__ scales,
                          kernels::Fp8Tiling t, kernels::Fp8Format f, T* __restrict__ x) {
  const int64_t n = t.rows * t.cols;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += step) {
    const float s = scales[fp8_math::tile_of(i / t.cols, i % t.cols, t)];
    x[i] = store_f32<T>(fp8_math::dequantize(q[i], s, f));
  }
}

// y [m, n] = A [m, k] · W [n, k]ᵀ with A's scales per 1 × block group ([m, ⌈k/block⌉]) and W's
// per block × block tile ([⌈n/block⌉, ⌈k/block⌉]).
template <class T>
__global__ void __launch_bounds__(kThreads)
    fp8_linear_kernel(const uint8_t* __restrict__ a, const float* __restrict__ a_scales,
                      const uint8_t* __restrict__ w, const float* __restrict__ w_scales,
                      T* __restrict__ y, int64_t m, int64_t n, int64_t k, int64_t block,
                      kernels::Fp8Format f) {
  const int64_t k_blocks = (k + block - 1) / block;
  const int64_t total = m * n;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; e < total;
       e += step) {
    const int64_t i = e / n, j = e % n;
    y[e] = store_f32<T>(fp8_math::linear_element(a + i * k, a_scales + i * k_blocks, w + j * k,
                                                 w_scales + (j / block) * k_blocks, k, block, f));
  }
}

}  // namespace lmo::gpu
