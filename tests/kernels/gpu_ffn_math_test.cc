// The GPU FFN kernels' per-element math (gpu/ffn_math.h, gpu/activation_f32.h) on the host,
// where no device is needed: the very functions gpu/ffn.cuh runs, compiled by the host compiler
// with -ffp-contract=off (each f32 operation rounded once, as gpu/f32_ops.h's device intrinsics
// round; the explicit fmas fused as __fmaf_rn does), over CUDA's stand-in library and libraries
// 2 ulp off (tests/support/bounded_libm.h). Against independent truth, the oracle's run_and_judge
// (the exact reference and the policy table) under the recipe the gpu backend declares for the
// ffn entry (strict+fma): the built-in ffn and glu_ffn cases evaluated as the kernels evaluate
// them (inputs widened exactly, the hidden layer in f32, the output rounded once to the storage)
// in every storage each case lists; mutants caught: the hidden layer's activation dropped
// (identity), the bias b1 dropped, the hidden layer stored in bf16 while strict keeps it f32.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/activation_f32.h"
#include "gpu/ffn_math.h"
#include "oracle/backends/backend.h"
#include "oracle/backends/gpu_recipes.h"
#include "oracle/cases/case.h"
#include "oracle/ops/ffn.h"
#include "oracle/ops/registry.h"
#include "tests/support/bounded_libm.h"
#include "tests/support/float_tensors.h"
#include "tests/support/oracle_harness.h"
#include "tests/support/truncating_store.h"

namespace lmo::gpu {
namespace {

enum class Mutation { kNone, kNoActivation, kNoBias, kBf16Hidden };

std::optional<oracle::Recipe> declared() {
  return oracle::gpu_declared_recipe(oracle::KernelEntry::kFfn);
}

TEST(GpuFfnMath, TheBackendDeclaresStrictFma) {
  ASSERT_TRUE(declared().has_value());
  EXPECT_EQ(declared()->text(), "strict+fma");
}

// One built-in ffn or glu_ffn case evaluated as gpu/ffn.cuh does over library L: every output the
// f32 value the kernel stores (store_outputs then rounds it to the storage, nearest-even).
template <class L, Mutation M = Mutation::kNone>
oracle::Outputs<double> ffn_as_the_kernels(const oracle::RunContext& ctx) {
  const oracle::FfnParams& p = dynamic_cast<const oracle::FfnOp&>(ctx.op).params();
  // Stored values widened exactly (f32 holds every bf16 and f16 value).
  const auto floats = [&](const char* name) { return lmo::testing::floats(ctx.in.at(name)); };
  const auto widen = [](float v) { return v; };
  const std::vector<float> x = floats("x"), up = floats(p.gated ? "w" : "w1"), w2 = floats("w2");
  const std::vector<float> v = p.gated ? floats("v") : std::vector<float>{};
  const std::vector<float> b1 = p.bias ? floats("b1") : std::vector<float>{};
  const std::vector<float> b2 = p.bias ? floats("b2") : std::vector<float>{};
  std::vector<float> h(static_cast<size_t>(p.tokens * p.d_ff));
  for (int64_t t = 0; t < p.tokens; ++t) {
    for (int64_t c = 0; c < p.d_ff; ++c) {
      const float* xr = x.data() + t * p.d;
      const float xw = ffn_math::column_dot(xr, up.data() + c, p.d, p.d_ff, widen);
      const auto run = [&](auto act) {
        if (p.gated) {
          return ffn_math::glu_hidden(act, xw,
                                      ffn_math::column_dot(xr, v.data() + c, p.d, p.d_ff, widen));
        }
        return p.bias && M != Mutation::kNoBias
                   ? ffn_math::ffn_hidden(act, xw, b1[static_cast<size_t>(c)])
                   : act(xw);
      };
      float hv = 0;
      if (M == Mutation::kNoActivation) {
        hv = run([](float a) { return a; });
      } else {
        switch (p.act) {
          case ref::Activation::kReLU:
            hv = run(f32::ReluFn<L>{});
            break;
          case ref::Activation::kGELU:
            hv = run(f32::GeluFn<L>{});
            break;
          case ref::Activation::kGELUTanh:
            hv = run(f32::GeluTanhFn<L>{});
            break;
          case ref::Activation::kSiLU:
            hv = run(f32::SiluFn<L>{});
            break;
        }
      }
      if (M == Mutation::kBf16Hidden) hv = static_cast<float>(lmo::testing::truncated_to_bf16(hv));
      h[static_cast<size_t>(t * p.d_ff + c)] = hv;
    }
  }
  oracle::Outputs<double> out(1);
  for (int64_t t = 0; t < p.tokens; ++t) {
    for (int64_t j = 0; j < p.d; ++j) {
      float s = ffn_math::column_dot(h.data() + t * p.d_ff, w2.data() + j, p.d_ff, p.d, widen);
      if (p.bias) s = f32::add(s, b2[static_cast<size_t>(j)]);
      out[0].values.push_back(s);
    }
  }
  return out;
}

TEST(GpuFfnMath, BuiltinFfnCasesPassOnTheHost) {
  int judged = 0;
  for (const oracle::Case& c : oracle::load_case_file(oracle::builtin_cases_dir() + "/ffn.json")) {
    for (ref::Format f : c.formats) {
      if (f != ref::Format::f32 && f != ref::Format::bf16 && f != ref::Format::f16) continue;
      lmo::testing::Harness h(c.source, f);
      lmo::testing::for_each_library([&](auto lib, const char* name) {
        const oracle::VerifyRow row = h.judge(name, ffn_as_the_kernels<decltype(lib)>, declared());
        EXPECT_TRUE(row.pass) << c.id << " " << ref::format_name(f) << " over " << name << ": "
                              << row.detail;
        EXPECT_EQ(row.recipe, "strict+fma") << c.id;
      });
      ++judged;
    }
  }
  EXPECT_GE(judged, 9);
}

// Each mutant fails a built-in case it changes, in f32, under the declared recipe.
TEST(GpuFfnMath, MutantsAreCaught) {
  bool biased = false, any = false;
  for (const oracle::Case& c : oracle::load_case_file(oracle::builtin_cases_dir() + "/ffn.json")) {
    lmo::testing::Harness h(c.source, ref::Format::f32);
    const oracle::FfnParams& p = dynamic_cast<const oracle::FfnOp&>(h.op()).params();
    ASSERT_TRUE(h.judge("gpu-math", ffn_as_the_kernels<f32::CudaF32>, declared()).pass) << c.id;
    EXPECT_FALSE(
        h.judge("mutant", ffn_as_the_kernels<f32::CudaF32, Mutation::kNoActivation>, declared())
            .pass)
        << c.id << ": the hidden layer without its activation passed";
    EXPECT_FALSE(
        h.judge("mutant", ffn_as_the_kernels<f32::CudaF32, Mutation::kBf16Hidden>, declared()).pass)
        << c.id << ": a bf16 hidden layer passed";
    if (p.bias && !p.gated) {
      EXPECT_FALSE(
          h.judge("mutant", ffn_as_the_kernels<f32::CudaF32, Mutation::kNoBias>, declared()).pass)
          << c.id << ": the FFN without b1 passed";
      biased = true;
    }
    any = true;
  }
  EXPECT_TRUE(any);
  EXPECT_TRUE(biased);
}

}  // namespace
}  // namespace lmo::gpu
