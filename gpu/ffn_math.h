// The per-element math of the FFN and projection kernels (gpu/ffn.cuh), as __host__ __device__
// functions so that a host test (tests/kernels/gpu_ffn_math_test.cc) evaluates an FFN exactly as the
// kernels do and judges it against the reference on a machine without a device. Plain C++ when
// not compiled by nvcc; no CUDA header.
//
// A dot product of stored values (f32, bf16, f16) widened to double: every product is exact (at
// most 24 + 24 significant bits), the sum is rounded once per term in k order, a fixed order.
// Whether the device contracts s + a·b into an fma does not matter: with an exact product the
// fma rounds the same sum.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define LMO_HD __host__ __device__
#else
#define LMO_HD
#endif

namespace lmo::gpu::ffn_math {

// Σ_k a[k]·w[k·ld], k = 0 … n − 1 ascending, each value widened exactly by widen().
template <class A, class W, class Widen>
LMO_HD double column_dot(const A* a, const W* w, int64_t n, int64_t ld, const Widen& widen) {
  double s = 0.0;
  for (int64_t k = 0; k < n; ++k) s += widen(a[k]) * widen(w[k * ld]);
  return s;
}

// One hidden value of the plain FFN with a bias: act(x·w1 + b1). (Without a bias the kernel
// applies act to x·w1 itself: adding +0 would turn a −0 product sum into +0.)
template <class F>
LMO_HD double ffn_hidden(const F& act, double xw1, double b1) {
  return act(xw1 + b1);
}

// One hidden value of the GLU FFN: act(x·w) ⊙ x·v.
template <class F>
LMO_HD double glu_hidden(const F& act, double xw, double xv) {
  return act(xw) * xv;
}

}  // namespace lmo::gpu::ffn_math
