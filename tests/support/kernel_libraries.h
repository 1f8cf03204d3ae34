// The kernel libraries a typed kernel test runs over, one type each: the Highway kernels (fast/)
// and the CUDA kernels (gpu/). Both implement the same contract (kernels/api/: one Storage, the
// same signatures), so one test source states a family's cases once; a library's own checks
// (every Highway target, thread-count invariance; one device, run-twice determinism) come from
// its type. A source is built once per library (lmo_kernel_test in tests/CMakeLists.txt sets
// LMO_TESTED_KERNELS), which keeps the binaries the sanitizer tree (fast only, no CUDA) and the
// GPU machine's bundle (gpu_*_test) carry; a mismatch between the two libraries' signatures fails
// the build of the second.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fast/activations.h"
#include "fast/attention.h"
#include "fast/cross_entropy.h"
#include "fast/ffn.h"
#include "fast/fp8.h"
#include "fast/glu.h"
#include "fast/learned_position.h"
#include "fast/mla_decode.h"
#include "fast/moe_router.h"
#include "fast/norms.h"
#include "fast/rope.h"
#include "fast/shaw_logits.h"
#include "fast/sinusoidal_pe.h"
#include "fast/softcap.h"
#include "fast/softmax.h"
#include "fast/t5_bias.h"
#include "tests/support/fast_cases.h"
#ifdef LMO_HAVE_CUDA
#include "gpu/api.h"
#include "tests/support/gpu_cases.h"
#endif

namespace lmo::testdata {

struct FastKernels {
  // Empty: the Highway kernels run on any CPU (their baseline target at least).
  static std::string unavailable() { return {}; }
  // The call once per Highway target this CPU supports, forced (fast/target_scope.h).
  static void for_each_variant(const std::function<void(const std::string&)>& fn) {
    for_each_target(fn);
  }
  // Identical bytes for 1, 2 and 7 threads.
  static void expect_repeatable(const std::function<std::vector<uint8_t>()>& run,
                                const std::string& where) {
    expect_thread_invariant(run, where);
  }
  static constexpr auto& rmsnorm = fast::rmsnorm;
  static constexpr auto& layernorm = fast::layernorm;
  static constexpr auto& fused_add_rmsnorm = fast::fused_add_rmsnorm;
  static constexpr auto& softmax = fast::softmax;
  static constexpr auto& logsumexp = fast::logsumexp;
  static constexpr auto& cross_entropy = fast::cross_entropy;
  static constexpr auto& activation = fast::activation;
  static constexpr auto& glu_gate = fast::glu_gate;
  static constexpr auto& softcap = fast::softcap;
  static constexpr auto& ffn = fast::ffn;
  static constexpr auto& glu_ffn = fast::glu_ffn;
  static constexpr auto& attention = fast::attention;
  static constexpr auto& attention_decode = fast::attention_decode;
  static constexpr auto& mla_decode = fast::mla_decode;
  // The MoE router's, also as a kernel library of oracle/backends/moe_adapters.h.
  using Storage = fast::Storage;
  using RouterConfig = fast::RouterConfig;
  static constexpr auto& moe_router = fast::moe_router;
  static constexpr auto& expert_balance = fast::expert_balance;
  static constexpr auto& load_balance_loss = fast::load_balance_loss;
  static constexpr auto& aux_free_update = fast::aux_free_update;
  // The positional kernels', also as a kernel library of oracle/backends/positional_adapters.h.
  static constexpr auto& sinusoidal_pe = fast::sinusoidal_pe;
  static constexpr auto& learned_position = fast::learned_position;
  static constexpr auto& shaw_logits = fast::shaw_logits;
  static constexpr auto& t5_bias = fast::t5_bias;
  // RoPE's, also as a kernel library of oracle/backends/rope_adapters.h.
  static constexpr auto& rope = fast::rope;
  static constexpr auto& rope_table = fast::rope_table;
  static constexpr auto& fp8_quantize = fast::fp8_quantize;
  static constexpr auto& fp8_dequantize = fast::fp8_dequantize;
  static constexpr auto& fp8_linear = fast::fp8_linear;
};

#ifdef LMO_HAVE_CUDA
struct GpuKernels {
  // query_device()'s reason when no CUDA device can run the kernels.
  static std::string unavailable() {
    const gpu::DeviceInfo dev = gpu::query_device();
    return dev.present ? std::string() : "no usable CUDA device: " + dev.reason;
  }
  static void for_each_variant(const std::function<void(const std::string&)>& fn) { fn("gpu"); }
  // No atomics and fixed reduction trees: a second run writes the same bytes.
  static void expect_repeatable(const std::function<std::vector<uint8_t>()>& run,
                                const std::string& where) {
    expect_deterministic(run, where);
  }
  static constexpr auto& rmsnorm = gpu::rmsnorm;
  static constexpr auto& layernorm = gpu::layernorm;
  static constexpr auto& fused_add_rmsnorm = gpu::fused_add_rmsnorm;
  static constexpr auto& softmax = gpu::softmax;
  static constexpr auto& logsumexp = gpu::logsumexp;
  static constexpr auto& cross_entropy = gpu::cross_entropy;
  static constexpr auto& activation = gpu::activation;
  static constexpr auto& glu_gate = gpu::glu_gate;
  static constexpr auto& softcap = gpu::softcap;
  static constexpr auto& ffn = gpu::ffn;
  static constexpr auto& glu_ffn = gpu::glu_ffn;
  static constexpr auto& attention = gpu::attention;
  static constexpr auto& attention_decode = gpu::attention_decode;
  static constexpr auto& mla_decode = gpu::mla_decode;
  using Storage = gpu::Storage;
  using RouterConfig = gpu::RouterConfig;
  static constexpr auto& moe_router = gpu::moe_router;
  static constexpr auto& expert_balance = gpu::expert_balance;
  static constexpr auto& load_balance_loss = gpu::load_balance_loss;
  static constexpr auto& aux_free_update = gpu::aux_free_update;
  static constexpr auto& sinusoidal_pe = gpu::sinusoidal_pe;
  static constexpr auto& learned_position = gpu::learned_position;
  static constexpr auto& shaw_logits = gpu::shaw_logits;
  static constexpr auto& t5_bias = gpu::t5_bias;
  static constexpr auto& rope = gpu::rope;
  static constexpr auto& rope_table = gpu::rope_table;
  static constexpr auto& fp8_quantize = gpu::fp8_quantize;
  static constexpr auto& fp8_dequantize = gpu::fp8_dequantize;
  static constexpr auto& fp8_linear = gpu::fp8_linear;
};
#endif

// The library this binary tests (tests/CMakeLists.txt: lmo_kernel_test).
using TestedKernels = ::testing::Types<LMO_TESTED_KERNELS>;

}  // namespace lmo::testdata

// Skips the current test (returning from it) when the library cannot run here.
#define LMO_REQUIRE_KERNELS(Lib)                    \
  do {                                              \
    const std::string lmo_why = Lib::unavailable(); \
    if (!lmo_why.empty()) GTEST_SKIP() << lmo_why;  \
  } while (0)
