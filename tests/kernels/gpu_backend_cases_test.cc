// The oracle's gpu backend on the built-in cases of the ops whose kernel entries have their
// adapters in oracle/backends/gpu_moe.cc (the sinusoidal encoding, the router, the balance loss,
// the aux-free update, the whole MoE layer), oracle/backends/gpu_ffn.cc and
// oracle/backends/gpu_positional.cc (the FFNs, the decoder block, learned and relative positions,
// T5's bias), oracle/backends/gpu_fp8.cc (fp8 quantization, dequantization and the block-scaled
// linear layer) and oracle/backends/gpu.cc (fused_add_rmsnorm), judged by the oracle's own
// run_and_judge (the exact reference and the policy table, under each case's recipe, as
// `lmoracle verify --backend gpu` does) in every storage format each case lists, and run twice
// for the same bytes. Needs a CUDA device (skipped with the reason otherwise), except the check
// that the selection covers every entry.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "oracle/backends/backend.h"
#include "oracle/backends/kernel_call.h"
#include "oracle/cases/case.h"
#include "oracle/ops/registry.h"
#include "oracle/verify/verify.h"
#include "tests/support/gpu_cases.h"
#include "tests/support/oracle_harness.h"

namespace lmo::oracle {
namespace {

const std::set<KernelEntry> kEntries = {KernelEntry::kSinusoidalPe,
                                        KernelEntry::kMoeRouter,
                                        KernelEntry::kLoadBalanceLoss,
                                        KernelEntry::kAuxFreeUpdate,
                                        KernelEntry::kFfn,
                                        KernelEntry::kDecoderBlock,
                                        KernelEntry::kLearnedPosition,
                                        KernelEntry::kShawLogits,
                                        KernelEntry::kT5Bias,
                                        KernelEntry::kMoeLayer,
                                        KernelEntry::kFp8Quantize,
                                        KernelEntry::kFp8Dequantize,
                                        KernelEntry::kFp8Linear,
                                        KernelEntry::kFusedAddRmsnorm};

std::vector<std::pair<Case, ref::Format>> gpu_cases() {
  return testdata::gpu_builtin_cases(kEntries);
}

// Runs without a device: every op of these entries has built-in cases in the selection.
TEST(GpuBackendCases, BuiltinCasesCoverEveryOpOfTheEntries) {
  std::set<std::string> seen, expected;
  for (const auto& [c, f] : gpu_cases()) seen.insert(c.op);
  for (const OpInfo& o : op_registry()) {
    if (kEntries.count(o.kernel)) expected.insert(o.name);
  }
  EXPECT_EQ(expected.size(), 15u);  // the fifteen ops the adapters of those files serve
  EXPECT_EQ(seen, expected);
}

TEST(GpuBackendCases, BuiltinCasesPass) {
  LMO_REQUIRE_GPU();
  std::unique_ptr<Backend> gpu = testdata::gpu_backend();
  ASSERT_NE(gpu, nullptr);
  for (const auto& [c, f] : gpu_cases()) {
    lmo::testing::Harness h(c.source, f);
    ASSERT_EQ(gpu->unsupported(h.c(), h.op(), f), "") << c.id;
    const VerifyRow row = run_and_judge(h.c(), h.op(), f, *gpu, h.ctx());
    EXPECT_TRUE(row.pass) << c.id << " " << ref::format_name(f) << ": " << row.detail;
  }
}

// No atomics, fixed sums: a second run of every case writes the same bytes.
TEST(GpuBackendCases, BuiltinCasesAreDeterministic) {
  LMO_REQUIRE_GPU();
  std::unique_ptr<Backend> gpu = testdata::gpu_backend();
  ASSERT_NE(gpu, nullptr);
  for (const auto& [c, f] : gpu_cases()) {
    lmo::testing::Harness h(c.source, f);
    testdata::expect_deterministic(
        [&] {
          std::vector<GuardedBuffer> bufs = armed_outputs(h.op(), f);
          gpu->run(h.ctx(), bufs);
          std::vector<uint8_t> bytes;
          for (const GuardedBuffer& b : bufs) {
            const ref::Tensor t = b.tensor();
            bytes.insert(bytes.end(), t.bytes().begin(), t.bytes().end());
          }
          return bytes;
        },
        c.id + " " + std::string(ref::format_name(f)));
  }
}

}  // namespace
}  // namespace lmo::oracle
