// Table kernels of the position family: F08's learned absolute embedding (a gather of two table
// rows and their sum) and F09's T5 bias (a gather of bucketed table values). One thread per
// output element, nothing shared between threads: results cannot depend on the launch.
#pragma once

#include "gpu/common.cuh"
#include "gpu/relative_position.h"

namespace lmo::gpu {

// h[t, c] = V[ids[t], c] + U[pos[t], c]: both values widened exactly, the sum rounded once to f32
// and then to T, as fast/learned_position.h's f32 sum (the double sum of two f32 values rounded
// to f32 is the f32 sum). Indices already checked against the tables on the host.
template <class T>
__global__ void __launch_bounds__(kThreads)
    learned_position_kernel(const T* __restrict__ token_table, const T* __restrict__ position_table,
                            const int64_t* __restrict__ ids, const int64_t* __restrict__ positions,
                            T* __restrict__ h, int64_t tokens, int64_t d) {
  const int64_t n = tokens * d;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; e < n; e += step) {
    const int64_t t = e / d, c = e % d;
    h[e] =
        narrow<T>(widen(token_table[ids[t] * d + c]) + widen(position_table[positions[t] * d + c]));
  }
}

// bias[h, i, j] = table[bucket(j − (query_offset + i)), h]: the stored bits copied (U is the
// unsigned integer of the storage's width), never computed.
template <class U>
__global__ void __launch_bounds__(kThreads)
    t5_bias_kernel(const U* __restrict__ table, U* __restrict__ bias, relpos::T5Rule rule,
                   int64_t heads, int64_t n_q, int64_t n_k, int64_t query_offset) {
  const int64_t per_head = n_q * n_k, n = heads * per_head;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; e < n; e += step) {
    const int64_t h = e / per_head, i = e % per_head / n_k, j = e % n_k;
    const int64_t b = relpos::t5_bucket(rule, j - (query_offset + i));
    bias[e] = table[b * heads + h];
  }
}

}  // namespace lmo::gpu
