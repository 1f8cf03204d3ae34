// F15 attention forward and the F16 decode step, and the attention half of F19's absorbed MLA
// decode (gpu/mla.cuh): one block per (query row, query head), looping over its visible keys in
// chunks of kChunk (the online softmax of gpu/attention_math.h). Per chunk: each warp forms the
// logits of every kWarps-th key (its lanes split the dot product, a fixed butterfly sums them),
// the block takes the chunk's maximum and Σe^{s−m} over the fixed tree of common.cuh, and each
// thread adds Σ_t e^{s_t−m} v_{t,c} for its own value components c, keys in ascending order.
// Everything in double; one rounding per output (to f32, then to the storage). No atomics and a
// shape fixed by the problem alone: identical results run to run.
//
// Keys have one or two parts (MLA: the latent c^KV and the rotary k^R), each with its own row
// stride; the query is read in storage T or, for MLA's absorbed query, in double (TQ). Masked
// keys are never read, so a NaN or ±∞ in a hidden key or value stays out of the row; rows with
// no visible key, a NaN or +∞ logit, or only −∞ logits are NaN (reference/attention.h).
#pragma once

#include "gpu/attention_math.h"
#include "gpu/common.cuh"

namespace lmo::gpu {

constexpr int kWarpSize = 32;
constexpr int kWarps = kThreads / kWarpSize;
// Keys per chunk: one logit slot per thread.
constexpr int kChunk = kThreads;
// Value components per thread (registers): value width ≤ kThreads · kValuesPerThread.
constexpr int kValuesPerThread = 4;
constexpr int64_t kMaxValueDim = int64_t{kThreads} * kValuesPerThread;
// The query row is held in shared memory as doubles (16 KiB): key width ≤ kMaxKeyDim.
constexpr int64_t kMaxKeyDim = 2048;

// Shapes and strides (in elements) of one launch. Query row i, head h: q[i·ldq + h·dk …] and, for
// a second key part, q2[i·ldq2 + h·dk2 …]; key t of KV head g: k[t·ldk + g·dk …],
// k2[t·ldk2 + g·dk2 …]; value: v[t·ldv + g·dv …]; output o[i·ldo + h·dv …]. Query i sits at
// position kv_len − q_len + i.
struct AttentionShape {
  int64_t q_len = 0, kv_len = 0, heads = 1, kv_heads = 1;
  int64_t dk = 0, dk2 = 0, dv = 0;
  int64_t ldq = 0, ldq2 = 0, ldk = 0, ldk2 = 0, ldv = 0, ldo = 0;
  double scale = 1;  // the f32 scale, widened
  double cap = 0;    // 0: no soft-cap
  int mask = attn::kCausal;
  int64_t window = 0;
  const int64_t* doc = nullptr;  // kv_len ids on the device, for attn::kDocument
};

__device__ __forceinline__ double widen(double v) { return v; }

// Σ over the 32 lanes by a butterfly of fixed shape: every lane gets the same sum (IEEE addition
// is commutative, so lanes l and l^m add the same two values at each step).
__device__ __forceinline__ double warp_sum(double v) {
  for (int m = kWarpSize / 2; m > 0; m /= 2) v += __shfl_xor_sync(0xffffffffu, v, m);
  return v;
}

template <class TQ, class T>
__global__ void __launch_bounds__(kThreads)
    attention_kernel(AttentionShape a, const TQ* __restrict__ q, const TQ* __restrict__ q2,
                     const T* __restrict__ k, const T* __restrict__ k2, const T* __restrict__ v,
                     T* __restrict__ o) {
  __shared__ double qs[kMaxKeyDim];
  __shared__ double ps[kChunk];  // the chunk's logits, then its e^{s−m}
  __shared__ bool vis[kChunk];
  __shared__ double buf[kThreads];
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
  const int64_t rows = a.q_len * a.heads;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t i = r / a.heads, h = r % a.heads;
    const int64_t g = h * a.kv_heads / a.heads;  // reference kv_head_of
    const int64_t p = a.kv_len - a.q_len + i;
    for (int64_t c = threadIdx.x; c < a.dk; c += kThreads)
      qs[c] = widen(q[i * a.ldq + h * a.dk + c]);
    for (int64_t c = threadIdx.x; c < a.dk2; c += kThreads) {
      qs[a.dk + c] = widen(q2[i * a.ldq2 + h * a.dk2 + c]);
    }
    __syncthreads();
    const attn::KeyRange range = attn::key_range(a.mask, a.window, a.kv_len, p);
    double acc[kValuesPerThread];
    bool poison[kValuesPerThread];  // a non-finite value met at p = e^{−∞} = 0 (0·±∞, 0·NaN)
#pragma unroll
    for (int u = 0; u < kValuesPerThread; ++u) {
      acc[u] = 0.0;
      poison[u] = false;
    }
    double l = 0.0;
    attn::OnlineMax om;
    for (int64_t t0 = range.lo; t0 < range.hi; t0 += kChunk) {
      const int n = static_cast<int>(range.hi - t0 < kChunk ? range.hi - t0 : kChunk);
      for (int j = warp; j < n; j += kWarps) {  // warp-uniform: the whole warp takes key t
        const int64_t t = t0 + j;
        const bool seen = attn::doc_visible(a.mask, a.doc, t, p);
        double part = 0.0;
        if (seen) {
          const T* kt = k + t * a.ldk + g * a.dk;
          for (int64_t c = lane; c < a.dk; c += kWarpSize) part += qs[c] * widen(kt[c]);
          if (a.dk2 > 0) {
            const T* kt2 = k2 + t * a.ldk2 + g * a.dk2;
            for (int64_t c = lane; c < a.dk2; c += kWarpSize) part += qs[a.dk + c] * widen(kt2[c]);
          }
        }
        const double dot = warp_sum(part);
        if (lane == 0) {
          ps[j] = attn::attention_logit(dot, a.scale, a.cap);
          vis[j] = seen;
        }
      }
      __syncthreads();
      const bool mine = static_cast<int>(threadIdx.x) < n && vis[threadIdx.x];
      const double cmax = block_reduce(mine ? ps[threadIdx.x] : -INFINITY, buf, MaxOp{});
      const double cany = block_reduce(mine ? 1.0 : 0.0, buf, MaxOp{});
      double alpha = 1.0;
      // Every thread holds the same cmax and cany, so the branch is uniform over the block.
      if (om.update(cmax, cany > 0.0, alpha)) {
        const double e = mine ? exp(ps[threadIdx.x] - om.m) : 0.0;
        if (static_cast<int>(threadIdx.x) < n) ps[threadIdx.x] = e;  // own slot only
        l = l * alpha + block_reduce(e, buf, SumOp{});               // its barriers publish ps
#pragma unroll
        for (int u = 0; u < kValuesPerThread; ++u) {
          const int64_t c = threadIdx.x + int64_t{u} * kThreads;
          if (c < a.dv) {
            const T* vc = v + t0 * a.ldv + g * a.dv + c;
            double s = 0.0;
            for (int j = 0; j < n; ++j) {
              if (vis[j]) s += ps[j] * widen(vc[j * a.ldv]);
            }
            acc[u] = acc[u] * alpha + s;
          }
        }
      } else if (cany > 0.0 && om.m == -INFINITY) {
        // Visible keys whose logit is −∞ while no finite logit was seen: they get p = 0 if one
        // comes later, and 0 times a non-finite value is NaN in the reference's Σ p_t v_t.
#pragma unroll
        for (int u = 0; u < kValuesPerThread; ++u) {
          const int64_t c = threadIdx.x + int64_t{u} * kThreads;
          if (c < a.dv) {
            const T* vc = v + t0 * a.ldv + g * a.dv + c;
            for (int j = 0; j < n; ++j) {
              if (vis[j] && !isfinite(widen(vc[j * a.ldv]))) poison[u] = true;
            }
          }
        }
      }
      __syncthreads();  // ps and vis are rewritten by the next chunk
    }
    const bool finite = om.finite_row();
    T* orow = o + i * a.ldo + h * a.dv;
#pragma unroll
    for (int u = 0; u < kValuesPerThread; ++u) {
      const int64_t c = threadIdx.x + int64_t{u} * kThreads;
      if (c < a.dv) orow[c] = narrow<T>(finite && !poison[u] ? acc[u] / l : NAN);
    }
    __syncthreads();  // qs is rewritten by the next row
  }
}

// Enqueues attention_kernel for a validated shape (dk + dk2 ≤ kMaxKeyDim, dv ≤ kMaxValueDim).
template <class TQ, class T>
cudaError_t launch_attention_kernel(const AttentionShape& a, const TQ* q, const TQ* q2, const T* k,
                                    const T* k2, const T* v, T* o, cudaStream_t stream) {
  if (a.q_len == 0 || a.heads == 0) return cudaSuccess;
  if (a.dk + a.dk2 > kMaxKeyDim || a.dv > kMaxValueDim) return cudaErrorInvalidValue;
  attention_kernel<TQ, T>
      <<<row_grid(a.q_len * a.heads), kThreads, 0, stream>>>(a, q, q2, k, k2, v, o);
  return cudaGetLastError();
}

}  // namespace lmo::gpu
