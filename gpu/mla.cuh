// F19 + F16: the query side of absorbed MLA decode (fast/mla_decode.h). Per head i (one block):
// q̃_i[r] = Σ_k W^UK[r, i·d_h + k] q^C_i[k] (one warp per latent row r, lanes split k, the
// fixed butterfly of gpu/attention.cuh sums), and q^R_i rotated at position t − 1 with the
// cos/sin table formed on the host in double. Both stay in double on the device (no rounding
// before the attention, which is gpu/attention.cuh over the latents with one shared KV head).
#pragma once

#include "gpu/attention.cuh"

namespace lmo::gpu {

// cos_sin: rope_dim/2 cosines, then rope_dim/2 sines. q_tilde [h, d_c], q_rot [h, d_r].
template <class T>
__global__ void __launch_bounds__(kThreads)
    mla_query_kernel(const T* __restrict__ q_c, const T* __restrict__ q_r,
                     const T* __restrict__ w_uk, const double* __restrict__ cos_sin, int64_t heads,
                     int64_t head_dim, int64_t rope_dim, int64_t latent_dim, bool half_split,
                     double* __restrict__ q_tilde, double* __restrict__ q_rot) {
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
  const int64_t half = rope_dim / 2, hd = heads * head_dim;
  for (int64_t i = blockIdx.x; i < heads; i += gridDim.x) {
    const T* qi = q_c + i * head_dim;
    for (int64_t r = warp; r < latent_dim; r += kWarps) {  // warp-uniform
      const T* w = w_uk + r * hd + i * head_dim;
      double part = 0.0;
      for (int64_t c = lane; c < head_dim; c += kWarpSize) part += widen(w[c]) * widen(qi[c]);
      const double s = warp_sum(part);
      if (lane == 0) q_tilde[i * latent_dim + r] = s;
    }
    const T* x = q_r + i * rope_dim;
    double* y = q_rot + i * rope_dim;
    for (int64_t j = threadIdx.x; j < half; j += kThreads) {
      const int64_t ia = half_split ? j : 2 * j, ib = half_split ? j + half : 2 * j + 1;
      const double xa = widen(x[ia]), xb = widen(x[ib]), c = cos_sin[j], s = cos_sin[half + j];
      y[ia] = xa * c - xb * s;
      y[ib] = xa * s + xb * c;
    }
  }
}

}  // namespace lmo::gpu
