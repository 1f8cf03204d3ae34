// F15 attention forward and the F16 decode step in f32 (gpu/attention_f32_math.h's arithmetic):
// one block per (query row, query head), looping over its visible keys in chunks of kChunk (the
// online softmax of gpu/attention_math.h). Per chunk: each warp forms the logits of every
// kWarps-th key (its lanes split the dot product, a fixed butterfly sums them), the block takes
// the chunk's maximum and Σe^{s−m} over the fixed tree of common.cuh, and each thread adds
// Σ_t e^{s_t−m} v_{t,c} for its own value components c, keys in ascending order. No atomics and
// a shape fixed by the problem alone: identical results run to run. Masked keys are never read;
// rows with no visible key, a NaN or +∞ logit, or only −∞ logits are NaN (reference/attention.h),
// as in the reference. Keys have one or two parts (MLA: the latent c^KV
// and the rotary k^R, each with its own row stride); the query is read in storage T or, for
// MLA's absorbed query, in f32 (TQ).
#pragma once

#include "gpu/attention.cuh"
#include "gpu/attention_f32_math.h"

namespace lmo::gpu {

// The ranges' states of a split-KV launch (attn_f32::key_split's count > 1), per (row, head,
// range) x = r·count + b: m, l and the seen flag, then a and the poison flags per value component.
struct SplitPartials {
  int64_t count = 1;
  float* m = nullptr;       // [rows · count]
  float* l = nullptr;       // [rows · count]
  float* any = nullptr;     // [rows · count], 0 or 1
  float* acc = nullptr;     // [rows · count · dv]
  float* poison = nullptr;  // [rows · count · dv], 0 or 1
};

// Σ over the 32 lanes by a butterfly of fixed shape; every lane gets the same sum.
__device__ __forceinline__ float warp_sum_f32(float v) {
  for (int m = kWarpSize / 2; m > 0; m /= 2) v = f32::add(v, __shfl_xor_sync(0xffffffffu, v, m));
  return v;
}

template <class TQ, class T>
__global__ void __launch_bounds__(kThreads)
    attention_f32_kernel(AttentionShape a, float scale, float cap, const TQ* __restrict__ q,
                         const TQ* __restrict__ q2, const T* __restrict__ k,
                         const T* __restrict__ k2, const T* __restrict__ v, T* __restrict__ o,
                         attn_f32::KeySplit split, SplitPartials part) {
  __shared__ float qs[kMaxKeyDim];
  __shared__ float ps[kChunk];  // the chunk's logits, then its e^{s−m}
  __shared__ bool vis[kChunk];
  __shared__ float buf[kThreads];
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
  const int64_t rows = a.q_len * a.heads;
  for (int64_t x = blockIdx.x; x < rows * split.count; x += gridDim.x) {
    const int64_t r = x / split.count, b = x % split.count;
    const int64_t i = r / a.heads, h = r % a.heads;
    const int64_t g = h * a.kv_heads / a.heads;  // reference kv_head_of
    const int64_t p = a.kv_len - a.q_len + i;
    for (int64_t c = threadIdx.x; c < a.dk; c += kThreads) {
      qs[c] = widen_f32(q[i * a.ldq + h * a.dk + c]);
    }
    for (int64_t c = threadIdx.x; c < a.dk2; c += kThreads) {
      qs[a.dk + c] = widen_f32(q2[i * a.ldq2 + h * a.dk2 + c]);
    }
    __syncthreads();
    attn::KeyRange range = attn::key_range(a.mask, a.window, a.kv_len, p);
    if (split.count > 1) {  // this block's range of keys
      range.lo = range.lo > b * split.keys ? range.lo : b * split.keys;
      range.hi = range.hi < (b + 1) * split.keys ? range.hi : (b + 1) * split.keys;
    }
    float acc[kValuesPerThread];
    bool poison[kValuesPerThread];  // a non-finite value met at p = e^{−∞} = 0 (0·±∞, 0·NaN)
#pragma unroll
    for (int u = 0; u < kValuesPerThread; ++u) {
      acc[u] = 0.0f;
      poison[u] = false;
    }
    float l = 0.0f;
    attn::OnlineMaxOf<float, f32::CudaF32> om;
    for (int64_t t0 = range.lo; t0 < range.hi; t0 += kChunk) {
      const int n = static_cast<int>(range.hi - t0 < kChunk ? range.hi - t0 : kChunk);
      for (int j = warp; j < n; j += kWarps) {  // warp-uniform: the whole warp takes key t
        const int64_t t = t0 + j;
        const bool seen = attn::doc_visible(a.mask, a.doc, t, p);
        float part = 0.0f;
        if (seen) {
          const T* kt = k + t * a.ldk + g * a.dk;
          part = attn_f32::lane_dot([&](int64_t c) { return qs[c]; },
                                    [&](int64_t c) { return widen_f32(kt[c]); }, a.dk, lane);
          if (a.dk2 > 0) {
            const T* kt2 = k2 + t * a.ldk2 + g * a.dk2;
            part =
                attn_f32::lane_dot([&](int64_t c) { return qs[a.dk + c]; },
                                   [&](int64_t c) { return widen_f32(kt2[c]); }, a.dk2, lane, part);
          }
        }
        const float dot = warp_sum_f32(part);
        if (lane == 0) {
          ps[j] = attn_f32::logit(dot, scale, cap);
          vis[j] = seen;
        }
      }
      __syncthreads();
      const bool mine = static_cast<int>(threadIdx.x) < n && vis[threadIdx.x];
      const float cmax = block_reduce(mine ? ps[threadIdx.x] : -INFINITY, buf, MaxOp{});
      const float cany = block_reduce(mine ? 1.0f : 0.0f, buf, MaxOp{});
      float alpha = 1.0f;
      // Every thread holds the same cmax and cany, so the branch is uniform over the block.
      if (om.update(cmax, cany > 0.0f, alpha)) {
        const float e = mine ? attn_f32::weight(ps[threadIdx.x], om.m) : 0.0f;
        if (static_cast<int>(threadIdx.x) < n) ps[threadIdx.x] = e;       // own slot only
        l = attn_f32::rescaled(l, alpha, block_reduce(e, buf, SumOp{}));  // publishes ps
#pragma unroll
        for (int u = 0; u < kValuesPerThread; ++u) {
          const int64_t c = threadIdx.x + int64_t{u} * kThreads;
          if (c < a.dv) {
            const T* vc = v + t0 * a.ldv + g * a.dv + c;
            const float s = attn_f32::chunk_value_sum(
                [&](int j) { return ps[j]; }, [&](int j) { return widen_f32(vc[j * a.ldv]); },
                [&](int j) { return vis[j]; }, n);
            acc[u] = attn_f32::rescaled(acc[u], alpha, s);
          }
        }
      } else if (cany > 0.0f && om.m == -INFINITY) {
        // Visible keys whose logit is −∞ while no finite logit was seen: they get p = 0 if one
        // comes later, and 0 times a non-finite value is NaN in the reference's Σ p_t v_t.
#pragma unroll
        for (int u = 0; u < kValuesPerThread; ++u) {
          const int64_t c = threadIdx.x + int64_t{u} * kThreads;
          if (c < a.dv) {
            const T* vc = v + t0 * a.ldv + g * a.dv + c;
            for (int j = 0; j < n; ++j) {
              if (vis[j] && !isfinite(widen_f32(vc[j * a.ldv]))) poison[u] = true;
            }
          }
        }
      }
      __syncthreads();  // ps and vis are rewritten by the next chunk
    }
    if (split.count > 1) {
      if (threadIdx.x == 0) {
        part.m[x] = om.m;
        part.l[x] = l;
        part.any[x] = om.any ? 1.0f : 0.0f;
      }
#pragma unroll
      for (int u = 0; u < kValuesPerThread; ++u) {
        const int64_t c = threadIdx.x + int64_t{u} * kThreads;
        if (c < a.dv) {
          part.acc[x * a.dv + c] = acc[u];
          part.poison[x * a.dv + c] = poison[u] ? 1.0f : 0.0f;
        }
      }
      __syncthreads();  // qs is rewritten by the next row
      continue;
    }
    const bool finite = om.finite_row();
    T* orow = o + i * a.ldo + h * a.dv;
#pragma unroll
    for (int u = 0; u < kValuesPerThread; ++u) {
      const int64_t c = threadIdx.x + int64_t{u} * kThreads;
      if (c < a.dv) orow[c] = store_f32<T>(finite && !poison[u] ? f32::div(acc[u], l) : NAN);
    }
    __syncthreads();  // qs is rewritten by the next row
  }
}

// The split-KV combine: one block per (row, head), threads over the value components, the
// ranges in ascending order (attn_f32::combined_max, combined_sum).
template <class T>
__global__ void __launch_bounds__(kThreads)
    attention_combine_kernel(AttentionShape a, SplitPartials part, T* __restrict__ o) {
  const int64_t rows = a.q_len * a.heads;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t i = r / a.heads, h = r % a.heads, x0 = r * part.count;
    const auto state = [&](int64_t b) {
      return attn_f32::SplitState{part.m[x0 + b], part.any[x0 + b] != 0.0f, part.l[x0 + b]};
    };
    float m = 0.0f;
    const bool finite = attn_f32::combined_max(state, part.count, m);
    const float l = attn_f32::combined_sum(
        state, [&](int64_t b) { return part.l[x0 + b]; }, part.count, m);
    T* orow = o + i * a.ldo + h * a.dv;
    for (int64_t c = threadIdx.x; c < a.dv; c += kThreads) {
      bool poison = false;
      for (int64_t b = 0; b < part.count; ++b)
        poison = poison || part.poison[(x0 + b) * a.dv + c] != 0.0f;
      const float acc = attn_f32::combined_sum(
          state, [&](int64_t b) { return part.acc[(x0 + b) * a.dv + c]; }, part.count, m);
      orow[c] = store_f32<T>(finite && !poison ? f32::div(acc, l) : NAN);
    }
  }
}

// Enqueues attention_f32_kernel (and, for a split, the combine) for a validated shape
// (dk + dk2 ≤ kMaxKeyDim, dv ≤ kMaxValueDim); scratch holds
// attn_f32::split_partial_floats(q_len · heads, kv_len, dv) floats.
template <class TQ, class T>
cudaError_t launch_attention_f32_kernel(const AttentionShape& a, float scale, float cap,
                                        const TQ* q, const TQ* q2, const T* k, const T* k2,
                                        const T* v, T* o, float* scratch, cudaStream_t stream) {
  if (a.q_len == 0 || a.heads == 0) return cudaSuccess;
  if (a.dk + a.dk2 > kMaxKeyDim || a.dv > kMaxValueDim) return cudaErrorInvalidValue;
  const int64_t rows = a.q_len * a.heads;
  const attn_f32::KeySplit split = attn_f32::key_split(rows, a.kv_len);
  SplitPartials part;
  part.count = split.count;
  if (split.count > 1) {
    const int64_t n = rows * split.count;
    part.m = scratch;
    part.l = scratch + n;
    part.any = scratch + 2 * n;
    part.acc = scratch + 3 * n;
    part.poison = part.acc + n * a.dv;
  }
  attention_f32_kernel<TQ, T><<<row_grid(rows * split.count), kThreads, 0, stream>>>(
      a, scale, cap, q, q2, k, k2, v, o, split, part);
  if (split.count > 1) {
    attention_combine_kernel<T><<<row_grid(rows), kThreads, 0, stream>>>(a, part, o);
  }
  return cudaGetLastError();
}

}  // namespace lmo::gpu
