// F10 RoPE kernels: x [tokens, heads · head_dim] (the [tokens, heads, head_dim] layout
// flattened) rotated in the pairs of the layout ((2k, 2k+1) interleaved, (k, k + r/2)
// half-split) over the first rotary_dims dimensions of every head; the rest pass through.
// One block per token (grid-stride over tokens), threads over the heads × r/2 pairs; no
// reductions. Two angle sources, as the oracle's rope and rope_table ops:
//   angles: angle = positions[t]·inv_freq[k] in double (a position up to 2^53 is exact there),
//           cos and sin in double, times cos_sin_factor (YaRN's attention factor, or 1);
//   table:  cos_sin [tokens, r], row t = cos(p_t θ_k) for k < r/2, then sin(p_t θ_k), read in
//           its stored type (f32 or the storage's) and widened exactly.
// The rotation x_a' = x_a c − x_b s, x_b' = x_a s + x_b c is formed in double and rounded once to
// f32, then to the storage.
#pragma once

#include "gpu/common.cuh"

namespace lmo::gpu {

// Rotates token t with the cos/sin given by cs(k) → (c, s), k < r/2, and copies the
// pass-through dimensions. sh is kernels/api's RopeShape (gpu/api.h), the host's argument itself.
template <class T, class CosSin>
__device__ void rope_token(const T* __restrict__ xr, T* __restrict__ yr, const RopeShape& sh,
                           const CosSin& cs) {
  const int64_t half = sh.rotary_dims / 2;
  const bool interleaved = sh.layout == RopeLayout::interleaved;
  for (int64_t j = threadIdx.x; j < sh.heads * half; j += kThreads) {
    const int64_t h = j / half, k = j % half;
    const int64_t a = h * sh.head_dim + (interleaved ? 2 * k : k);
    const int64_t b = h * sh.head_dim + (interleaved ? 2 * k + 1 : k + half);
    double c, s;
    cs(k, c, s);
    const double xa = widen(xr[a]), xb = widen(xr[b]);
    yr[a] = narrow<T>(xa * c - xb * s);
    yr[b] = narrow<T>(xa * s + xb * c);
  }
  const int64_t pass = sh.head_dim - sh.rotary_dims;
  for (int64_t j = threadIdx.x; j < sh.heads * pass; j += kThreads) {
    const int64_t i = (j / pass) * sh.head_dim + sh.rotary_dims + j % pass;
    yr[i] = xr[i];
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    rope_angles_kernel(const T* __restrict__ x, const int64_t* __restrict__ positions,
                       const double* __restrict__ inv_freq, double factor, T* __restrict__ y,
                       RopeShape sh) {
  const int64_t width = sh.heads * sh.head_dim;
  for (int64_t t = blockIdx.x; t < sh.tokens; t += gridDim.x) {
    const double p = static_cast<double>(positions[t]);
    rope_token(x + t * width, y + t * width, sh, [&](int64_t k, double& c, double& s) {
      const double angle = p * inv_freq[k];
      c = cos(angle) * factor;
      s = sin(angle) * factor;
    });
  }
}

template <class T, class TableT>
__global__ void __launch_bounds__(kThreads)
    rope_table_kernel(const T* __restrict__ x, const TableT* __restrict__ cos_sin,
                      T* __restrict__ y, RopeShape sh) {
  const int64_t width = sh.heads * sh.head_dim, half = sh.rotary_dims / 2;
  for (int64_t t = blockIdx.x; t < sh.tokens; t += gridDim.x) {
    const TableT* row = cos_sin + t * sh.rotary_dims;
    rope_token(x + t * width, y + t * width, sh, [&](int64_t k, double& c, double& s) {
      c = widen(row[k]);
      s = widen(row[half + k]);
    });
  }
}

}  // namespace lmo::gpu
