// The per-element math of the FFN and projection kernels (gpu/ffn.cuh), as __host__ __device__
// functions so that a host test (tests/kernels/gpu_ffn_math_test.cc) evaluates an FFN exactly as
// the kernels do and judges it against the reference on a machine without a device. Plain C++
// when not compiled by nvcc; no CUDA header.
//
// f32 throughout (gpu/f32_ops.h): a dot product of stored values widened exactly to f32, each
// product fused into the running sum (fma) in k order, a fixed order; the hidden value
// act(x·w1 + b1) or act(x·w)·(x·v) with gpu/activation_f32.h's f32 activations; the sums and
// products between them each rounded once. The dot products are fused, so the gpu backend declares
// `strict+fma` for the FFN.
#pragma once

#include <cstdint>

#include "gpu/f32_ops.h"

namespace lmo::gpu::ffn_math {

// Σ_k a[k]·w[k·ld], k = 0 … n − 1 ascending, each value widened exactly by widen(), each
// product fused into the sum.
template <class A, class W, class Widen>
LMO_HD float column_dot(const A* a, const W* w, int64_t n, int64_t ld, const Widen& widen) {
  float s = 0.0f;
  for (int64_t k = 0; k < n; ++k) s = f32::fma(widen(a[k]), widen(w[k * ld]), s);
  return s;
}

// One hidden value of the plain FFN with a bias: act(x·w1 + b1). (Without a bias the kernel
// applies act to x·w1 itself: adding +0 would turn a −0 product sum into +0.)
template <class F>
LMO_HD float ffn_hidden(const F& act, float xw1, float b1) {
  return act(f32::add(xw1, b1));
}

// One hidden value of the GLU FFN: act(x·w) ⊙ x·v.
template <class F>
LMO_HD float glu_hidden(const F& act, float xw, float xv) {
  return f32::mul(act(xw), xv);
}

}  // namespace lmo::gpu::ffn_math
