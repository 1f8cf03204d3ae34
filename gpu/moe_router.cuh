// MoE kernels: F20 routing (one thread per token running gpu/moe_route.h's TokenRouter over its
// row of logits), F21's per-expert counts and P_i, the F21 loss, and F22's bias update.
//
// Why one thread per token for routing: a token's work is a selection (K rounds over N scores,
// K ≤ 16 in practice) whose every step depends on the previous one, while a batch holds
// thousands of tokens; the thread needs no shared or scratch memory, and its sums (the softmax
// denominator, the gate denominator) run in ascending expert order as the reference's do.
//
// No atomics anywhere: each sum has one fixed order (a sequential loop, or gpu/common.cuh's
// fixed tree), so results are identical run to run.
#pragma once

#include "gpu/common.cuh"
#include "gpu/moe_route.h"

namespace lmo::gpu {

// Storage conversions usable on the host too (TokenRouter's members are __host__ __device__):
// the widening is exact; the narrowing rounds to f32, then to T, nearest-even, as narrow<T>.
__host__ __device__ inline double stored_value(float v) { return v; }
__host__ __device__ inline double stored_value(__nv_bfloat16 v) { return __bfloat162float(v); }
__host__ __device__ inline double stored_value(__half v) { return __half2float(v); }

template <class T>
__host__ __device__ inline T to_stored(double v);
template <>
__host__ __device__ inline float to_stored<float>(double v) {
  return static_cast<float>(v);
}
template <>
__host__ __device__ inline __nv_bfloat16 to_stored<__nv_bfloat16>(double v) {
  return __float2bfloat16_rn(static_cast<float>(v));
}
template <>
__host__ __device__ inline __half to_stored<__half>(double v) {
  return __float2half_rn(static_cast<float>(v));
}

// A token's logits and the shared bias (null: none) as TokenRouter's Row.
template <class T>
struct StoredRow {
  const T* z;
  const T* c;
  __host__ __device__ double logit(int64_t i) const { return stored_value(z[i]); }
  __host__ __device__ bool has_bias() const { return c != nullptr; }
  __host__ __device__ double bias(int64_t i) const { return stored_value(c[i]); }
};

// A token's outputs: experts[k] and gates[k] in T.
template <class T>
struct StoredGates {
  int64_t* experts;
  T* gates;
  __host__ __device__ void operator()(int64_t k, int64_t i, double gate) const {
    experts[k] = i;
    gates[k] = to_stored<T>(gate);
  }
};

template <class T>
__global__ void __launch_bounds__(kThreads)
    moe_route_kernel(const T* __restrict__ logits, const T* __restrict__ bias, int64_t tokens,
                     moe::RouteShape sh, int64_t* __restrict__ experts, T* __restrict__ gates,
                     float* __restrict__ affinities) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; t < tokens;
       t += step) {
    const moe::TokenRouter<StoredRow<T>> router(StoredRow<T>{logits + t * sh.experts, bias}, sh);
    StoredGates<T> out{experts + t * sh.top_k, gates + t * sh.top_k};
    router.emit(out);
    if (affinities) {
      float* a = affinities + t * sh.experts;
      for (int64_t i = 0; i < sh.experts; ++i) a[i] = static_cast<float>(router.affinity(i));
    }
  }
}

// Σ_j s_{j,t} of each token (one block per token, the fixed tree), for normalized P_i.
__global__ void __launch_bounds__(kThreads)
    affinity_totals_kernel(const float* __restrict__ affinities, int64_t tokens, int64_t n,
                           double* __restrict__ totals) {
  __shared__ double buf[kThreads];
  for (int64_t t = blockIdx.x; t < tokens; t += gridDim.x) {
    const float* row = affinities + t * n;
    double s = 0;
    for (int64_t i = threadIdx.x; i < n; i += kThreads) s += row[i];
    s = block_reduce(s, buf, SumOp{});
    if (threadIdx.x == 0) totals[t] = s;
  }
}

// Experts per block of expert_balance_kernel (one per lane of a warp, so that a warp reads 32
// consecutive affinities of a token) and the token slices its warps take.
constexpr int kBalanceExperts = 32;
constexpr int kBalanceSlices = kThreads / kBalanceExperts;

// counts[i] and P_i for a chunk of kBalanceExperts experts per block: warp w sums tokens
// t ≡ w (mod kBalanceSlices) in ascending order, then lane i of warp 0 adds the slices' partial
// sums in slice order. totals: null for affinities taken as they are.
__global__ void __launch_bounds__(kThreads)
    expert_balance_kernel(int64_t tokens, int64_t n, int64_t top_k,
                          const int64_t* __restrict__ experts, const float* __restrict__ affinities,
                          const double* __restrict__ totals, int64_t* __restrict__ counts,
                          float* __restrict__ p) {
  __shared__ double part_p[kThreads];
  __shared__ int64_t part_c[kThreads];
  const int lane = static_cast<int>(threadIdx.x) % kBalanceExperts;
  const int slice = static_cast<int>(threadIdx.x) / kBalanceExperts;
  // The chunk loop's bounds are the same for every thread of the block (the barriers need it).
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * kBalanceExperts; base < n;
       base += static_cast<int64_t>(gridDim.x) * kBalanceExperts) {
    const int64_t i = base + lane;
    double sp = 0;
    int64_t sc = 0;
    if (i < n) {
      for (int64_t t = slice; t < tokens; t += kBalanceSlices) {
        const double a = affinities[t * n + i];
        sp += totals ? a / totals[t] : a;
        const int64_t* sel = experts + t * top_k;
        for (int64_t k = 0; k < top_k; ++k) sc += sel[k] == i ? 1 : 0;
      }
    }
    part_p[threadIdx.x] = sp;
    part_c[threadIdx.x] = sc;
    __syncthreads();
    if (slice == 0 && i < n) {
      double tp = 0;
      int64_t tc = 0;
      for (int w = 0; w < kBalanceSlices; ++w) {
        tp += part_p[w * kBalanceExperts + lane];
        tc += part_c[w * kBalanceExperts + lane];
      }
      p[i] = static_cast<float>(tp / static_cast<double>(tokens));
      counts[i] = tc;
    }
    __syncthreads();
  }
}

// L = α·(N/(K·T))·Σ_i counts_i·P_i in one block (the fixed tree), rounded once to f32.
__global__ void __launch_bounds__(kThreads)
    load_balance_loss_kernel(const int64_t* __restrict__ counts, const float* __restrict__ p,
                             int64_t tokens, int64_t n, int64_t top_k, double alpha,
                             float* __restrict__ loss) {
  __shared__ double buf[kThreads];
  double s = 0;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) {
    s += static_cast<double>(counts[i]) * static_cast<double>(p[i]);
  }
  s = block_reduce(s, buf, SumOp{});
  if (threadIdx.x == 0) {
    const double f_scale =
        static_cast<double>(n) / (static_cast<double>(top_k) * static_cast<double>(tokens));
    *loss = static_cast<float>(alpha * (f_scale * s));
  }
}

// new_bias[i] = c_i ± γ (rounded once to f32, then to T) by the sign of Σ load − n·load_i, or
// c_i bit for bit when they are equal (c + 0 would turn −0 into +0). Elementwise, so new_bias
// may be bias (no __restrict__ on them).
template <class T>
__global__ void __launch_bounds__(kThreads)
    aux_free_update_kernel(const T* bias, const int64_t* __restrict__ load, int64_t n,
                           int64_t total, double gamma, T* new_bias) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += step) {
    const int64_t scaled = n * load[i];
    const T c = bias[i];
    new_bias[i] = scaled == total ? c : narrow<T>(widen(c) + (scaled < total ? gamma : -gamma));
  }
}

}  // namespace lmo::gpu
