// The fast backend's fp8 adapters: oracle/backends/fp8_adapters.h on fast/fp8.h.
#include "fast/fp8.h"
#include "oracle/backends/fast_adapters.h"
#include "oracle/backends/fp8_adapters.h"

namespace lmo::oracle::fast_adapters {
namespace {

// fast/fp8.h as the kernel library of oracle/backends/fp8_adapters.h.
struct FastFp8 {
  using Storage = fast::Storage;
  static constexpr auto* fp8_quantize = &fast::fp8_quantize;
  static constexpr auto* fp8_dequantize = &fast::fp8_dequantize;
  static constexpr auto* fp8_linear = &fast::fp8_linear;
};

}  // namespace

void run_fp8_quantize(const Op& op, fast::Storage s, const InputSet& in,
                      std::vector<GuardedBuffer>& out) {
  op_adapters::run_fp8_quantize<FastFp8>(op, s, in, out);
}

void run_fp8_dequantize(const Op& op, fast::Storage s, const InputSet& in,
                        std::vector<GuardedBuffer>& out) {
  op_adapters::run_fp8_dequantize<FastFp8>(op, s, in, out);
}

void run_fp8_linear(const Op& op, fast::Storage s, const InputSet& in,
                    std::vector<GuardedBuffer>& out) {
  op_adapters::run_fp8_linear<FastFp8>(op, s, in, out);
}

}  // namespace lmo::oracle::fast_adapters
