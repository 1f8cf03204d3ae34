// F12 softmax and log-sum-exp, and the fused F14 + F12 + F13 loss with its gradient: one block
// per row (grid-stride over rows). Each row is read three times (maximum, sum of exponentials,
// outputs; the later passes mostly from L2). The maximum propagates NaN; the sums are in double
// over the fixed tree of common.cuh. Every formula keeps the reference's order of operations
// (reference/softmax.h), so rows with NaN or ±inf logits get its results from IEEE double
// arithmetic: a NaN makes everything NaN, a +inf logit gives log Z = +inf and p = NaN, a row of
// −inf gives log Z = −inf and p = NaN.
#pragma once

#include "gpu/common.cuh"

namespace lmo::gpu {

// The row's maximum m and S = Σ e^{v_j − m} over the values value(j), j < n; every thread gets
// both.
template <class Value>
__device__ void row_max_sum(int64_t n, const Value& value, double* buf, double& m, double& s) {
  double local = -INFINITY;
  for (int64_t j = threadIdx.x; j < n; j += kThreads) local = nan_max(local, value(j));
  m = block_reduce(local, buf, MaxOp{});
  s = 0.0;
  for (int64_t j = threadIdx.x; j < n; j += kThreads) s += exp(value(j) - m);
  s = block_reduce(s, buf, SumOp{});
}

// log Z = m + log S; an infinite m is returned as is (the reference's logsumexp).
__device__ __forceinline__ double lse_of(double m, double s) { return isinf(m) ? m : m + log(s); }

template <class T>
__global__ void __launch_bounds__(kThreads)
    softmax_kernel(const T* __restrict__ z, T* __restrict__ p, int64_t rows, int64_t n) {
  __shared__ double buf[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* zr = z + r * n;
    T* pr = p + r * n;
    double m, s;
    row_max_sum(
        n, [zr](int64_t j) { return widen(zr[j]); }, buf, m, s);
    for (int64_t j = threadIdx.x; j < n; j += kThreads) {
      pr[j] = narrow<T>(exp(widen(zr[j]) - m) / s);
    }
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    logsumexp_kernel(const T* __restrict__ z, float* __restrict__ logz, int64_t rows, int64_t n) {
  __shared__ double buf[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* zr = z + r * n;
    double m, s;
    row_max_sum(
        n, [zr](int64_t j) { return widen(zr[j]); }, buf, m, s);
    if (threadIdx.x == 0) logz[r] = __double2float_rn(lse_of(m, s));
  }
}

// z'_j = cap·tanh(z_j/cap) when cap > 0, else z_j. The product is rounded (__dmul_rn) so that
// every pass recomputes the same z'_j: nvcc would otherwise fuse it into the subtraction of
// e^{z'_j − m} as fma(cap, tanh, −m), the unrounded product minus its own rounding, and where
// z' is large (cap 5e25: an ulp of 2^33) the row's maximum term becomes e^{−2^33} = 0, S = 0
// and log Z = −∞ (KernelCrossEntropy.ExtremeCaps on an H200, 2026-12-04).
__device__ __forceinline__ double capped(double v, double cap) {
  return cap > 0.0 ? __dmul_rn(cap, tanh(v / cap)) : v;
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    cross_entropy_kernel(const T* __restrict__ z, const int64_t* __restrict__ target, int64_t rows,
                         int64_t n, double lambda, double cap, float* __restrict__ loss,
                         float* __restrict__ logz, T* __restrict__ grad) {
  __shared__ double buf[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* zr = z + r * n;
    const int64_t t = target[r];
    double m, s;
    row_max_sum(
        n, [zr, cap](int64_t j) { return capped(widen(zr[j]), cap); }, buf, m, s);
    const double lse = lse_of(m, s);
    if (threadIdx.x == 0) {
      const double ce = -capped(widen(zr[t]), cap) + lse;
      loss[r] = __double2float_rn(ce + lambda * (lse * lse));
      logz[r] = __double2float_rn(lse);
    }
    if (grad == nullptr) continue;
    T* gr = grad + r * n;
    const double coef = (2.0 * lambda) * lse;
    for (int64_t j = threadIdx.x; j < n; j += kThreads) {
      const double zj = widen(zr[j]);
      const double p = exp(capped(zj, cap) - lse);
      const double pm = j == t ? p - 1.0 : p;
      double g = pm + coef * p;
      if (cap > 0.0) {
        // The reference's softcap_grad: 4e/(1 + e)², e = e^{−2|z/cap|} (1 − tanh² cancels).
        const double e = exp(-2.0 * fabs(zj / cap));
        const double one_e = 1.0 + e;
        g = g * ((4.0 * e) / (one_e * one_e));
      }
      gr[j] = narrow<T>(g);
    }
  }
}

}  // namespace lmo::gpu
