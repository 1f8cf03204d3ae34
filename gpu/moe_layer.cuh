// The whole F20 MoE layer in f32 (gpu/moe_layer_math.h's rounding points, oracle/backends/
// fast_moe.cc's order): the router logits, gpu/moe_router.cuh's routing kernel on them, the GLU
// experts' hidden layer, then each output element's expert outputs and their gate-weighted sum.
// Each thread computes whole dot products in ascending k and owns its output element: no sum is
// shared between threads, no atomics, so the bits do not depend on the launch or the run.
// Consecutive threads take consecutive columns, so a warp reads a weight row's consecutive
// elements and broadcasts the shared row of x or h.
#pragma once

#include "gpu/activation_f32.h"
#include "gpu/common.cuh"
#include "gpu/moe_layer_math.h"

namespace lmo::gpu {

// logits [tokens, n] = x [tokens, d] · router [d, n], in f32.
template <class T>
__global__ void __launch_bounds__(kThreads)
    moe_logits_kernel(const T* __restrict__ x, const T* __restrict__ router,
                      float* __restrict__ logits, int64_t tokens, int64_t d, int64_t n) {
  const int64_t total = tokens * n;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; e < total;
       e += step) {
    const int64_t t = e / n, i = e % n;
    logits[e] = moe_layer_math::column_dot(x + t * d, router + i, d, n, WidenF32Fn{});
  }
}

// The shapes and weights of one layer (device pointers; ws, vs, w2s null without shared experts).
template <class T>
struct MoeLayerArgs {
  const T *x, *w, *v, *w2, *ws, *vs, *w2s;
  const int64_t* experts;  // [tokens, top_k], ascending per token
  const float* gates;      // [tokens, top_k], routed_scale included
  int64_t tokens, d, d_ff, top_k, shared;
  bool residual;
};

// h [tokens, shared + top_k, d_ff]: slot s of token t is its s-th expert
// (moe_layer_math::slot_expert), h = act(x·W) ⊙ (x·V) in f32.
template <class T, class F>
__global__ void __launch_bounds__(kThreads)
    moe_hidden_kernel(MoeLayerArgs<T> a, F act, float* __restrict__ h) {
  const int64_t slots = a.shared + a.top_k;
  const int64_t total = a.tokens * slots * a.d_ff;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; e < total;
       e += step) {
    const int64_t c = e % a.d_ff, slot = e / a.d_ff % slots, t = e / (a.d_ff * slots);
    const int64_t ex = moe_layer_math::slot_expert(a.experts + t * a.top_k, a.shared, slot);
    const bool sh = slot < a.shared;
    const int64_t off = ex * a.d * a.d_ff + c;
    const T* xr = a.x + t * a.d;
    const float xw =
        moe_layer_math::column_dot(xr, (sh ? a.ws : a.w) + off, a.d, a.d_ff, WidenF32Fn{});
    const float xv =
        moe_layer_math::column_dot(xr, (sh ? a.vs : a.v) + off, a.d, a.d_ff, WidenF32Fn{});
    h[e] = moe_layer_math::glu_hidden(act, xw, xv);
  }
}

// y [tokens, d]: (x or 0), then for each slot in order its output h·W2 times its gate (1 for a
// shared expert) added in f32, rounded once to T.
template <class T>
__global__ void __launch_bounds__(kThreads)
    moe_combine_kernel(MoeLayerArgs<T> a, const float* __restrict__ h, T* __restrict__ y) {
  const int64_t slots = a.shared + a.top_k;
  const int64_t total = a.tokens * a.d;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; e < total;
       e += step) {
    const int64_t t = e / a.d, j = e % a.d;
    float acc = a.residual ? widen_f32(a.x[e]) : 0.0f;
    for (int64_t slot = 0; slot < slots; ++slot) {
      const int64_t ex = moe_layer_math::slot_expert(a.experts + t * a.top_k, a.shared, slot);
      const bool sh = slot < a.shared;
      const float o = moe_layer_math::column_dot(h + (t * slots + slot) * a.d_ff,
                                                 (sh ? a.w2s : a.w2) + ex * a.d_ff * a.d + j,
                                                 a.d_ff, a.d, WidenF32Fn{});
      acc = moe_layer_math::combine(acc, sh ? 1.0f : a.gates[t * a.top_k + slot - a.shared], o);
    }
    y[e] = store_f32<T>(acc);
  }
}

}  // namespace lmo::gpu
