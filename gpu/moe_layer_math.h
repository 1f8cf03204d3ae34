// The per-element math of the MoE layer kernels (gpu/moe_layer.cuh) as __host__ __device__
// functions, so that a host test (tests/kernels/gpu_moe_layer_math_test.cc) evaluates a layer
// exactly as the kernels do and judges it against the exact reference on a machine without a
// device. Plain C++ when not compiled by nvcc; no CUDA header.
//
// The rounding points of oracle/backends/fast_moe.cc's layer (fast/ffn.h's GLU experts), in f32
// with every product and sum rounded once (gpu/f32_ops.h: the strict recipe):
//   logits = x·W_r, each a dot product in ascending k;
//   the routing of gpu/moe_route.h on the f32 logits (its own arithmetic: double, each gate
//   rounded once to f32);
//   per expert slot (the S shared experts, then the K selected ones in ascending expert order)
//   the hidden layer h = act(x·W) ⊙ (x·V) in f32 (gpu/activation_f32.h), and its output
//   o = h·W2, each dot product in ascending k;
//   y = (x or 0) + Σ_shared o + Σ_selected g·o, added in slot order: the reference's order per
//   element (reference/moe.h's moe_layer), and fast/'s.
#pragma once

#include <cstdint>

#include "gpu/f32_ops.h"

namespace lmo::gpu::moe_layer_math {

// Σ_k a[k]·w[k·ld], k = 0 … n − 1 ascending, in f32, each value widened exactly by widen().
template <class A, class W, class Widen>
LMO_HD float column_dot(const A* a, const W* w, int64_t n, int64_t ld, const Widen& widen) {
  float s = 0.0f;
  for (int64_t k = 0; k < n; ++k) s = f32::add(s, f32::mul(widen(a[k]), widen(w[k * ld])));
  return s;
}

// One hidden value of a GLU expert: act(x·w) ⊙ x·v.
template <class F>
LMO_HD float glu_hidden(const F& act, float xw, float xv) {
  return f32::mul(act(xw), xv);
}

// The running output after one more expert slot: y + g·o (g = 1 for a shared expert: exact).
LMO_HD inline float combine(float y, float gate, float o) { return f32::add(y, f32::mul(gate, o)); }

// The expert slot `slot` of a token: a shared expert (slot < shared) or the (slot − shared)-th
// selected one; returns the expert's index in its own weight stack.
LMO_HD inline int64_t slot_expert(const int64_t* token_experts, int64_t shared, int64_t slot) {
  return slot < shared ? slot : token_experts[slot - shared];
}

}  // namespace lmo::gpu::moe_layer_math
