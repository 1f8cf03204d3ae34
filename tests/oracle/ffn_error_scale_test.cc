// The FFN error scale S (oracle/ops/ffn_error_scale.h) against independent truth: the exact mp
// result of the reference and two correct f32 kernels, the reference formula in simulated f32 (the
// naive run: every operation rounded once, in index order) and the fast kernels (OpenBLAS
// products in their own order, with FMA, and the fast activations). Over random tiny and small
// compositions of every form and activation, each kernel's error stays below the policy's
// 4·2^-24·S, and S is no empty bound: the largest error reaches a sizeable fraction of it. A
// one-hidden-unit FFN checks S against the sum worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "oracle/backends/fast_adapters.h"
#include "oracle/ops/ffn.h"
#include "oracle/ops/policy_table.h"
#include "tests/support/oracle_harness.h"
#include "tests/support/oracle_sweep.h"

namespace lmo::oracle {
namespace {

using lmo::testing::Draw;
using lmo::testing::Harness;
using nlohmann::json;
using ref::Format;

constexpr double kU = 0x1p-24;  // f32's unit roundoff

// The fast backend's own adapter (the dispatched target) on the case's f32 inputs.
ref::Tensor fast_ffn(const Harness& h) {
  std::vector<GuardedBuffer> out;
  out.emplace_back(ref::DType::f32, h.op().outputs()[0].shape);
  fast_adapters::run_ffn(h.op(), fast::Storage::f32, h.inputs(), out);
  return out[0].tensor();
}

json random_case(Draw& d, int i) {
  const bool gated = d.between(0, 2) == 0;
  json p = {{"tokens", d.between(1, 3)},
            {"d", d.between(1, 48)},
            {"d_ff", d.between(1, 96)},
            {"activation", d.pick<std::string>({"relu", "gelu", "gelu_tanh", "silu"})}};
  if (!gated) p["bias"] = d.between(0, 1) == 1;
  return {{"id", "s/" + std::to_string(i)},
          {"op", gated ? "glu_ffn" : "ffn"},
          {"seed", d.bits()},
          {"formats", {"f32"}},
          {"params", p}};
}

TEST(FfnErrorScale, BoundsTheNaiveAndTheFastF32Kernels) {
  const double multiple = policy_for("ffn").error_scale;
  ASSERT_EQ(multiple, policy_for("glu_ffn").error_scale);
  ASSERT_GT(multiple, 0);
  Draw d("ffn-error-scale");
  double worst_naive = 0, worst_fast = 0;
  std::string where_naive, where_fast;
  for (int i = 0; i < 400; ++i) {
    Harness h(random_case(d, i), Format::f32);
    const Outputs<ref::mp> exact = h.op().exact(h.inputs());
    const Outputs<double> naive = h.op().simulated(Format::f32, h.inputs());
    const ref::Tensor fast = fast_ffn(h);
    const std::vector<double>& s = exact[0].error_scale;
    ASSERT_EQ(s.size(), exact[0].values.size());
    for (size_t k = 0; k < s.size(); ++k) {
      const ref::mp& x = exact[0].values[k];
      const double en = static_cast<double>(abs(ref::mp(naive[0].values[k]) - x));
      const double ef = static_cast<double>(abs(ref::mp(fast.get(static_cast<int64_t>(k))) - x));
      if (s[k] == 0) {  // no rounding reaches it: every correct kernel is exact there
        EXPECT_EQ(en, 0) << h.c().id << " element " << k;
        EXPECT_EQ(ef, 0) << h.c().id << " element " << k;
        continue;
      }
      const double rn = en / (kU * s[k]), rf = ef / (kU * s[k]);
      const std::string where = h.c().id + " element " + std::to_string(k);
      if (rn > worst_naive) {
        worst_naive = rn;
        where_naive = where;
      }
      if (rf > worst_fast) {
        worst_fast = rf;
        where_fast = where;
      }
    }
  }
  std::printf("largest |error|/(u·S): naive f32 %.3f (%s), fast %.3f (%s); the policy allows %g\n",
              worst_naive, where_naive.c_str(), worst_fast, where_fast.c_str(), multiple);
  EXPECT_LT(worst_naive, multiple) << where_naive;
  EXPECT_LT(worst_fast, multiple) << where_fast;
  // Not an empty bound: the errors come within an order of magnitude of it.
  EXPECT_GT(std::max(worst_naive, worst_fast), multiple / 10);
}

// One hidden unit, d = 1, no bias, ReLU: h = x·w1 (one product), a = relu(h), y = a·w2 (one
// product). Where h > 0 the roundings are those of h and of y: S² = (w2·h)² + y² = 2y²; where
// h < 0, a = 0 exactly and so is y: S = 0.
TEST(FfnErrorScale, OneHiddenUnitByHand) {
  int positive = 0, negative = 0;
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    Harness h({{"id", "hand"},
               {"op", "ffn"},
               {"seed", seed},
               {"formats", {"f32"}},
               {"params", {{"tokens", 1}, {"d", 1}, {"d_ff", 1}, {"activation", "relu"}}}},
              Format::f32);
    const double x = h.inputs().values<double>("x")[0];
    const double w1 = h.inputs().values<double>("w1")[0];
    const double w2 = h.inputs().values<double>("w2")[0];
    const std::vector<double> s = h.op().exact(h.inputs())[0].error_scale;
    ASSERT_EQ(s.size(), 1u);
    const double hid = x * w1;
    if (hid > 0) {
      ++positive;
      EXPECT_DOUBLE_EQ(s[0], std::sqrt(2.0) * std::fabs(hid * w2)) << "seed " << seed;
    } else if (hid < 0) {
      ++negative;
      EXPECT_EQ(s[0], 0) << "seed " << seed;
    }
  }
  EXPECT_GT(positive, 0);
  EXPECT_GT(negative, 0);
}

}  // namespace
}  // namespace lmo::oracle
