// The per-row arithmetic of the f32 attention kernel (gpu/attention_f32.cuh) as __host__
// __device__ functions, so that a host test (tests/kernels/gpu_attention_f32_math_test.cc) runs
// the kernel's own operations, in its order, and judges them against the exact reference on a
// machine without a device. Plain C++ when not compiled by nvcc; no CUDA header.
//
// One block per (query row, head), keys in chunks of kThreads (gpu/attention_math.h's online
// softmax over chunks, its masks and special rows), every operation in f32 (gpu/f32_ops.h):
//   dot q·k_t: lane ℓ of the key's warp fuses q_c·k_c into its sum over c = ℓ, ℓ + 32, … (fma),
//     the 32 lanes' sums added by a fixed butterfly (warp_sum);
//   logit s_t = dot·scale, then cap·tanh(s/cap) as the f32 soft-cap kernel forms it (tanh in
//     double rounded once: gpu/activation_f32.h's SoftcapFn);
//   the chunk's maximum over the block's tree; m and alpha = e^{m_old − m} (expf: ≤ 2 ulp,
//     CUDA) by OnlineMaxOf<float>;
//   e_t = e^{s_t − m} (expf), l = l·alpha + Σ e_t (the chunk's sum over the block's tree);
//   each value component c: a_c = a_c·alpha + Σ_t e_t·v_{t,c}, the chunk's keys in ascending
//     order, each product fused into the running sum (fma);
//   o_c = a_c / l, one IEEE division, rounded once more to the storage.
// The dot products and the P·V sums are fused, so the gpu backend declares `strict+fma`.
#pragma once

#include <cstdint>

#include "gpu/activation_f32.h"
#include "gpu/f32_math.h"
#include "gpu/f32_ops.h"

namespace lmo::gpu::attn_f32 {

constexpr int kWarpLanes = 32;

// Lane `lane`'s share of q·k over c = lane, lane + 32, … < d, each product fused into the sum.
template <class Q, class K>
LMO_HD float lane_dot(const Q& q, const K& k, int64_t d, int lane) {
  float part = 0.0f;
  for (int64_t c = lane; c < d; c += kWarpLanes) part = f32::fma(q(c), k(c), part);
  return part;
}

// The logit of a dot product: dot·scale, soft-capped when cap > 0.
template <class L = f32::CudaF32>
LMO_HD float logit(float dot, float scale, float cap) {
  const float s = f32::mul(dot, scale);
  return cap > 0.0f ? f32::SoftcapFn<L>{cap}(s) : s;
}

// e^{s − m}.
template <class L = f32::CudaF32>
LMO_HD float weight(float s, float m) {
  return L::exp(f32::sub(s, m));  // expf: ≤ 2 ulp (CUDA)
}

// l·alpha + chunk_sum, and a_c·alpha + chunk_part: the rescaled running sums.
LMO_HD inline float rescaled(float running, float alpha, float chunk) {
  return f32::add(f32::mul(running, alpha), chunk);
}

// One value component's Σ_t e_t·v_t over the chunk's visible keys, ascending, each product fused.
template <class E, class V, class Seen>
LMO_HD float chunk_value_sum(const E& e, const V& v, const Seen& seen, int n) {
  float s = 0.0f;
  for (int j = 0; j < n; ++j) {
    if (seen(j)) s = f32::fma(e(j), v(j), s);
  }
  return s;
}

}  // namespace lmo::gpu::attn_f32
