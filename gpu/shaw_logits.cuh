// F09 Shaw relative position logits: e[i, j] = q_i·(k_j + rel_k[clip(j − i, −K, K) + K])/√d_k,
// one thread per logit (gpu/relative_position.h's shaw_logit: the reference's order in double,
// rounded once to f32 and then to the storage). Consecutive threads take consecutive keys of one
// query, whose row they share. No reduction across threads: results cannot depend on the launch.
#pragma once

#include "gpu/common.cuh"
#include "gpu/relative_position.h"

namespace lmo::gpu {

template <class T>
__global__ void __launch_bounds__(kThreads)
    shaw_logits_kernel(const T* __restrict__ q, const T* __restrict__ k,
                       const T* __restrict__ rel_k, T* __restrict__ e, int64_t n_q, int64_t n_k,
                       int64_t d_k, int64_t max_relative) {
  const int64_t n = n_q * n_k;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t x = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; x < n; x += step) {
    const int64_t i = x / n_k, j = x % n_k;
    const T* a = rel_k + relpos::shaw_row(i, j, max_relative) * d_k;
    e[x] = narrow<T>(relpos::shaw_logit(q + i * d_k, k + j * d_k, a, d_k, WidenFn{}));
  }
}

}  // namespace lmo::gpu
