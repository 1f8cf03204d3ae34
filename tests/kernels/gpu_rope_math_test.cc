// The GPU RoPE kernels' math (gpu/rope_math.h) on the host, where no device is needed: the very
// functions gpu/rope.cuh runs, compiled by the host compiler (with -ffp-contract=off, so that
// every f32 operation rounds once as gpu/f32_ops.h's device intrinsics do and the explicit fmas
// fuse as __fmaf_rn does), fed as gpu/api.cc feeds the kernels (the frequencies in turns,
// kernels/api/turns.h; the factor on cos and sin). Against independent truth:
//   - every built-in rope and rope_table case, in every storage it lists, judged by the oracle's
//     run_and_judge (the exact reference and the policy table) under the recipe the gpu backend
//     declares (oracle/backends/gpu_recipes.cc: strict), and a case at positions near 2^40;
//   - mutations that must be caught: the rotation by −θ (rotate_half's sign), YaRN's attention
//     factor dropped, the pairs of the other layout, a store by truncation. (An angle p·θ_k formed
//     in f32 is no mutation the strict recipe sees: the rope op's f32 run forms it so, and the
//     policy bounds a kernel by that run's error, doubled.)
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/rope_math.h"
#include "kernels/api/rope_frequencies.h"
#include "kernels/api/turns.h"
#include "oracle/backends/gpu_recipes.h"
#include "oracle/backends/rope_adapters.h"
#include "oracle/cases/case.h"
#include "oracle/ops/registry.h"
#include "oracle/ops/rope.h"
#include "tests/support/float_tensors.h"
#include "tests/support/oracle_harness.h"
#include "tests/support/truncating_store.h"

namespace lmo::gpu {
namespace {

enum class RopeMutation {
  kNone,
  kNegativeAngle,
  kNoAttentionFactor,
  kOtherLayout,
  kTruncatedStore
};

// A rope or rope_table case evaluated as gpu/rope.cuh does: the f32 values the kernel stores
// (store_outputs rounds them to the storage, nearest-even), pass-through dimensions copied.
template <RopeMutation M = RopeMutation::kNone>
oracle::Outputs<double> rope_as_the_kernel(const oracle::RunContext& ctx) {
  const oracle::RopeParams& p = dynamic_cast<const oracle::RopeOp&>(ctx.op).params();
  kernels::RopeShape sh = oracle::op_adapters::kernel_rope_shape(p);
  const kernels::RopeLayout layout = sh.layout;
  if (M == RopeMutation::kOtherLayout) {
    sh.layout = layout == kernels::RopeLayout::interleaved ? kernels::RopeLayout::half_split
                                                           : kernels::RopeLayout::interleaved;
  }
  const std::vector<float> x = lmo::testing::floats(ctx.in.at("x"));
  const int64_t width = sh.heads * sh.head_dim, half = sh.rotary_dims / 2;
  std::vector<float> c(static_cast<size_t>(sh.tokens * half)), s(c.size());
  if (p.from_table) {
    const std::vector<float> table = lmo::testing::floats(ctx.in.at("cos_sin"));
    for (int64_t t = 0; t < sh.tokens; ++t) {
      for (int64_t k = 0; k < half; ++k) {
        c[size_t(t * half + k)] = table[size_t(t * sh.rotary_dims + k)];
        s[size_t(t * half + k)] = table[size_t(t * sh.rotary_dims + half + k)];
      }
    }
  } else {
    const kernels::RopeFrequencies freq = oracle::op_adapters::kernel_rope_frequencies(p);
    const kernels::Turns turns = kernels::turns_of(kernels::rope_inv_freq(sh.rotary_dims, freq));
    double factor = static_cast<double>(kernels::rope_cos_sin_factor(freq));
    if (M == RopeMutation::kNoAttentionFactor) factor = 1.0;
    const ref::Tensor& positions = ctx.in.at("positions");
    for (int64_t t = 0; t < sh.tokens; ++t) {
      const double pos = positions.get(t);
      for (int64_t k = 0; k < half; ++k) {
        float& ck = c[size_t(t * half + k)];
        float& sk = s[size_t(t * half + k)];
        rope_math::cos_sin(pos, turns.hi[size_t(k)], turns.lo[size_t(k)], factor, ck, sk);
      }
    }
  }
  oracle::Outputs<double> out(1);
  std::vector<double>& y = out[0].values;
  y.assign(x.begin(), x.end());  // the pass-through dimensions
  for (int64_t t = 0; t < sh.tokens; ++t) {
    for (int64_t h = 0; h < sh.heads; ++h) {
      for (int64_t k = 0; k < half; ++k) {
        int64_t a = 0, b = 0;
        rope_math::pair_offsets(sh, h, k, a, b);
        a += t * width;
        b += t * width;
        const float sk = s[size_t(t * half + k)];
        float ya = 0.0f, yb = 0.0f;
        rope_math::rotate(sh.layout, x[size_t(a)], x[size_t(b)], c[size_t(t * half + k)],
                          M == RopeMutation::kNegativeAngle ? -sk : sk, ya, yb);
        y[size_t(a)] = ya;
        y[size_t(b)] = yb;
      }
    }
  }
  if (M == RopeMutation::kTruncatedStore) lmo::testing::truncate_to_bf16(out);
  return out;
}

std::vector<oracle::Case> rope_cases() {
  std::vector<oracle::Case> cases;
  for (const oracle::Case& c : oracle::load_case_file(oracle::builtin_cases_dir() + "/rope.json")) {
    if (c.op == "rope" || c.op == "rope_table") cases.push_back(c);
  }
  return cases;
}

TEST(GpuRopeMath, GpuBackendDeclaresStrictForRope) {
  const std::optional<oracle::Recipe> r = oracle::gpu_declared_recipe(oracle::KernelEntry::kRope);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->text(), "strict");
}

TEST(GpuRopeMath, BuiltinCasesPassOnTheHost) {
  int judged = 0;
  for (const oracle::Case& c : rope_cases()) {
    for (ref::Format f : c.formats) {
      lmo::testing::Harness h(c.source, f);
      const oracle::VerifyRow row =
          h.judge("gpu-math", rope_as_the_kernel<>,
                  oracle::gpu_declared_recipe(oracle::kernel_entry(c.op)));
      EXPECT_TRUE(row.pass) << c.id << " " << ref::format_name(f) << ": " << row.detail;
      ++judged;
    }
  }
  EXPECT_EQ(judged, 28);  // rope.json: 12 cases, 28 (case, storage) pairs
}

// Positions near 2^40 (a million-token context is 2^20): the whole turns dropped exactly keep
// the angle's error at double's level where an f32 or radian product would not.
TEST(GpuRopeMath, PositionsNear2To40PassOnTheHost) {
  for (const char* storage : {"f32", "bf16"}) {
    const nlohmann::json c = {{"id", "rope/far"},
                              {"op", "rope"},
                              {"seed", 91},
                              {"formats", {storage}},
                              {"params",
                               {{"tokens", 8},
                                {"heads", 2},
                                {"head_dim", 64},
                                {"layout", "interleaved"},
                                {"base", 10000},
                                {"min_position", 1099511000000LL},
                                {"max_position", 1099511627776LL}}}};
    lmo::testing::Harness h(c, *ref::parse_format(storage));
    const oracle::VerifyRow row = h.judge("gpu-math", rope_as_the_kernel<>,
                                          oracle::gpu_declared_recipe(oracle::KernelEntry::kRope));
    EXPECT_TRUE(row.pass) << storage << ": " << row.detail;
  }
}

// Each mutant fails the case named beside it, in f32, under the declared recipe.
template <RopeMutation M>
void expect_caught(const std::string& id) {
  for (const oracle::Case& c : rope_cases()) {
    if (c.id != id) continue;
    lmo::testing::Harness h(c.source, ref::Format::f32);
    const oracle::VerifyRow row = h.judge("gpu-math-mutant", rope_as_the_kernel<M>,
                                          oracle::gpu_declared_recipe(oracle::kernel_entry(c.op)));
    EXPECT_FALSE(row.pass) << id << ": the mutant passed";
    return;
  }
  ADD_FAILURE() << "no built-in case " << id;
}

TEST(GpuRopeMath, MutantsAreCaught) {
  expect_caught<RopeMutation::kNegativeAngle>("rope/llama3.1-405b-1m");
  expect_caught<RopeMutation::kNegativeAngle>("rope-table/deepseek-v3-yarn-hf-mscale");
  expect_caught<RopeMutation::kOtherLayout>("rope/llama2-70b-interleaved");
  expect_caught<RopeMutation::kOtherLayout>("rope-table/llama3.1-405b-128k");
  expect_caught<RopeMutation::kTruncatedStore>("rope/llama3-8b");
  expect_caught<RopeMutation::kTruncatedStore>("rope-table/llama2-70b-storage-table");
}

// YaRN's attention factor is on the rope op's cos and sin when the case asks for it: a yarn case
// with the factor, judged against the kernel that forgets it.
TEST(GpuRopeMath, DroppedAttentionFactorIsCaught) {
  const nlohmann::json c = {{"id", "rope/yarn-mscale"},
                            {"op", "rope"},
                            {"seed", 5},
                            {"formats", {"f32"}},
                            {"params",
                             {{"tokens", 8},
                              {"heads", 1},
                              {"head_dim", 64},
                              {"layout", "interleaved"},
                              {"base", 10000},
                              {"max_position", 131072},
                              {"scaling", "yarn"},
                              {"factor", 40},
                              {"original_context", 4096},
                              {"attention_factor", true}}}};
  lmo::testing::Harness h(c, ref::Format::f32);
  const std::optional<oracle::Recipe> strict =
      oracle::gpu_declared_recipe(oracle::KernelEntry::kRope);
  EXPECT_TRUE(h.judge("gpu-math", rope_as_the_kernel<>, strict).pass);
  EXPECT_FALSE(
      h.judge("gpu-math-mutant", rope_as_the_kernel<RopeMutation::kNoAttentionFactor>, strict)
          .pass);
}

}  // namespace
}  // namespace lmo::gpu
