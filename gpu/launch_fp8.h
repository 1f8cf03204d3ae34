// Launchers of gpu/fp8.cuh on device pointers (gpu/launch.h's conventions: enqueue on `stream`,
// return the launch's cudaError_t, cudaSuccess for an empty problem; no validation: gpu/api_fp8.cc
// does that).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/api_fp8.h"

namespace lmo::gpu {

// The scales of every tile, then q.
cudaError_t launch_fp8_quantize(Storage s, const void* x, uint8_t* q, float* scales,
                                const Fp8Tiling& t, Fp8Format f, bool pow2_scales,
                                double amax_floor, cudaStream_t stream);
cudaError_t launch_fp8_dequantize(Storage s, const uint8_t* q, const float* scales, void* x,
                                  const Fp8Tiling& t, Fp8Format f, cudaStream_t stream);
cudaError_t launch_fp8_linear(Storage s, const uint8_t* a, const float* a_scales, const uint8_t* w,
                              const float* w_scales, void* y, int64_t m, int64_t n, int64_t k,
                              int64_t block, Fp8Format f, cudaStream_t stream);

}  // namespace lmo::gpu
