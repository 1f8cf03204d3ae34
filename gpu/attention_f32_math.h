// The per-row arithmetic of the f32 attention kernel (gpu/attention_f32.cuh) as __host__
// __device__ functions, so that a host test (tests/kernels/gpu_attention_f32_math_test.cc) runs
// the kernel's own operations, in its order, and judges them against the exact reference on a
// machine without a device. Plain C++ when not compiled by nvcc; no CUDA header.
//
// One block per (query row, head), keys in chunks of kThreads (gpu/attention_math.h's online
// softmax over chunks, its masks and special rows), every operation in f32 (gpu/f32_ops.h):
//   dot q·k_t: lane ℓ of the key's warp fuses q_c·k_c into its sum over c = ℓ, ℓ + 32, … (fma),
//     then over the key's second part where it has one (MLA: [q̃; q^R]·[c^KV; k^R]), the 32
//     lanes' sums added by a fixed butterfly (warp_sum);
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

// Lane `lane`'s share of q·k over c = lane, lane + 32, … < d, each product fused into the sum,
// which starts at `part` (a key's second part, MLA's rotary k^R, continues its first's sum).
template <class Q, class K>
LMO_HD float lane_dot(const Q& q, const K& k, int64_t d, int lane, float part = 0.0f) {
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

// ---- Split-KV (flash-decoding) ----
// A row with few query rows (decode: heads · q_len below kSplitRows) and many keys has its keys
// split into `count` consecutive ranges of `keys` keys (a multiple of the 256-key chunk, at least
// kMinSplitKeys, at most kMaxSplits ranges), one block each: each block runs the online softmax
// over its range and leaves its state (m_b, l_b, a_b, its flags); a combine then takes, in
// ascending split order, M = max m_b, l = Σ l_b·e^{m_b − M}, a_c = Σ a_{b,c}·e^{m_b − M} and
// o_c = a_c / l. The split depends on the shape alone, never on the device, so results are the
// same on every GPU and run; a single range (count 1) is the one-block row, unchanged.
constexpr int64_t kSplitRows = 1024;
constexpr int64_t kMinSplitKeys = 1024;
constexpr int64_t kMaxSplits = 64;

struct KeySplit {
  int64_t keys = 1;   // keys per range
  int64_t count = 1;  // ranges
};

LMO_HD inline KeySplit key_split(int64_t rows, int64_t kv_len) {
  if (rows >= kSplitRows || kv_len <= kMinSplitKeys) return {kv_len > 0 ? kv_len : 1, 1};
  int64_t keys = (kv_len + kMaxSplits - 1) / kMaxSplits;
  keys = (keys + 255) / 256 * 256;
  if (keys < kMinSplitKeys) keys = kMinSplitKeys;
  return {keys, (kv_len + keys - 1) / keys};
}

// The floats a split-KV launch keeps per (row, head, range): m, l, the seen flag, then a_c and
// the poison flag per value component; 0 where the split is one range.
LMO_HD inline int64_t split_partial_floats(int64_t rows, int64_t kv_len, int64_t dv) {
  const KeySplit split = key_split(rows, kv_len);
  return split.count > 1 ? rows * split.count * (3 + 2 * dv) : 0;
}

// The state one range leaves: its maximum (−∞ where no finite or +∞ visible logit; NaN or +∞
// make the row NaN), whether it saw a visible key, l_b, and per value component a_{b,c} and the
// poison flag (a non-finite value met at p = 0).
struct SplitState {
  float m;
  bool any;
  float l;
};

// The combine's row verdict and its M: finite when some range saw a key, none saw a NaN or +∞
// maximum, and M is finite.
template <class StateAt>
LMO_HD bool combined_max(const StateAt& state, int64_t count, float& m) {
  m = -INFINITY;
  bool any = false, bad = false;
  for (int64_t b = 0; b < count; ++b) {
    const SplitState st = state(b);
    any = any || st.any;
    if (st.m != st.m || st.m == INFINITY)
      bad = true;
    else if (st.m > m)
      m = st.m;
  }
  return any && !bad && m > -INFINITY;
}

// Σ_b x_b·e^{m_b − M} in ascending split order over the ranges with a finite maximum (the others
// hold nothing): l from the l_b, a_c from the a_{b,c}.
template <class L = f32::CudaF32, class StateAt, class X>
LMO_HD float combined_sum(const StateAt& state, const X& x, int64_t count, float m) {
  float s = 0.0f;
  for (int64_t b = 0; b < count; ++b) {
    const SplitState st = state(b);
    if (!(st.m > -INFINITY)) continue;
    s = f32::add(s, f32::mul(x(b), L::exp(f32::sub(st.m, m))));  // expf: ≤ 2 ulp (CUDA)
  }
  return s;
}

}  // namespace lmo::gpu::attn_f32
