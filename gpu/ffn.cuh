// F03/F04 and F05 feed-forward kernels and the f32 helpers the decoder block composes
// (gpu/api_decoder_block.cc): the hidden layer, a row-by-matrix product with an optional bias,
// the f32 residual addition and the storage conversion.
//
// Rounding points as fast/ffn.h's: the hidden layer h [tokens, d_ff] is f32 whatever the storage
// (each value act(x·w1 + b1), or act(x·w)·(x·v), in f32 by gpu/ffn_math.h and
// gpu/activation_f32.h), and y = h·w2 + b2 is f32, rounded once to the storage. One thread per
// output element runs its whole dot product in k order (gpu/ffn_math.h): no reduction is shared
// between threads, so the results cannot depend on the launch. Consecutive threads take consecutive
// columns, so a warp reads a weight row's consecutive elements and broadcasts the shared row of x
// or h.
#pragma once

#include "gpu/activation_f32.h"
#include "gpu/common.cuh"
#include "gpu/ffn_math.h"

namespace lmo::gpu {

// h[t, c] = act(x[t]·up[:, c] + b1[c]) (b1 may be null), or act(x[t]·up[:, c])·(x[t]·v[:, c])
// when kGated; x [tokens, d], up and v [d, d_ff] in T, h in f32.
template <class T, class F, bool kGated>
__global__ void __launch_bounds__(kThreads)
    ffn_hidden_kernel(const T* __restrict__ x, const T* __restrict__ up, const T* __restrict__ v,
                      const T* __restrict__ b1, float* __restrict__ h, int64_t tokens, int64_t d,
                      int64_t d_ff, F act) {
  const int64_t n = tokens * d_ff;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; e < n; e += step) {
    const int64_t t = e / d_ff, c = e % d_ff;
    const T* xr = x + t * d;
    const float xw = ffn_math::column_dot(xr, up + c, d, d_ff, WidenF32Fn{});
    if constexpr (kGated) {
      h[e] = ffn_math::glu_hidden(act, xw, ffn_math::column_dot(xr, v + c, d, d_ff, WidenF32Fn{}));
    } else {
      h[e] = b1 ? ffn_math::ffn_hidden(act, xw, widen_f32(b1[c])) : act(xw);
    }
  }
}

// out[t, j] = a[t]·w[:, j] (+ bias[j]), a [rows, n] in A, w [n, cols] and bias [cols] in W, out
// in O: the f32 sum rounded once to O.
template <class A, class W, class O>
__global__ void __launch_bounds__(kThreads)
    project_kernel(const A* __restrict__ a, const W* __restrict__ w, const W* __restrict__ bias,
                   O* __restrict__ out, int64_t rows, int64_t n, int64_t cols) {
  const int64_t total = rows * cols;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; e < total;
       e += step) {
    const int64_t t = e / cols, j = e % cols;
    float s = ffn_math::column_dot(a + t * n, w + j, n, cols, WidenF32Fn{});
    if (bias) s = f32::add(s, widen_f32(bias[j]));
    out[e] = store_f32<O>(s);
  }
}

// out[i] = a[i] + b[i] in f32.
__global__ void __launch_bounds__(kThreads)
    add_f32_kernel(const float* __restrict__ a, const float* __restrict__ b,
                   float* __restrict__ out, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += step) {
    out[i] = f32::add(a[i], b[i]);
  }
}

// out[i] = in[i] converted: exact from a storage format to f32, nearest-even from f32 to one.
template <class I, class O>
__global__ void __launch_bounds__(kThreads)
    convert_kernel(const I* __restrict__ in, O* __restrict__ out, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += step) {
    out[i] = narrow<O>(widen(in[i]));
  }
}

}  // namespace lmo::gpu
