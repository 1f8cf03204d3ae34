// F07 sinusoidal position encoding kernel: pe [tokens, d], pe[t, 2i] = sin(2π·p_t·f_i),
// pe[t, 2i+1] = cos(2π·p_t·f_i), f_i = 1 / (2π·base^(2i/d)) in turns as hi + lo (kernels/api/turns.h,
// formed on the host in long double), cos and sin by gpu/angles.h in double, each rounded once to
// f32 and then to the storage. One thread per (token, pair): no reductions, nothing shared
// between threads, so the results cannot depend on the launch.
//
// The output is the whole traffic (the positions and the frequencies are read once per token and
// per pair through the caches), so each thread writes its (sin, cos) pair with one store of two
// elements when the array is aligned for it (paired = true), else two stores. Blocks are
// (pairs_x × tokens_y) with pairs_x × tokens_y = kThreads, pairs_x a multiple of the warp no wider
// than the row needs, so that narrow rows (d = 64: 32 pairs) still fill whole blocks.
#pragma once

#include "gpu/angles.h"
#include "gpu/common.cuh"

namespace lmo::gpu {

// The two-element vector type of T and the stores of a (sin, cos) pair.
template <class T>
struct PairOf;
template <>
struct PairOf<float> {
  using type = float2;
  __device__ static type make(float a, float b) { return make_float2(a, b); }
};
template <>
struct PairOf<__nv_bfloat16> {
  using type = __nv_bfloat162;
  __device__ static type make(__nv_bfloat16 a, __nv_bfloat16 b) { return __halves2bfloat162(a, b); }
};
template <>
struct PairOf<__half> {
  using type = __half2;
  __device__ static type make(__half a, __half b) { return __halves2half2(a, b); }
};

template <class T, bool kPaired>
__global__ void __launch_bounds__(kThreads)
    sinusoidal_pe_kernel(const int64_t* __restrict__ positions, const double* __restrict__ turns_hi,
                         const double* __restrict__ turns_lo, T* __restrict__ pe, int64_t tokens,
                         int64_t half) {
  const int64_t pair_step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t token_step = static_cast<int64_t>(gridDim.y) * blockDim.y;
  for (int64_t t = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; t < tokens;
       t += token_step) {
    const double p = static_cast<double>(positions[t]);
    T* row = pe + t * 2 * half;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < half;
         i += pair_step) {
      double c, s;
      cos_sin_of_turns(p, turns_hi[i], turns_lo[i], c, s);
      const T sv = narrow<T>(s), cv = narrow<T>(c);
      if constexpr (kPaired) {
        *reinterpret_cast<typename PairOf<T>::type*>(row + 2 * i) = PairOf<T>::make(sv, cv);
      } else {
        row[2 * i] = sv;
        row[2 * i + 1] = cv;
      }
    }
  }
}

}  // namespace lmo::gpu
