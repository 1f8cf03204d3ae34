// Launchers of gpu/fp8.cuh for the three storage formats.
#include "gpu/fp8.cuh"
#include "gpu/launch_fp8.h"

namespace lmo::gpu {

cudaError_t launch_fp8_quantize(Storage s, const void* x, uint8_t* q, float* scales,
                                const Fp8Tiling& t, Fp8Format f, bool pow2_scales,
                                double amax_floor, cudaStream_t stream) {
  if (t.rows == 0 || t.cols == 0) return cudaSuccess;
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    const auto* xs = static_cast<const T*>(x);
    fp8_scales_kernel<T>
        <<<row_grid(t.scales()), kThreads, 0, stream>>>(xs, t, f, pow2_scales, amax_floor, scales);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    fp8_quantize_kernel<T>
        <<<element_grid(t.rows * t.cols), kThreads, 0, stream>>>(xs, scales, t, f, q);
    return cudaGetLastError();
  });
}

cudaError_t launch_fp8_dequantize(Storage s, const uint8_t* q, const float* scales, void* x,
                                  const Fp8Tiling& t, Fp8Format f, cudaStream_t stream) {
  if (t.rows == 0 || t.cols == 0) return cudaSuccess;
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    fp8_dequantize_kernel<T><<<element_grid(t.rows * t.cols), kThreads, 0, stream>>>(
        q, scales, t, f, static_cast<T*>(x));
    return cudaGetLastError();
  });
}

cudaError_t launch_fp8_linear(Storage s, const uint8_t* a, const float* a_scales, const uint8_t* w,
                              const float* w_scales, void* y, int64_t m, int64_t n, int64_t k,
                              int64_t block, Fp8Format f, cudaStream_t stream) {
  if (m == 0 || n == 0) return cudaSuccess;
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    fp8_linear_kernel<T><<<element_grid(m * n), kThreads, 0, stream>>>(
        a, a_scales, w, w_scales, static_cast<T*>(y), m, n, k, block, f);
    return cudaGetLastError();
  });
}

}  // namespace lmo::gpu
