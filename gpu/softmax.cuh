// F12 softmax and log-sum-exp, and the fused F14 + F12 + F13 loss with its gradient: one block
// per row (grid-stride over rows). Each row is read three times (maximum, sum of exponentials,
// outputs; the later passes mostly from L2). The maximum propagates NaN; the sums run over the
// fixed tree of common.cuh, no atomics.
//
// softmax, log-sum-exp and the cross-entropy compute in f32 (gpu/softmax_math.h: the terms
// e^{z − m} with CUDA's expf, their f32 sum, p = e/S one f32 division, log Z = m + log S formed in
// double per row; the cross-entropy's soft-capped logits, gradient and loss as fast/softmax.cc
// forms them, and its rows with a NaN or infinite logit in double, in the reference's order of
// operations, so that they get its results: a NaN makes everything NaN, a +inf logit gives
// log Z = +inf and p = NaN, a row of −inf gives log Z = −inf and p = NaN). The gpu backend
// declares `strict` for them (oracle/backends/gpu_recipes.cc), and gpu_softmax_math_test judges
// the same functions on the host.
#pragma once

#include "gpu/common.cuh"
#include "gpu/softmax_math.h"

namespace lmo::gpu {

// The f32 row statistics of gpu/softmax_math.h: m and S, every thread gets both.
template <class T>
__device__ void row_max_sum_f32(const T* zr, int64_t n, float* buf, float& m, float& s) {
  const auto z = [zr](int64_t j) { return widen_f32(zr[j]); };
  m = block_reduce(softmax_math::strided_max(z, n, threadIdx.x, kThreads), buf, MaxOp{});
  s = block_reduce(softmax_math::strided_exp_sum(z, n, threadIdx.x, kThreads, m), buf, SumOp{});
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    softmax_kernel(const T* __restrict__ z, T* __restrict__ p, int64_t rows, int64_t n) {
  __shared__ float buf[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* zr = z + r * n;
    T* pr = p + r * n;
    float m, s;
    row_max_sum_f32(zr, n, buf, m, s);
    for (int64_t j = threadIdx.x; j < n; j += kThreads) {
      pr[j] = store_f32<T>(softmax_math::probability(widen_f32(zr[j]), m, s));
    }
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    logsumexp_kernel(const T* __restrict__ z, float* __restrict__ logz, int64_t rows, int64_t n) {
  __shared__ float buf[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    float m, s;
    row_max_sum_f32(z + r * n, n, buf, m, s);
    if (threadIdx.x == 0) logz[r] = softmax_math::log_sum_exp(m, s);
  }
}

// The fused cross-entropy, gpu/softmax_math.h's per-row math. Rows whose logits are all finite
// compute in f32 (z', the terms and their sum, the non-target gradient); a row with a NaN or
// infinite logit (a block-wide flag) takes the double path, as fast/ does. Every pass forms z'
// again with the same operations, so the same bits (softmax_math's capped and capped_d; nvcc
// once fused cap·tanh into the subtraction of e^{z'_j − m} as fma(cap, tanh, −m), and where z' is
// large, cap 5e25, the row's maximum term became e^{−2^33} = 0 and log Z = −∞:
// KernelCrossEntropy.ExtremeCaps on an H200, 2026-12-04; the products are __fmul_rn and
// __dmul_rn now).
template <class T>
__global__ void __launch_bounds__(kThreads)
    cross_entropy_kernel(const T* __restrict__ z, const int64_t* __restrict__ target, int64_t rows,
                         int64_t n, double lambda, float cap, float* __restrict__ loss,
                         float* __restrict__ logz, T* __restrict__ grad) {
  __shared__ double dbuf[kThreads];
  float* const fbuf = reinterpret_cast<float*>(dbuf);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* zr = z + r * n;
    const int64_t t = target[r];
    float bad = 0.0f;
    for (int64_t j = threadIdx.x; j < n; j += kThreads) {
      if (!softmax_math::finite(widen_f32(zr[j]))) bad = 1.0f;
    }
    bad = block_reduce(bad, fbuf, MaxOp{});
    T* gr = grad == nullptr ? nullptr : grad + r * n;
    if (bad == 0.0f) {
      const auto zc = [zr, cap](int64_t j) { return softmax_math::capped(widen_f32(zr[j]), cap); };
      const float m =
          block_reduce(softmax_math::strided_max(zc, n, threadIdx.x, kThreads), fbuf, MaxOp{});
      const float s = block_reduce(softmax_math::strided_exp_sum(zc, n, threadIdx.x, kThreads, m),
                                   fbuf, SumOp{});
      const softmax_math::CrossEntropyRow row =
          softmax_math::cross_entropy_row(static_cast<double>(m), static_cast<double>(s), lambda);
      const double zt = zc(t);
      if (threadIdx.x == 0) {
        loss[r] = softmax_math::cross_entropy_loss(zt, row, lambda);
        logz[r] = static_cast<float>(row.lse);
      }
      if (gr == nullptr) continue;
      const float k = softmax_math::gradient_factor(row, s);
      for (int64_t j = threadIdx.x; j < n; j += kThreads) {
        const float zj = widen_f32(zr[j]);
        gr[j] = store_f32<T>(j == t ? softmax_math::target_gradient(zt, zj, cap, row)
                                    : softmax_math::gradient(zj, cap, m, k));
      }
      continue;
    }
    // The double path.
    const double cd = cap;
    const auto zd = [zr, cd](int64_t j) {
      return softmax_math::capped_d(static_cast<double>(widen_f32(zr[j])), cd);
    };
    const double m =
        block_reduce(softmax_math::strided_max_d(zd, n, threadIdx.x, kThreads), dbuf, MaxOp{});
    const double s = block_reduce(
        softmax_math::strided_exp_sum_d(zd, n, threadIdx.x, kThreads, m), dbuf, SumOp{});
    const softmax_math::CrossEntropyRow row = softmax_math::cross_entropy_row(m, s, lambda);
    if (threadIdx.x == 0) {
      loss[r] = softmax_math::cross_entropy_loss(zd(t), row, lambda);
      logz[r] = static_cast<float>(row.lse);
    }
    if (gr == nullptr) continue;
    for (int64_t j = threadIdx.x; j < n; j += kThreads) {
      const double zj = widen_f32(zr[j]);
      gr[j] = store_f32<T>(j == t ? softmax_math::target_gradient(zd(j), zj, cap, row)
                                  : softmax_math::gradient_d(zj, cd, row));
    }
  }
}

}  // namespace lmo::gpu
