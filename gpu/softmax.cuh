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

// Softmax, log-sum-exp and the fused cross-entropy, gpu/softmax_math.h's per-row math, each row
// split into parts of softmax_math::kRowChunk logits, one block per (row, part) in three
// launches (softmax_math.h, "rows split over several blocks"): the parts' maxima, the parts'
// sums at the row's maximum, then the outputs. The cross-entropy's rows whose logits are all finite
// compute in f32 (z', the terms and their sum, the non-target gradient); a row with a NaN or
// infinite logit takes the double path whole, in its first part's block, as fast/ does. Every pass
// forms z' again with the same operations, so the same bits (softmax_math's capped and capped_d;
// nvcc once fused cap·tanh into the subtraction of e^{z'_j − m} as fma(cap, tanh, −m), and where z'
// is large, cap 5e25, the row's maximum term became e^{−2^33} = 0 and log Z = −∞:
// KernelCrossEntropy.ExtremeCaps on an H200, 2026-12-04; the products are __fmul_rn and __dmul_rn
// now). The parts' statistics live in `scratch` [3][rows · parts] floats: maxima, bad flags, sums.
struct RowParts {
  int64_t parts;
  float* max;  // [rows · parts]
  float* bad;  // 1 where the part holds a NaN or infinite logit
  float* sum;  // S_b at the row's maximum

  // Block i of a launch over the (row, part) pairs: its row r, its part b, the part's values
  // [begin, end) within the row, and the row's statistics over all its parts.
  struct Block {
    int64_t r, b, begin, end;
    const float *max, *bad, *sum;  // the row's parts' entries
    __device__ float row_max(int64_t count) const { return softmax_math::parts_max(max, count); }
    __device__ float row_sum(int64_t count) const { return softmax_math::parts_sum(sum, count); }
    __device__ bool row_bad(int64_t count) const {
      return softmax_math::parts_max(bad, count) != 0.0f;
    }
  };
  __device__ Block block(int64_t i, int64_t n) const {
    const int64_t r = i / parts, b = i % parts, row0 = r * parts;
    return {r,
            b,
            softmax_math::part_begin(b),
            softmax_math::part_end(b, n),
            max + row0,
            bad + row0,
            sum + row0};
  }
};

// Launch 1: each part's maximum of z' (z without a cap) and, for the cross-entropy
// (kBadToDouble), its bad flag. Softmax and log-sum-exp take every row through f32 (IEEE gives
// their special rows the reference's results), so their flags stay unread.
template <class T, bool kBadToDouble>
__global__ void __launch_bounds__(kThreads)
    row_part_max_kernel(const T* __restrict__ z, int64_t rows, int64_t n, float cap,
                        RowParts parts) {
  __shared__ float buf[kThreads];
  for (int64_t i = blockIdx.x; i < rows * parts.parts; i += gridDim.x) {
    const RowParts::Block k = parts.block(i, n);
    const int64_t len = k.end - k.begin;
    const T* zp = z + k.r * n + k.begin;
    float bad = 0.0f;
    if (kBadToDouble) {
      for (int64_t j = threadIdx.x; j < len; j += kThreads) {
        if (!softmax_math::finite(widen_f32(zp[j]))) bad = 1.0f;
      }
      bad = block_reduce(bad, buf, MaxOp{});
    }
    const auto zc = [zp, cap](int64_t j) { return softmax_math::capped(widen_f32(zp[j]), cap); };
    const float m =
        block_reduce(softmax_math::strided_max(zc, len, threadIdx.x, kThreads), buf, MaxOp{});
    if (threadIdx.x == 0) {
      parts.bad[i] = bad;
      parts.max[i] = m;
    }
  }
}

// Launch 2: each part's S_b = Σ e^{z'_j − m} at the row's maximum m (for the cross-entropy,
// rows without a bad flag).
template <class T, bool kBadToDouble>
__global__ void __launch_bounds__(kThreads)
    row_part_sum_kernel(const T* __restrict__ z, int64_t rows, int64_t n, float cap,
                        RowParts parts) {
  __shared__ float buf[kThreads];
  for (int64_t i = blockIdx.x; i < rows * parts.parts; i += gridDim.x) {
    const RowParts::Block k = parts.block(i, n);
    if (kBadToDouble && k.row_bad(parts.parts)) continue;  // the double path
    const float m = k.row_max(parts.parts);
    const int64_t len = k.end - k.begin;
    const T* zp = z + k.r * n + k.begin;
    const auto zc = [zp, cap](int64_t j) { return softmax_math::capped(widen_f32(zp[j]), cap); };
    const float s = block_reduce(softmax_math::strided_exp_sum(zc, len, threadIdx.x, kThreads, m),
                                 buf, SumOp{});
    if (threadIdx.x == 0) parts.sum[i] = s;
  }
}

// Launch 3 of softmax: p_j = e^{z_j − m}/S over the part, S from the parts' sums.
template <class T>
__global__ void __launch_bounds__(kThreads)
    softmax_finish_kernel(const T* __restrict__ z, T* __restrict__ p, int64_t rows, int64_t n,
                          RowParts parts) {
  for (int64_t i = blockIdx.x; i < rows * parts.parts; i += gridDim.x) {
    const RowParts::Block k = parts.block(i, n);
    const float m = k.row_max(parts.parts), s = k.row_sum(parts.parts);
    const T* zr = z + k.r * n;
    T* pr = p + k.r * n;
    for (int64_t j = k.begin + threadIdx.x; j < k.end; j += kThreads) {
      pr[j] = store_f32<T>(softmax_math::probability(widen_f32(zr[j]), m, s));
    }
  }
}

// Launch 3 of log-sum-exp: one thread per row.
__global__ void __launch_bounds__(kThreads)
    logsumexp_finish_kernel(float* __restrict__ logz, int64_t rows, RowParts parts) {
  for (int64_t r = blockIdx.x * int64_t{kThreads} + threadIdx.x; r < rows;
       r += int64_t{gridDim.x} * kThreads) {
    logz[r] = softmax_math::log_sum_exp(
        softmax_math::parts_max(parts.max + r * parts.parts, parts.parts),
        softmax_math::parts_sum(parts.sum + r * parts.parts, parts.parts));
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
                                int64_t rows, int64_t n, double lambda, float cap, RowParts parts,
                                float* __restrict__ loss, float* __restrict__ logz,
                                T* __restrict__ grad) {
  __shared__ double dbuf[kThreads];
  for (int64_t i = blockIdx.x; i < rows * parts.parts; i += gridDim.x) {
    const RowParts::Block blk = parts.block(i, n);
    const int64_t r = blk.r;
    const T* zr = z + r * n;
    const int64_t t = target[r];
    T* gr = grad == nullptr ? nullptr : grad + r * n;
    if (blk.row_bad(parts.parts)) {
      if (blk.b == 0) cross_entropy_row_double(zr, t, n, lambda, cap, loss + r, logz + r, gr, dbuf);
      continue;
    }
    const float m = blk.row_max(parts.parts), s = blk.row_sum(parts.parts);
    const softmax_math::CrossEntropyRow row =
        softmax_math::cross_entropy_row(static_cast<double>(m), static_cast<double>(s), lambda);
    const auto zc = [zr, cap](int64_t j) { return softmax_math::capped(widen_f32(zr[j]), cap); };
    const double zt = zc(t);
    if (blk.b == 0 && threadIdx.x == 0) {
      loss[r] = softmax_math::cross_entropy_loss(zt, row, lambda);
      logz[r] = static_cast<float>(row.lse);
    }
    if (gr == nullptr) continue;
    const float k = softmax_math::gradient_factor(row, s);
    for (int64_t j = blk.begin + threadIdx.x; j < blk.end; j += kThreads) {
      const float zj = widen_f32(zr[j]);
      gr[j] = store_f32<T>(j == t ? softmax_math::target_gradient(zt, zj, cap, row)
                                  : softmax_math::gradient(zj, cap, m, k));
    }
  }
}

}  // namespace lmo::gpu
