// The oracle's gpu backend on the built-in cases of the ops whose adapters are in
// oracle/backends/gpu_moe.cc (sinusoidal_pe, moe_router, load_balance_loss, aux_free_update),
// oracle/backends/gpu_ffn.cc and oracle/backends/gpu_positional.cc (ffn, glu_ffn, decoder_block,
// learned_position, shaw_logits, t5_bias), judged by the oracle's own run_and_judge (the exact
// reference and the policy table, as `lmoracle verify --backend gpu` does) in every storage
// format each case lists. Needs a CUDA device (skipped with the reason otherwise), except the
// check that the selection covers every op.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "oracle/backends/backend.h"
#include "oracle/core/case.h"
#include "oracle/verify/verify.h"
#include "tests/support/gpu_cases.h"
#include "tests/support/oracle_harness.h"

namespace lmo::oracle {
namespace {

const std::set<std::string> kOps = {
    "sinusoidal_pe", "moe_router",    "load_balance_loss", "aux_free_update", "ffn",
    "glu_ffn",       "decoder_block", "learned_position",  "shaw_logits",     "t5_bias"};

std::vector<std::pair<Case, ref::Format>> gpu_cases() {
  return testdata::gpu_builtin_cases(
      {"ffn.json", "blocks.json", "positional.json", "moe.json", "moe_balance.json"}, kOps);
}

// Runs without a device: the selection above finds cases of every one of the ops.
TEST(GpuBackendCases, BuiltinCasesCoverEveryOp) {
  std::set<std::string> seen;
  for (const auto& [c, f] : gpu_cases()) seen.insert(c.op);
  EXPECT_EQ(seen, kOps);
}

TEST(GpuBackendCases, BuiltinCasesPass) {
  LMO_REQUIRE_GPU();
  std::unique_ptr<Backend> gpu;
  for (std::unique_ptr<Backend>& b : available_backends()) {
    if (b->name() == "gpu") gpu = std::move(b);
  }
  ASSERT_NE(gpu, nullptr);
  for (const auto& [c, f] : gpu_cases()) {
    lmo::testing::Harness h(c.source, f);
    ASSERT_EQ(gpu->unsupported(h.c(), h.op(), f), "") << c.id;
    const VerifyRow row = run_and_judge(h.c(), h.op(), f, *gpu, h.ctx());
    EXPECT_TRUE(row.pass) << c.id << " " << ref::format_name(f) << ": " << row.detail;
  }
}

}  // namespace
}  // namespace lmo::oracle
