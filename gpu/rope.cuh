// F10 RoPE kernels in f32: x [tokens, heads · head_dim] (the [tokens, heads, head_dim] layout
// flattened) rotated in the pairs of the layout ((2k, 2k+1) interleaved, (k, k + r/2)
// half-split) over the first rotary_dims dimensions of every head; the rest pass through.
// One block per token (grid-stride over tokens), threads over the heads × r/2 pairs; no
// reductions, so a token's result depends on its own inputs only (bitwise the same for any grid).
// Two angle sources, as the oracle's rope and rope_table ops, and the rotation itself, are
// gpu/rope_math.h's (fast/rope.cc's arithmetic, the strict recipe):
//   angles: c_k, s_k of the token's position in double from the frequencies in turns, rounded
//           once to f32; formed once per token into shared memory, in chunks of kRopeChunk
//           pairs (any rotary_dims, static shared memory), and read by every head;
//   table:  cos_sin [tokens, r], row t = cos(p_t θ_k) for k < r/2, then sin(p_t θ_k), read in
//           its stored type (f32 or the storage's) and widened exactly to f32.
#pragma once

#include "gpu/common.cuh"
#include "gpu/rope_math.h"

namespace lmo::gpu {

inline constexpr int64_t kRopeChunk = 1024;  // pairs whose c, s one block holds at a time

// Rotates pairs k in [k0, k1) of every head of one token, with c_k, s_k from cs(k, c, s), and
// stores each result rounded once to T.
template <class T, class CosSin>
__device__ void rope_pairs(const T* __restrict__ xr, T* __restrict__ yr, const RopeShape& sh,
                           int64_t k0, int64_t k1, const CosSin& cs) {
  const int64_t n = k1 - k0;
  for (int64_t j = threadIdx.x; j < sh.heads * n; j += kThreads) {
    const int64_t h = j / n, k = k0 + j % n;
    int64_t a = 0, b = 0;
    rope_math::pair_offsets(sh, h, k, a, b);
    float c = 0.0f, s = 0.0f, ya = 0.0f, yb = 0.0f;
    cs(k, c, s);
    rope_math::rotate(sh.layout, widen_f32(xr[a]), widen_f32(xr[b]), c, s, ya, yb);
    yr[a] = store_f32<T>(ya);
    yr[b] = store_f32<T>(yb);
  }
}

// The pass-through dimensions r … head_dim − 1 of every head, copied.
template <class T>
__device__ void rope_pass_through(const T* __restrict__ xr, T* __restrict__ yr,
                                  const RopeShape& sh) {
  const int64_t pass = sh.head_dim - sh.rotary_dims;
  for (int64_t j = threadIdx.x; j < sh.heads * pass; j += kThreads) {
    const int64_t i = (j / pass) * sh.head_dim + sh.rotary_dims + j % pass;
    yr[i] = xr[i];
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    rope_angles_kernel(const T* __restrict__ x, const int64_t* __restrict__ positions,
                       const double* __restrict__ turns_hi, const double* __restrict__ turns_lo,
                       double factor, T* __restrict__ y, RopeShape sh) {
  __shared__ float c_chunk[kRopeChunk], s_chunk[kRopeChunk];
  const int64_t width = sh.heads * sh.head_dim, half = sh.rotary_dims / 2;
  for (int64_t t = blockIdx.x; t < sh.tokens; t += gridDim.x) {
    const double p = static_cast<double>(positions[t]);
    for (int64_t k0 = 0; k0 < half; k0 += kRopeChunk) {
      const int64_t k1 = k0 + kRopeChunk < half ? k0 + kRopeChunk : half;
      for (int64_t k = k0 + threadIdx.x; k < k1; k += kThreads) {
        rope_math::cos_sin(p, turns_hi[k], turns_lo[k], factor, c_chunk[k - k0], s_chunk[k - k0]);
      }
      __syncthreads();
      rope_pairs(x + t * width, y + t * width, sh, k0, k1, [&](int64_t k, float& c, float& s) {
        c = c_chunk[k - k0];
        s = s_chunk[k - k0];
      });
      __syncthreads();  // the chunk is rewritten next
    }
    rope_pass_through(x + t * width, y + t * width, sh);
  }
}

template <class T, class TableT>
__global__ void __launch_bounds__(kThreads)
    rope_table_kernel(const T* __restrict__ x, const TableT* __restrict__ cos_sin,
                      T* __restrict__ y, RopeShape sh) {
  const int64_t width = sh.heads * sh.head_dim, half = sh.rotary_dims / 2;
  for (int64_t t = blockIdx.x; t < sh.tokens; t += gridDim.x) {
    const TableT* row = cos_sin + t * sh.rotary_dims;
    rope_pairs(x + t * width, y + t * width, sh, 0, half, [&](int64_t k, float& c, float& s) {
      c = widen_f32(row[k]);
      s = widen_f32(row[half + k]);
    });
    rope_pass_through(x + t * width, y + t * width, sh);
  }
}

}  // namespace lmo::gpu
