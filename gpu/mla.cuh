// F19 + F16: the query side of absorbed MLA decode (fast/mla_decode.h), in f32. Per head i (one
// block): q̃_i[r] = Σ_k W^UK[r, i·d_h + k] q^C_i[k] (one warp per latent row r, its lanes fusing
// the products of k = lane, lane + 32, … into their sums, the fixed butterfly of
// gpu/attention_f32.cuh adding the lanes), and q^R_i rotated at position t − 1 with the cos/sin
// table formed on the host in double and rounded once to f32 (gpu/rope_math.h's rotation). The
// attention is gpu/attention_f32.cuh over the latents with one shared KV head and two key parts.
#pragma once

#include "gpu/attention_f32.cuh"
#include "gpu/attention_f32_math.h"
#include "gpu/rope_math.h"

namespace lmo::gpu {

// cos_sin: rope_dim/2 cosines, then rope_dim/2 sines, in f32. q_tilde [h, d_c], q_rot [h, d_r].
template <class T>
__global__ void __launch_bounds__(kThreads)
    mla_query_kernel(const T* __restrict__ q_c, const T* __restrict__ q_r,
                     const T* __restrict__ w_uk, const float* __restrict__ cos_sin, int64_t heads,
                     int64_t head_dim, int64_t rope_dim, int64_t latent_dim, bool half_split,
                     float* __restrict__ q_tilde, float* __restrict__ q_rot) {
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
  const int64_t half = rope_dim / 2, hd = heads * head_dim;
  const kernels::RopeLayout layout =
      half_split ? kernels::RopeLayout::half_split : kernels::RopeLayout::interleaved;
  for (int64_t i = blockIdx.x; i < heads; i += gridDim.x) {
    const T* qi = q_c + i * head_dim;
    for (int64_t r = warp; r < latent_dim; r += kWarps) {  // warp-uniform
      const T* w = w_uk + r * hd + i * head_dim;
      const float s = warp_sum_f32(attn_f32::lane_dot([&](int64_t c) { return widen_f32(w[c]); },
                                                      [&](int64_t c) { return widen_f32(qi[c]); },
                                                      head_dim, lane));
      if (lane == 0) q_tilde[i * latent_dim + r] = s;
    }
    const T* x = q_r + i * rope_dim;
    float* y = q_rot + i * rope_dim;
    for (int64_t j = threadIdx.x; j < half; j += kThreads) {
      const int64_t ia = half_split ? j : 2 * j, ib = half_split ? j + half : 2 * j + 1;
      rope_math::rotate(layout, widen_f32(x[ia]), widen_f32(x[ib]), cos_sin[j], cos_sin[half + j],
                        y[ia], y[ib]);
    }
  }
}

}  // namespace lmo::gpu
