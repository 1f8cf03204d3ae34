// Gpu-backend adapters (oracle/backends/gpu.cc's op map) for the fp8 ops (oracle/ops/fp8.h) on
// gpu/api_fp8.h, as fast_fp8.cc does for fast/.
#pragma once

#include <vector>

#include "gpu/api.h"
#include "oracle/core/guarded_buffer.h"
#include "oracle/core/op.h"

namespace lmo::oracle {

// fp8_quantize (q, scales), fp8_dequantize (x), fp8_linear (y).
void run_gpu_fp8_quantize(const Op& op, gpu::Storage s, const InputSet& in,
                          std::vector<GuardedBuffer>& out);
void run_gpu_fp8_dequantize(const Op& op, gpu::Storage s, const InputSet& in,
                            std::vector<GuardedBuffer>& out);
void run_gpu_fp8_linear(const Op& op, gpu::Storage s, const InputSet& in,
                        std::vector<GuardedBuffer>& out);

}  // namespace lmo::oracle
