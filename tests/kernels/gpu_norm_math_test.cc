// The GPU norm kernels' per-row math (gpu/norm_math.h) on the host, where no device is needed:
// the very functions gpu/fused_add_rmsnorm.cuh and gpu/norms.cuh run, compiled by the host
// compiler (with -ffp-contract=off, so that every f32 operation rounds once as gpu/f32_ops.h's
// device intrinsics do, and the explicit fmas fuse as __fmaf_rn does), with the kernels'
// reduction order: 256 lanes (gpu/common.cuh's kThreads) each folding its strided elements, then
// block_reduce's halving tree (tests/support/gpu_block.h). No library function is involved (the
// row's reciprocal root is double's IEEE sqrt and division). Against independent truth:
//   - row_scale against the definition (the power of two 2^-e with amax = m·2^e, m in [½, 1),
//     where amax lies outside [2^-40, 2^40]);
//   - the built-in fused_add_rmsnorm, rmsnorm, rmsnorm_gemma and layernorm cases, judged by the
//     oracle's run_and_judge (the exact reference and the policy table) in every storage they
//     list, under the recipe the gpu backend declares for each kernel entry
//     (oracle/backends/gpu_recipes.cc: strict for fused_add_rmsnorm, strict+fma for the others;
//     a case's own recipe with the declared modifiers), and rows whose scale is not 1 (|x| near
//     2^±50), rows with special values;
//   - the inputs of the device's own typed test (tests/kernels/norms_test.cc: realistic rows,
//     a large mean, odd widths and widths around the block size, magnitudes 2^±100, bf16
//     power-of-two weights), judged as that test judges them;
//   - mutations that must be caught: a wrong ε, Gemma's weight γ without the 1 +, LayerNorm's
//     variance in one pass (E[x²] − μ² in f32) at mean 100, a store by truncation. (LayerNorm
//     without its mean's correction c/d is no mutation the strict recipe sees: at mean 1000 the
//     naive f32 run's own error, which the bound doubles, is as large.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "gpu/norm_math.h"
#include "oracle/backends/gpu_recipes.h"
#include "oracle/cases/case.h"
#include "oracle/ops/norms.h"
#include "oracle/ops/registry.h"
#include "tests/support/float_tensors.h"
#include "tests/support/gpu_block.h"
#include "tests/support/norm_rows.h"
#include "tests/support/oracle_harness.h"
#include "tests/support/truncating_store.h"

namespace lmo::gpu {
namespace {

namespace block = lmo::testing::gpu_block;
constexpr int64_t kLanes = block::kLanes;

TEST(GpuNormMath, RowScaleIsThePowerOfTwoThatBringsTheMaximumInRange) {
  EXPECT_EQ(norm_math::row_scale(1.0f), 1.0);
  EXPECT_EQ(norm_math::row_scale(0x1p39f), 1.0);
  EXPECT_EQ(norm_math::row_scale(0x1p-39f), 1.0);
  EXPECT_EQ(norm_math::row_scale(0.0f), 1.0);
  EXPECT_EQ(norm_math::row_scale(INFINITY), 1.0);
  EXPECT_EQ(norm_math::row_scale(NAN), 1.0);
  EXPECT_EQ(norm_math::row_scale(0x1p40f), 0x1p-41);          // 2^40 = 0.5·2^41
  EXPECT_EQ(norm_math::row_scale(0x1.8p100f), 0x1p-101);      // brought to [½, 1)
  EXPECT_EQ(norm_math::row_scale(0x1p-40f), 0x1p39);          // 2^-40 = 0.5·2^-39
  EXPECT_EQ(norm_math::row_scale(0x1p-149f), 0x1p148);        // the least subnormal
  EXPECT_EQ(norm_math::row_scale(3.40282347e38f), 0x1p-128);  // FLT_MAX
}

// The stored values of an input, widened exactly (f32 holds every bf16 and f16 value).
std::vector<float> floats(const oracle::InputSet& in, const char* name) {
  return lmo::testing::floats(in.at(name));
}

using block::tree_sum;

// A fused_add_rmsnorm case evaluated as gpu/fused_add_rmsnorm.cuh does: the f32 values the
// kernel stores (store_outputs rounds them to the storage, nearest-even).
oracle::Outputs<double> fused_as_the_kernel(const oracle::RunContext& ctx) {
  const oracle::NormParams& p = dynamic_cast<const oracle::NormOp&>(ctx.op).params();
  const std::vector<float> x = floats(ctx.in, "x"), r = floats(ctx.in, "residual"),
                           g = floats(ctx.in, "gamma");
  const auto eps = static_cast<float>(p.eps);
  oracle::Outputs<double> out(2);
  for (int64_t row = 0; row < p.rows; ++row) {
    const auto h = [&](int64_t j) {
      const auto i = static_cast<size_t>(row * p.d + j);
      return norm_math::residual_sum(x[i], r[i]);
    };
    float amax = 0.0f;
    for (int64_t j = 0; j < p.d; ++j) amax = std::fmax(amax, norm_math::magnitude(h(j)));
    const double scale = norm_math::row_scale(amax);
    const auto fs = static_cast<float>(scale);
    std::vector<float> lanes(kLanes);
    for (int64_t lane = 0; lane < kLanes; ++lane) {
      lanes[static_cast<size_t>(lane)] = norm_math::strided_sum_squares(h, p.d, lane, kLanes, fs);
    }
    const float inv = norm_math::inv_rms(tree_sum(lanes), p.d, eps, scale);
    for (int64_t j = 0; j < p.d; ++j) {
      out[0].values.push_back(h(j));
      out[1].values.push_back(norm_math::normalized(h(j), fs, inv, g[static_cast<size_t>(j)]));
    }
  }
  return out;
}

TEST(GpuNormMath, BuiltinFusedAddRmsnormCasesPassOnTheHost) {
  int judged = 0;
  for (const oracle::Case& c :
       oracle::load_case_file(oracle::builtin_cases_dir() + "/norms.json")) {
    if (c.op != "fused_add_rmsnorm") continue;
    for (ref::Format f : c.formats) {
      lmo::testing::Harness h(c.source, f);
      const oracle::VerifyRow row = h.judge("gpu-math", fused_as_the_kernel,
                                            oracle::gpu_declared_recipe(oracle::kernel_entry(c.op)));
      EXPECT_TRUE(row.pass) << c.id << " " << ref::format_name(f) << ": " << row.detail;
      ++judged;
    }
  }
  EXPECT_EQ(judged, 5);  // deepseek-v3 in f32, bf16, f16; llama3-8b-vllm in bf16, f16
}

// Rows far from 1 in magnitude, where the power-of-two scale applies (max |h| outside [2^-40,
// 2^40]); ε = 0, so that ε does not swamp mean(h²) at 2^-100, and 2^±50 keeps the naive f32
// run's own squares finite and normal (d·2^100 < 2^128), so that its error, which the policy's
// bound doubles, stays at the level of an f32 kernel's.
TEST(GpuNormMath, ScaledRowsPassOnTheHost) {
  for (const double mag : {0x1p50, 0x1p-50}) {
    for (const char* storage : {"f32", "bf16"}) {
      const nlohmann::json c = {{"id", "fused/scaled"},
                                {"op", "fused_add_rmsnorm"},
                                {"seed", 77},
                                {"formats", {storage}},
                                {"params", {{"rows", 3}, {"d", 1000}, {"eps", 0}}},
                                {"inputs",
                                 {{"x", {{"dist", "normal"}, {"mean", 0}, {"std", mag}}},
                                  {"residual", {{"dist", "normal"}, {"mean", 0}, {"std", mag}}}}}};
      lmo::testing::Harness h(c, *ref::parse_format(storage));
      const oracle::VerifyRow row =
          h.judge("gpu-math", fused_as_the_kernel,
                  oracle::gpu_declared_recipe(oracle::KernelEntry::kFusedAddRmsnorm));
      EXPECT_TRUE(row.pass) << mag << " " << storage << ": " << row.detail;
    }
  }
}

// What a mutant changes in the norms' math.
enum class NormMutation { kNone, kEpsTimes100, kGemmaWithoutOne, kOnePassVariance };

// gpu/norms.cuh's rmsnorm_kernel or layernorm_kernel on rows [rows, d] of stored values
// (widened): the f32 values the kernel stores before its rounding to the storage.
template <NormMutation M = NormMutation::kNone>
std::vector<float> norm_rows(oracle::NormKind kind, const std::vector<float>& x,
                             const std::vector<float>& g, const std::vector<float>& b,
                             int64_t rows, int64_t d, float eps) {
  if (M == NormMutation::kEpsTimes100) eps *= 100.0f;
  std::vector<float> out;
  for (int64_t row = 0; row < rows; ++row) {
    const auto v = [&](int64_t j) { return x[static_cast<size_t>(row * d + j)]; };
    std::vector<float> amax(kLanes), sums(kLanes);
    if (kind == oracle::NormKind::kLayer && M == NormMutation::kOnePassVariance) {
      // E[x²] − μ² in f32 (flax's fast variance), the sums over the kernel's lanes and tree.
      for (int64_t l = 0; l < kLanes; ++l) {
        norm_math::strided_amax_sum(v, d, l, kLanes, 1.0f, amax[size_t(l)], sums[size_t(l)]);
      }
      std::vector<float> squares(kLanes);
      for (int64_t l = 0; l < kLanes; ++l) {
        squares[size_t(l)] = norm_math::strided_sum_squares_fused(v, d, l, kLanes, 1.0f);
      }
      const auto n = static_cast<float>(d);
      const float mu = tree_sum(sums) / n;
      const float var = std::max(0.0f, tree_sum(squares) / n - mu * mu);
      const auto inv = static_cast<float>(1.0 / std::sqrt(static_cast<double>(var) + eps));
      for (int64_t j = 0; j < d; ++j) out.push_back((v(j) - mu) * inv * g[size_t(j)] + b[size_t(j)]);
      continue;
    }
    if (kind == oracle::NormKind::kLayer) {
      for (int64_t l = 0; l < kLanes; ++l) {
        norm_math::strided_amax_sum(v, d, l, kLanes, 1.0f, amax[size_t(l)], sums[size_t(l)]);
      }
      const double scale = norm_math::row_scale(block::tree_max(amax));
      const auto fs = static_cast<float>(scale);
      if (scale != 1.0) {
        for (int64_t l = 0; l < kLanes; ++l) {
          norm_math::strided_amax_sum(v, d, l, kLanes, fs, amax[size_t(l)], sums[size_t(l)]);
        }
      }
      const float mu = norm_math::layernorm_mean(tree_sum(sums), d);
      std::vector<float> cs(kLanes), qs(kLanes);
      for (int64_t l = 0; l < kLanes; ++l) {
        norm_math::strided_deviation_sums(v, d, l, kLanes, fs, mu, cs[size_t(l)], qs[size_t(l)]);
      }
      const norm_math::LayerNormStats st =
          norm_math::layernorm_stats(tree_sum(cs), tree_sum(qs), d, eps, scale);
      for (int64_t j = 0; j < d; ++j) {
        out.push_back(norm_math::layernormed(v(j), fs, mu, st, g[size_t(j)], b[size_t(j)]));
      }
      continue;
    }
    for (int64_t l = 0; l < kLanes; ++l) {
      norm_math::strided_amax_sum_squares(v, d, l, kLanes, amax[size_t(l)], sums[size_t(l)]);
    }
    const double scale = norm_math::row_scale(block::tree_max(amax));
    const auto fs = static_cast<float>(scale);
    if (scale != 1.0) {
      for (int64_t l = 0; l < kLanes; ++l) {
        sums[size_t(l)] = norm_math::strided_sum_squares_fused(v, d, l, kLanes, fs);
      }
    }
    const float inv = norm_math::inv_rms(tree_sum(sums), d, eps, scale);
    const bool gemma = kind == oracle::NormKind::kRmsGemma && M != NormMutation::kGemmaWithoutOne;
    for (int64_t j = 0; j < d; ++j) {
      const float w = gemma ? norm_math::gemma_weight(g[size_t(j)]) : g[size_t(j)];
      out.push_back(norm_math::normalized(v(j), fs, inv, w));
    }
  }
  return out;
}

// An rmsnorm, rmsnorm_gemma or layernorm case evaluated as gpu/norms.cuh does (store_outputs
// rounds the f32 values to the storage, nearest-even, as store_f32 does).
template <NormMutation M = NormMutation::kNone>
oracle::Outputs<double> norm_as_the_kernel(const oracle::RunContext& ctx) {
  const oracle::NormParams& p = dynamic_cast<const oracle::NormOp&>(ctx.op).params();
  const std::vector<float> b =
      p.kind == oracle::NormKind::kLayer ? floats(ctx.in, "beta") : std::vector<float>{};
  const std::vector<float> y = norm_rows<M>(p.kind, floats(ctx.in, "x"), floats(ctx.in, "gamma"),
                                            b, p.rows, p.d, static_cast<float>(p.eps));
  oracle::Outputs<double> out(1);
  out[0].values.assign(y.begin(), y.end());
  return out;
}

std::optional<oracle::Recipe> norm_declared() {
  return oracle::gpu_declared_recipe(oracle::KernelEntry::kNorm);
}

TEST(GpuNormMath, TheBackendDeclaresStrictFmaForTheNorms) {
  ASSERT_TRUE(norm_declared().has_value());
  EXPECT_EQ(norm_declared()->text(), "strict+fma");
}

TEST(GpuNormMath, BuiltinNormCasesPassOnTheHost) {
  int judged = 0;
  for (const oracle::Case& c :
       oracle::load_case_file(oracle::builtin_cases_dir() + "/norms.json")) {
    if (oracle::kernel_entry(c.op) != oracle::KernelEntry::kNorm) continue;
    for (ref::Format f : c.formats) {
      lmo::testing::Harness h(c.source, f);
      const oracle::VerifyRow row = h.judge("gpu-math", norm_as_the_kernel<>, norm_declared());
      EXPECT_TRUE(row.pass) << c.id << " " << ref::format_name(f) << ": " << row.detail;
      EXPECT_EQ(row.recipe, "strict+fma") << c.id;
      ++judged;
    }
  }
  // rmsnorm: llama3-8b (3 formats), llama2-70b (2), tiny-rows (3); rmsnorm_gemma (2);
  // layernorm: gpt2-small (3), offset-mean (2).
  EXPECT_EQ(judged, 15);
}

nlohmann::json norm_case(const char* op, const char* storage, double mean, double std,
                         double eps, nlohmann::json extra_inputs = {}) {
  nlohmann::json c = {{"id", std::string("gpu-math/") + op},
                      {"op", op},
                      {"seed", 91},
                      {"formats", {storage}},
                      {"params", {{"rows", 4}, {"d", 1000}, {"eps", eps}}},
                      {"inputs", {{"x", {{"dist", "normal"}, {"mean", mean}, {"std", std}}}}}};
  for (auto it = extra_inputs.begin(); it != extra_inputs.end(); ++it) {
    c["inputs"]["x"][it.key()] = it.value();
  }
  return c;
}

// Rows far from 1 in magnitude (the power-of-two scale applies), LayerNorm with a large mean,
// and rows with special values; ε = 0 for the scaled rows, as in ScaledRowsPassOnTheHost.
TEST(GpuNormMath, ScaledOffsetAndSpecialRowsPassOnTheHost) {
  nlohmann::json specials = {{{"index", 3}, {"value", "nan"}},
                             {{"index", 1000 + 5}, {"value", "pos_inf"}},
                             {{"index", 2000 + 7}, {"value", "max_finite"}},
                             {{"index", 3000 + 9}, {"value", "min_subnormal"}}};
  for (const char* op : {"rmsnorm", "rmsnorm_gemma", "layernorm"}) {
    for (const char* storage : {"f32", "bf16"}) {
      const nlohmann::json cases[] = {
          norm_case(op, storage, 0, 0x1p50, 0),
          norm_case(op, storage, 0, 0x1p-50, 0),
          norm_case(op, storage, 1000, 1, 1e-5),
          norm_case(op, storage, 0, 1, 1e-5, {{"specials", specials}}),
      };
      for (const nlohmann::json& c : cases) {
        lmo::testing::Harness h(c, *ref::parse_format(storage));
        const oracle::VerifyRow row = h.judge("gpu-math", norm_as_the_kernel<>, norm_declared());
        EXPECT_TRUE(row.pass) << c.dump() << " " << storage << ": " << row.detail;
      }
    }
  }
}

// The norm kernels as a kernel library of gpu/api.h's shape, evaluated on the host: what the
// device's own typed test (tests/kernels/norms_test.cc) calls, so that its inputs and judging
// run here.
struct HostNormKernels {
  static std::vector<float> widened(kernels::Storage s, const void* p, int64_t numel) {
    ref::Tensor t(testdata::dtype_of(s), {numel});
    std::memcpy(t.bytes().data(), p, t.bytes().size());
    return lmo::testing::floats(t);
  }
  static void store(kernels::Storage s, const std::vector<float>& v, void* p) {
    ref::Tensor t(testdata::dtype_of(s), {static_cast<int64_t>(v.size())});
    for (int64_t i = 0; i < t.numel(); ++i) t.set(i, v[static_cast<size_t>(i)]);
    std::memcpy(p, t.bytes().data(), t.bytes().size());
  }
  static void rmsnorm(kernels::Storage s, const void* x, const void* gamma, void* y, int64_t rows,
                      int64_t d, float eps, bool one_plus_gamma) {
    store(s,
          norm_rows(one_plus_gamma ? oracle::NormKind::kRmsGemma : oracle::NormKind::kRms,
                    widened(s, x, rows * d), widened(s, gamma, d), {}, rows, d, eps),
          y);
  }
  static void layernorm(kernels::Storage s, const void* x, const void* gamma, const void* beta,
                        void* y, int64_t rows, int64_t d, float eps) {
    store(s,
          norm_rows(oracle::NormKind::kLayer, widened(s, x, rows * d), widened(s, gamma, d),
                    widened(s, beta, d), rows, d, eps),
          y);
  }
};

using F32 = ref::Sim<ref::Format::f32>;

void run_host(testdata::NormKind k, kernels::Storage s, const testdata::NormInputs& in,
              const testdata::NormCase& c, oracle::GuardedBuffer& y) {
  y.arm();
  if (k == testdata::NormKind::layer) {
    HostNormKernels::layernorm(s, in.x.bytes().data(), in.gamma.bytes().data(),
                               in.beta.bytes().data(), y.data(), c.rows, c.d, c.eps);
  } else {
    HostNormKernels::rmsnorm(s, in.x.bytes().data(), in.gamma.bytes().data(), y.data(), c.rows,
                             c.d, c.eps, k == testdata::NormKind::gemma);
  }
}

// norms_test.cc's check: every storage, the exact values and the naive f32 run on the stored
// inputs, judged with the policy table (the strict naive run, as that test judges).
void check_host(testdata::NormKind k, const testdata::NormCase& c, uint64_t seed) {
  for (kernels::Storage s : kernels::kAllStorages) {
    const testdata::NormInputs in = testdata::norm_inputs(k, c, s, seed);
    const std::vector<ref::mp> exact = testdata::norm_reference_rows<ref::mp>(k, in.x, in, c);
    const std::vector<double> naive =
        testdata::as_doubles(testdata::norm_reference_rows<F32>(k, in.x, in, c));
    oracle::GuardedBuffer y(testdata::dtype_of(s), {c.rows, c.d});
    run_host(k, s, in, c, y);
    testdata::expect_judged(testdata::op_name(k), "", exact, y, naive,
                            std::string(kernels::storage_name(s)) + " rows=" +
                                std::to_string(c.rows) + " d=" + std::to_string(c.d));
  }
}

TEST(GpuNormMath, TheDeviceTestsInputsPassOnTheHost) {
  using testdata::NormKind;
  check_host(NormKind::rms, {4, 4096, 0.0, 1.0, 1e-5f}, 11);
  check_host(NormKind::gemma, {4, 4096, 0.0, 1.0, 1e-6f}, 12);
  check_host(NormKind::layer, {4, 4096, 0.0, 1.0, 1e-5f}, 13);
  check_host(NormKind::layer, {3, 1000, 30.0, 0.5, 1e-5f}, 14);
  check_host(NormKind::rms, {5, 13, 0.0, 1.0, 1e-5f}, 15);
  check_host(NormKind::layer, {5, 1, 0.0, 1.0, 1e-5f}, 16);
  check_host(NormKind::gemma, {2, 77, 0.0, 1.0, 0.0f}, 17);
  check_host(NormKind::gemma, {2, 257, 0.0, 1.0, 0.0f}, 17);
  check_host(NormKind::rms, {3, 256, 0.0, 1.0, 1e-5f}, 18);
  check_host(NormKind::layer, {2, 2048 + 7, 0.0, 2.0, 1e-5f}, 19);
  // Magnitudes whose squares overflow or vanish in f32 (the power-of-two row scale), ε = 0.
  for (int shift : {100, -100}) {
    const testdata::NormCase c{2, 64, 0.0, 1.0, 0.0f};
    const testdata::ScaledNormInputs sc = testdata::scaled_norm_inputs(c, shift, 21);
    for (NormKind k : {NormKind::rms, NormKind::layer}) {
      const std::vector<ref::mp> exact =
          testdata::norm_reference_rows<ref::mp>(k, sc.in.x, sc.in, c);
      const std::vector<double> naive =
          testdata::as_doubles(testdata::norm_reference_rows<F32>(k, sc.unscaled, sc.in, c));
      oracle::GuardedBuffer y(ref::DType::f32, {c.rows, c.d});
      run_host(k, kernels::Storage::f32, sc.in, c, y);
      testdata::expect_judged(testdata::op_name(k), "", exact, y, naive,
                              "2^" + std::to_string(shift));
    }
  }
}

// norms_test.cc's Bf16PowerOfTwoWeightsScaleExactly: bf16 weights of 2^126 against 1 give every
// output with its exponent raised by 126, bit for bit (f32 products by a power of two are exact).
TEST(GpuNormMath, Bf16PowerOfTwoWeightsScaleExactly) {
  using testdata::NormKind;
  constexpr int kShift = 126;
  const auto bf16 = [](float v) {
    uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    return static_cast<uint16_t>(u >> 16);  // exact for the values below
  };
  for (size_t d : {size_t{77}, size_t{4096}}) {
    const int64_t rows = 3;
    std::vector<uint16_t> x(rows * d), one(d, bf16(1.0f)), big(d, bf16(std::ldexp(1.0f, kShift))),
        zero(d, 0);
    for (size_t i = 0; i < x.size(); ++i) {
      const uint32_t h = (static_cast<uint32_t>(i) + 7u) * 2654435761u;
      x[i] = bf16(static_cast<float>(h >> 25) / 64.0f - 1.0f);  // k/64 − 1, exact
    }
    std::vector<uint16_t> y1(x.size()), y2(x.size());
    for (NormKind k : {NormKind::rms, NormKind::gemma, NormKind::layer}) {
      const std::vector<uint16_t>& g1 = k == NormKind::gemma ? zero : one;
      const auto call = [&](const std::vector<uint16_t>& g, std::vector<uint16_t>& y) {
        if (k == NormKind::layer) {
          HostNormKernels::layernorm(kernels::Storage::bf16, x.data(), g.data(), zero.data(),
                                     y.data(), rows, static_cast<int64_t>(d), 1e-5f);
        } else {
          HostNormKernels::rmsnorm(kernels::Storage::bf16, x.data(), g.data(), y.data(), rows,
                                   static_cast<int64_t>(d), 1e-6f, k == NormKind::gemma);
        }
      };
      call(g1, y1);
      call(big, y2);
      for (size_t i = 0; i < x.size(); ++i) {
        const uint16_t want = (y1[i] & 0x7FFF) == 0 ? y1[i] : y1[i] + (kShift << 7);
        ASSERT_EQ(y2[i], want) << testdata::op_name(k) << " d=" << d << " i=" << i;
      }
    }
  }
}

// The correct kernel passes, the mutant fails, both under the declared recipe.
void expect_caught(lmo::testing::Harness& h, const lmo::testing::Kernel& mutant,
                   const std::string& what) {
  const oracle::VerifyRow good = h.judge("gpu-math", norm_as_the_kernel<>, norm_declared());
  EXPECT_TRUE(good.pass) << what << ": " << good.detail;
  const oracle::VerifyRow bad = h.judge("mutant", mutant, norm_declared());
  EXPECT_FALSE(bad.pass) << what << ": the mutant passed, max ulp " << bad.max_ulps;
}

TEST(GpuNormMath, MutationsAreCaught) {
  // A wrong ε where it matters: mean of squares about 1e-6 (rmsnorm/tiny-rows' regime).
  {
    lmo::testing::Harness h(norm_case("rmsnorm", "f32", 0, 1e-3, 1e-6), ref::Format::f32);
    expect_caught(h, norm_as_the_kernel<NormMutation::kEpsTimes100>, "rmsnorm with 100·ε");
  }
  {
    lmo::testing::Harness h(norm_case("layernorm", "bf16", 0, 1e-3, 1e-6), ref::Format::bf16);
    expect_caught(h, norm_as_the_kernel<NormMutation::kEpsTimes100>, "layernorm with 100·ε");
  }
  // Gemma's weight without the 1 +.
  {
    lmo::testing::Harness h(norm_case("rmsnorm_gemma", "bf16", 0, 1, 1e-6), ref::Format::bf16);
    expect_caught(h, norm_as_the_kernel<NormMutation::kGemmaWithoutOne>, "gemma without 1 + γ");
  }
  // LayerNorm's variance as E[x²] − μ² in f32 (one pass), at mean 100: it cancels.
  {
    lmo::testing::Harness h(norm_case("layernorm", "f32", 100, 1, 1e-5), ref::Format::f32);
    expect_caught(h, norm_as_the_kernel<NormMutation::kOnePassVariance>,
                  "layernorm with a one-pass variance");
  }
  // A store by truncation (f32 → bf16 by dropping the low bits).
  for (const char* op : {"rmsnorm", "layernorm"}) {
    lmo::testing::Harness h(norm_case(op, "bf16", 0, 1, 1e-5), ref::Format::bf16);
    expect_caught(
        h,
        [](const oracle::RunContext& ctx) {
          oracle::Outputs<double> o = norm_as_the_kernel<>(ctx);
          for (double& v : o[0].values) v = lmo::testing::truncated_to_bf16(v);
          return o;
        },
        std::string(op) + " stored by truncation");
  }
}

}  // namespace
}  // namespace lmo::gpu
