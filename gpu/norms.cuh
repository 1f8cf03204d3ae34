// F01 LayerNorm and F02 RMSNorm (+ Gemma's 1 + γ) kernels: one block per row (grid-stride over
// rows), each thread summing a fixed strided subset of the row in double, then the fixed tree of
// common.cuh. Sums in double cannot overflow or vanish for any f32 input (d·FLT_MAX² < DBL_MAX,
// and the smallest square 2^-298 is a normal double), so no row scaling is needed. The per
// element formulas keep the reference's order (reference/norms.h), so NaN and ±inf inputs give
// its results.
#pragma once

#include "gpu/common.cuh"

namespace lmo::gpu {

template <class T>
__global__ void __launch_bounds__(kThreads)
    rmsnorm_kernel(const T* __restrict__ x, const T* __restrict__ gamma, T* __restrict__ y,
                   int64_t rows, int64_t d, double eps, bool one_plus_gamma) {
  __shared__ double buf[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * d;
    T* yr = y + r * d;
    double ss = 0.0;
    for (int64_t i = threadIdx.x; i < d; i += kThreads) {
      const double v = widen(xr[i]);
      ss += v * v;
    }
    ss = block_reduce(ss, buf, SumOp{});
    const double denom = sqrt(ss / static_cast<double>(d) + eps);
    for (int64_t i = threadIdx.x; i < d; i += kThreads) {
      double w = widen(gamma[i]);
      if (one_plus_gamma) w = 1.0 + w;
      yr[i] = narrow<T>(widen(xr[i]) / denom * w);
    }
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    layernorm_kernel(const T* __restrict__ x, const T* __restrict__ gamma,
                     const T* __restrict__ beta, T* __restrict__ y, int64_t rows, int64_t d,
                     double eps) {
  __shared__ double buf[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * d;
    T* yr = y + r * d;
    double s = 0.0;
    for (int64_t i = threadIdx.x; i < d; i += kThreads) s += widen(xr[i]);
    const double mu = block_reduce(s, buf, SumOp{}) / static_cast<double>(d);
    // Second pass: the mean of squared deviations (the two-pass variance: no cancellation).
    double q = 0.0;
    for (int64_t i = threadIdx.x; i < d; i += kThreads) {
      const double dev = widen(xr[i]) - mu;
      q += dev * dev;
    }
    const double var = block_reduce(q, buf, SumOp{}) / static_cast<double>(d);
    const double denom = sqrt(var + eps);
    for (int64_t i = threadIdx.x; i < d; i += kThreads) {
      yr[i] = narrow<T>((widen(xr[i]) - mu) / denom * widen(gamma[i]) + widen(beta[i]));
    }
  }
}

}  // namespace lmo::gpu
