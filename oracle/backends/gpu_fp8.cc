// The gpu backend's adapters of oracle/backends/gpu_fp8.h: the fp8 ops through the shared
// templates of oracle/backends/fp8_adapters.h.
#include "oracle/backends/gpu_fp8.h"

#include "gpu/api_fp8.h"
#include "oracle/backends/fp8_adapters.h"

namespace lmo::oracle {
namespace {

// gpu/api_fp8.h as the kernel library of oracle/backends/fp8_adapters.h.
struct GpuFp8 {
  using Storage = gpu::Storage;
  static constexpr auto* fp8_quantize = &gpu::fp8_quantize;
  static constexpr auto* fp8_dequantize = &gpu::fp8_dequantize;
  static constexpr auto* fp8_linear = &gpu::fp8_linear;
};

}  // namespace

void run_gpu_fp8_quantize(const Op& op, gpu::Storage s, const InputSet& in,
                          std::vector<GuardedBuffer>& out) {
  op_adapters::run_fp8_quantize<GpuFp8>(op, s, in, out);
}

void run_gpu_fp8_dequantize(const Op& op, gpu::Storage s, const InputSet& in,
                            std::vector<GuardedBuffer>& out) {
  op_adapters::run_fp8_dequantize<GpuFp8>(op, s, in, out);
}

void run_gpu_fp8_linear(const Op& op, gpu::Storage s, const InputSet& in,
                        std::vector<GuardedBuffer>& out) {
  op_adapters::run_fp8_linear<GpuFp8>(op, s, in, out);
}

}  // namespace lmo::oracle
