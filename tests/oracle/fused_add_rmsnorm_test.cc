// fused_add_rmsnorm: the reference against values computed with mpmath, and kernels written the
// way vLLM and buggy variants write them (plain float, independent of the reference): vLLM's
// order passes under its recipe and fails strict, and two bugs fail under every recipe. The
// kernel libraries (fast/ on every storage and target, gpu/ with a device; tails, an aliased
// residual, repeatability): tests/kernels/fused_add_rmsnorm_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "oracle/cases/case.h"
#include "oracle/check/check.h"
#include "reference/norms.h"
#include "tests/support/fast_cases.h"
#include "tests/support/float_tensors.h"
#include "tests/support/recipe_kernels.h"

namespace lmo::oracle {
namespace {

using testing::float_tensor;
using testing::floats;

using ref::mp;

Case fused_case(ref::Format f, int64_t rows, int64_t d, double eps, uint64_t seed,
                double x_std = 1) {
  return parse_case({{"id", "fused"},
                     {"op", "fused_add_rmsnorm"},
                     {"seed", seed},
                     {"formats", {std::string(ref::format_name(f))}},
                     {"params", {{"rows", rows}, {"d", d}, {"eps", eps}}},
                     {"inputs", {{"x", {{"dist", "normal"}, {"mean", 0}, {"std", x_std}}}}}},
                    "fused_add_rmsnorm_test", "case");
}

// h = 1 + 3, 2 − 1 = (4, 1); mean(h²) = 8.5; y = h/√8.5 (mpmath, 40 digits).
TEST(FusedAddRmsnorm, ReferenceMatchesMpmath) {
  const ref::Mat<mp> x(1, 2, {mp(1), mp(2)}), r(1, 2, {mp(3), mp(-1)});
  const std::vector<mp> gamma = {mp(1), mp(1)};
  const ref::FusedAddNorm<mp> f = ref::fused_add_rmsnorm<mp>(x, r, gamma, mp(0));
  EXPECT_EQ(f.residual.data[0], mp(4));
  EXPECT_EQ(f.residual.data[1], mp(1));
  EXPECT_LT(abs(f.y.data[0] - mp("1.371988681140070699029212441775431312122663")), mp("1e-38"));
  EXPECT_LT(abs(f.y.data[1] - mp("0.3429971702850176747573031104438578280306657")), mp("1e-38"));
  EXPECT_THROW(ref::fused_add_rmsnorm<mp>(x, ref::Mat<mp>(2, 1, {mp(0), mp(0)}), gamma, mp(0)),
               std::invalid_argument);
}

// Plain-float kernels: vLLM's fused_add_rms_norm (the sum rounded to the storage dtype, stored
// and normalized as stored; rsqrtf; x·rms cast to the dtype, times the weight) and two bugs.
enum class Variant { kVllm, kResidualBeforeAdd, kNormOfInput };

std::map<std::string, ref::Tensor> fused_kernel(const Case& c, ref::Format f, Variant v) {
  const InputSet in = reference_inputs(c, f);
  const int64_t rows = c.params["rows"], d = c.params["d"];
  const float eps = static_cast<float>(c.params["eps"].get<double>());
  const std::vector<float> x = floats(in.at("x")), r = floats(in.at("residual")),
                           w = floats(in.at("gamma"));
  std::vector<float> h(x.size()), y(x.size());
  for (size_t i = 0; i < x.size(); ++i) h[i] = testing::round_to(f, x[i] + r[i]);
  // The residual output: the bug stores the old residual instead of the sum.
  const std::vector<float>& stored = v == Variant::kResidualBeforeAdd ? r : h;
  // What the norm reads: the bug normalizes the sublayer output alone.
  const std::vector<float>& normed = v == Variant::kNormOfInput ? x : h;
  for (int64_t row = 0; row < rows; ++row) {
    float ss = 0;
    for (int64_t j = 0; j < d; ++j) ss += normed[size_t(row * d + j)] * normed[size_t(row * d + j)];
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(d) + eps);
    for (int64_t j = 0; j < d; ++j) {
      const float n = testing::round_to(f, normed[size_t(row * d + j)] * inv);
      y[size_t(row * d + j)] = testing::round_to(f, n * w[size_t(j)]);
    }
  }
  std::map<std::string, ref::Tensor> outs;
  outs.emplace("residual", float_tensor(f, {rows, d}, stored));
  outs.emplace("y", float_tensor(f, {rows, d}, y));
  return outs;
}

CheckReport check_under(const Case& c, const std::map<std::string, ref::Tensor>& outs,
                        const std::string& recipe) {
  CheckOptions o;
  o.recipe = parse_recipe(recipe);
  return check_outputs(c, outs, o);
}

TEST(FusedAddRmsnorm, VllmOrderPassesUnderItsRecipeAndBugsFail) {
  const Case c = fused_case(ref::Format::bf16, 8, 1024, 1e-6, 51);
  const auto vllm = fused_kernel(c, ref::Format::bf16, Variant::kVllm);
  const CheckReport ok = check_under(c, vllm, "vllm-fused-add-rmsnorm");
  EXPECT_TRUE(ok.pass) << to_text(ok);
  const CheckReport strict = check_under(c, vllm, "strict");
  EXPECT_FALSE(strict.pass);
  ASSERT_FALSE(strict.diagnosis.empty());
  EXPECT_EQ(strict.diagnosis.front().recipe, "vllm-fused-add-rmsnorm") << to_text(strict);
  EXPECT_TRUE(explains(strict.diagnosis.front())) << to_text(strict);
  for (Variant bug : {Variant::kResidualBeforeAdd, Variant::kNormOfInput}) {
    const auto outs = fused_kernel(c, ref::Format::bf16, bug);
    for (const char* recipe : {"strict", "vllm-fused-add-rmsnorm"}) {
      const CheckReport r = check_under(c, outs, recipe);
      EXPECT_FALSE(r.pass) << recipe;
      // No recipe explains a bug: even the best leaves elements outside its bound.
      ASSERT_FALSE(r.diagnosis.empty());
      EXPECT_FALSE(explains(r.diagnosis.front())) << to_text(r);
    }
  }
}

}  // namespace
}  // namespace lmo::oracle
