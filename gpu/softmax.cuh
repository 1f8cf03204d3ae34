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

// The fused cross-entropy, gpu/softmax_math.h's per-row math, each row split into parts of
// softmax_math::kRowChunk logits, one block per (row, part) in three launches (softmax_math.h,
// "rows split over several blocks"). Rows whose logits are all finite compute in f32 (z', the
// terms and their sum, the non-target gradient); a row with a NaN or infinite logit takes the
// double path whole, in its first part's block, as fast/ does. Every pass forms z' again with the
// same operations, so the same bits (softmax_math's capped and capped_d; nvcc once fused cap·tanh
// into the subtraction of e^{z'_j − m} as fma(cap, tanh, −m), and where z' is large, cap 5e25,
// the row's maximum term became e^{−2^33} = 0 and log Z = −∞: KernelCrossEntropy.ExtremeCaps on
// an H200, 2026-12-04; the products are __fmul_rn and __dmul_rn now).
// The parts' statistics live in `scratch` [3][rows · parts] floats: maxima, bad flags, sums.
struct CrossEntropyParts {
  int64_t parts;
  float* max;  // [rows · parts]
  float* bad;  // 1 where the part holds a NaN or infinite logit
  float* sum;  // S_b at the row's maximum
};

// Launch 1: each part's maximum of z' and its bad flag.
template <class T>
__global__ void __launch_bounds__(kThreads)
    cross_entropy_part_max_kernel(const T* __restrict__ z, int64_t rows, int64_t n, float cap,
                                  CrossEntropyParts parts) {
  __shared__ float buf[kThreads];
  for (int64_t i = blockIdx.x; i < rows * parts.parts; i += gridDim.x) {
    const int64_t r = i / parts.parts, b = i % parts.parts;
    const int64_t begin = softmax_math::part_begin(b), len = softmax_math::part_end(b, n) - begin;
    const T* zp = z + r * n + begin;
    float bad = 0.0f;
    for (int64_t j = threadIdx.x; j < len; j += kThreads) {
      if (!softmax_math::finite(widen_f32(zp[j]))) bad = 1.0f;
    }
    bad = block_reduce(bad, buf, MaxOp{});
    const auto zc = [zp, cap](int64_t j) { return softmax_math::capped(widen_f32(zp[j]), cap); };
    const float m =
        block_reduce(softmax_math::strided_max(zc, len, threadIdx.x, kThreads), buf, MaxOp{});
    if (threadIdx.x == 0) {
      parts.bad[i] = bad;
      parts.max[i] = m;
    }
  }
}

// Launch 2: each part's S_b = Σ e^{z'_j − m} at the row's maximum m (finite rows).
template <class T>
__global__ void __launch_bounds__(kThreads)
    cross_entropy_part_sum_kernel(const T* __restrict__ z, int64_t rows, int64_t n, float cap,
                                  CrossEntropyParts parts) {
  __shared__ float buf[kThreads];
  for (int64_t i = blockIdx.x; i < rows * parts.parts; i += gridDim.x) {
    const int64_t r = i / parts.parts, b = i % parts.parts;
    const int64_t row0 = r * parts.parts;
    if (softmax_math::parts_max(parts.bad + row0, parts.parts) != 0.0f) continue;  // double path
    const float m = softmax_math::parts_max(parts.max + row0, parts.parts);
    const int64_t begin = softmax_math::part_begin(b), len = softmax_math::part_end(b, n) - begin;
    const T* zp = z + r * n + begin;
    const auto zc = [zp, cap](int64_t j) { return softmax_math::capped(widen_f32(zp[j]), cap); };
    const float s = block_reduce(softmax_math::strided_exp_sum(zc, len, threadIdx.x, kThreads, m),
                                 buf, SumOp{});
    if (threadIdx.x == 0) parts.sum[i] = s;
  }
}

// A row with a NaN or infinite logit, whole, in double (the reference's formulas).
template <class T>
__device__ void cross_entropy_row_double(const T* __restrict__ zr, int64_t t, int64_t n,
                                         double lambda, float cap, float* loss, float* logz, T* gr,
                                         double* dbuf) {
  const double cd = cap;
  const auto zd = [zr, cd](int64_t j) {
    return softmax_math::capped_d(static_cast<double>(widen_f32(zr[j])), cd);
  };
  const double m =
      block_reduce(softmax_math::strided_max_d(zd, n, threadIdx.x, kThreads), dbuf, MaxOp{});
  const double s =
      block_reduce(softmax_math::strided_exp_sum_d(zd, n, threadIdx.x, kThreads, m), dbuf, SumOp{});
  const softmax_math::CrossEntropyRow row = softmax_math::cross_entropy_row(m, s, lambda);
  if (threadIdx.x == 0) {
    *loss = softmax_math::cross_entropy_loss(zd(t), row, lambda);
    *logz = static_cast<float>(row.lse);
  }
  if (gr == nullptr) return;
  for (int64_t j = threadIdx.x; j < n; j += kThreads) {
    const double zj = widen_f32(zr[j]);
    gr[j] = store_f32<T>(j == t ? softmax_math::target_gradient(zd(j), zj, cap, row)
                                : softmax_math::gradient_d(zj, cd, row));
  }
}

// Launch 3: S from the parts' sums, the loss and log Z (by the row's first part), each part's
// gradient; a bad row whole in double by its first part's block.
template <class T>
__global__ void __launch_bounds__(kThreads)
    cross_entropy_finish_kernel(const T* __restrict__ z, const int64_t* __restrict__ target,
                                int64_t rows, int64_t n, double lambda, float cap,
                                CrossEntropyParts parts, float* __restrict__ loss,
                                float* __restrict__ logz, T* __restrict__ grad) {
  __shared__ double dbuf[kThreads];
  for (int64_t i = blockIdx.x; i < rows * parts.parts; i += gridDim.x) {
    const int64_t r = i / parts.parts, b = i % parts.parts;
    const int64_t row0 = r * parts.parts;
    const T* zr = z + r * n;
    const int64_t t = target[r];
    T* gr = grad == nullptr ? nullptr : grad + r * n;
    if (softmax_math::parts_max(parts.bad + row0, parts.parts) != 0.0f) {
      if (b == 0) cross_entropy_row_double(zr, t, n, lambda, cap, loss + r, logz + r, gr, dbuf);
      continue;
    }
    const float m = softmax_math::parts_max(parts.max + row0, parts.parts);
    const float s = softmax_math::parts_sum(parts.sum + row0, parts.parts);
    const softmax_math::CrossEntropyRow row =
        softmax_math::cross_entropy_row(static_cast<double>(m), static_cast<double>(s), lambda);
    const auto zc = [zr, cap](int64_t j) { return softmax_math::capped(widen_f32(zr[j]), cap); };
    const double zt = zc(t);
    if (b == 0 && threadIdx.x == 0) {
      loss[r] = softmax_math::cross_entropy_loss(zt, row, lambda);
      logz[r] = static_cast<float>(row.lse);
    }
    if (gr == nullptr) continue;
    const float k = softmax_math::gradient_factor(row, s);
    const int64_t end = softmax_math::part_end(b, n);
    for (int64_t j = softmax_math::part_begin(b) + threadIdx.x; j < end; j += kThreads) {
      const float zj = widen_f32(zr[j]);
      gr[j] = store_f32<T>(j == t ? softmax_math::target_gradient(zt, zj, cap, row)
                                  : softmax_math::gradient(zj, cap, m, k));
    }
  }
}

}  // namespace lmo::gpu
