// Device helpers shared by the kernels: loads that widen a storage value exactly (to double, or
// to f32 for the f32 kernels), stores that round a double result to f32 and then to the storage
// format, or an f32 result once to it (nearest-even: cuda_bf16.h and
// cuda_fp16.h's _rn conversions, which keep NaN a NaN and overflow to ±inf), a NaN-propagating
// maximum, and the fixed-shape block reduction every row kernel uses.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/api.h"

namespace lmo::gpu {

// Threads per block of every kernel. The reductions' tree has this fixed shape, so a row's sum
// is the same for every launch (no atomics, no dependence on the grid size).
constexpr int kThreads = 256;

__device__ __forceinline__ double widen(float v) { return v; }
__device__ __forceinline__ double widen(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ double widen(__half v) { return __half2float(v); }

// widen() as a functor, for the templates of the __host__ __device__ math headers
// (gpu/relative_position.h), which take the widening as an argument.
struct WidenFn {
  template <class T>
  __device__ double operator()(T v) const {
    return widen(v);
  }
};

// v rounded to f32 (the compute format's result), then to the storage type T.
template <class T>
__device__ __forceinline__ T narrow(double v);
template <>
__device__ __forceinline__ float narrow<float>(double v) {
  return __double2float_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 narrow<__nv_bfloat16>(double v) {
  return __float2bfloat16_rn(__double2float_rn(v));
}
template <>
__device__ __forceinline__ __half narrow<__half>(double v) {
  return __float2half_rn(__double2float_rn(v));
}

// The f32 kernels' loads and stores (gpu/f32_ops.h's arithmetic in between): a stored value
// widened exactly to f32, and an f32 result rounded once to the storage type T (nearest-even;
// NaN stays NaN, overflow gives ±inf).
__device__ __forceinline__ float widen_f32(float v) { return v; }
__device__ __forceinline__ float widen_f32(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float widen_f32(__half v) { return __half2float(v); }
// widen_f32() as a functor, for the dot products of gpu/ffn_math.h and gpu/moe_layer_math.h,
// which take the widening as an argument.
struct WidenF32Fn {
  template <class T>
  __device__ float operator()(T v) const {
    return widen_f32(v);
  }
};
template <class T>
__device__ __forceinline__ T store_f32(float v);
template <>
__device__ __forceinline__ float store_f32<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __nv_bfloat16 store_f32<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ __half store_f32<__half>(float v) {
  return __float2half_rn(v);
}

// max with NaN propagation (fmax would drop a NaN): the reference's row_max returns a NaN as
// soon as it meets one.
__device__ __forceinline__ double nan_max(double a, double b) {
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  return a > b ? a : b;
}
__device__ __forceinline__ float nan_max(float a, float b) {
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  return a > b ? a : b;
}

// The tree's operations on doubles, or on floats (the f32 kernels: each sum one IEEE f32
// addition, rounded to nearest-even).
struct SumOp {
  template <class V>
  __device__ V operator()(V a, V b) const {
    return a + b;
  }
};
struct MaxOp {
  template <class V>
  __device__ V operator()(V a, V b) const {
    return nan_max(a, b);
  }
};

// Combines the kThreads values v of the block into one, returned to every thread: a binary tree
// over shared memory, halving the stride each step (a fixed order). `buf` holds kThreads
// values of v's type; the closing barrier lets the caller reuse it for its next reduction.
template <class V, class Op>
__device__ V block_reduce(V v, V* buf, Op op) {
  buf[threadIdx.x] = v;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride) {
      buf[threadIdx.x] = op(buf[threadIdx.x], buf[threadIdx.x + stride]);
    }
    __syncthreads();
  }
  const V r = buf[0];
  __syncthreads();
  return r;
}

// Grid of a kernel that loops over `rows` rows (one block per row, grid-stride beyond the
// limit) or over n elements in blocks of kThreads.
inline unsigned int row_grid(int64_t rows) {
  return static_cast<unsigned int>(rows < (1 << 20) ? rows : (1 << 20));
}
inline unsigned int element_grid(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned int>(blocks < (1 << 20) ? blocks : (1 << 20));
}

// Calls fn(T{}) with T the device type of storage s.
template <class Fn>
cudaError_t with_storage(Storage s, Fn fn) {
  switch (s) {
    case Storage::f32:
      return fn(float{});
    case Storage::bf16:
      return fn(__nv_bfloat16{});
    case Storage::f16:
      return fn(__half{});
  }
  return cudaErrorInvalidValue;
}

}  // namespace lmo::gpu
