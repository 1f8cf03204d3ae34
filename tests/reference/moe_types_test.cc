// F20-F22 on all nine number types: routing, layer, load-balance loss and bias update run and
// return finite values; on every type the selection equals the mp selection (the inputs keep the
// runners-up far apart), and gates stay within a stated rounding bound of mp.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "tests/support/typed_numbers.h"
#include "reference/moe.h"

namespace lmo::ref {
namespace {

using testdata::to_type;
using testdata::unit_roundoff;

template <class T>
class MoeTypes : public ::testing::Test {};

TYPED_TEST_SUITE(MoeTypes, testdata::AllNumberTypes);

// Exact in every format here (fp8 E5M2 has 2 fraction bits: 3, 1.5·2, 1.75·4 … all fit).
const std::vector<double> kLogits = {3, -3, 0, 2, -2, 1, -1, -4};
const std::vector<double> kBias = {0, 0, 0.25, 0, 0, 0, 0, 0};

// A relative error bound after n roundings that may compound in a ratio: ((1+u)/(1−u))^n − 1.
template <class T>
mp rounding_bound(int n) {
  const mp u = unit_roundoff<T>();
  return pow((1 + u) / (1 - u), n) - 1;
}

template <class T>
RouterConfig<T> grouped_config() {
  RouterConfig<T> c;
  c.top_k = 3;
  c.n_group = 4;
  c.topk_group = 2;
  c.routed_scale = T(2.5);
  return c;
}

template <class T>
void expect_finite(const std::vector<T>& v) {
  using std::isfinite;
  for (const T& x : v) EXPECT_TRUE(isfinite(x)) << to_mp(x);
}

TYPED_TEST(MoeTypes, SigmoidGroupRoutingSelectsAsMpWithBoundedGates) {
  using T = TypeParam;
  const Routing<mp> want = route<mp>(to_type<mp>(kLogits), to_type<mp>(kBias), grouped_config<mp>());
  const Routing<T> got = route<T>(to_type<T>(kLogits), to_type<T>(kBias), grouped_config<T>());
  EXPECT_EQ(got.groups, want.groups);
  EXPECT_EQ(got.experts, want.experts);
  expect_finite(got.gates);
  expect_finite(got.affinities);
  // Gate: sigmoid (exp, 1 + e, divide: 3 roundings) in the numerator and in each of the K = 3
  // denominator terms, K − 1 = 2 additions, the division and the ×2.5: at most 3 + 3 + 2 + 2
  // = 10 roundings in a ratio. For bf16 that is ≈ 0.08; for fp8 it is loose (≈ 1.5 for E4M3),
  // which is what a naive fp8 kernel can be off by.
  const mp bound = rounding_bound<T>(10);
  for (size_t k = 0; k < want.gates.size(); ++k) {
    EXPECT_LE(abs(to_mp(got.gates[k]) - want.gates[k]) / want.gates[k], bound) << k;
  }
}

TYPED_TEST(MoeTypes, SoftmaxRoutingSelectsAsMpWithBoundedGates) {
  using T = TypeParam;
  RouterConfig<mp> cm;
  cm.top_k = 2;
  cm.score = RouterScore::kSoftmax;
  RouterConfig<T> ct;
  ct.top_k = 2;
  ct.score = RouterScore::kSoftmax;
  const Routing<mp> want = route<mp>(to_type<mp>(kLogits), {}, cm);
  const Routing<T> got = route<T>(to_type<T>(kLogits), {}, ct);
  EXPECT_EQ(got.experts, want.experts);
  expect_finite(got.gates);
  // Softmax: z − max exact (small integers), exp (1), the N − 1 = 7 additions of the
  // denominator, the division (1); renormalization: 1 addition, 1 division; ×1: at most
  // 1 + 7 + 1 + 1 + 1 + 1 + 2·(1) ≤ 16 roundings in a ratio.
  const mp bound = rounding_bound<T>(16);
  for (size_t k = 0; k < want.gates.size(); ++k) {
    EXPECT_LE(abs(to_mp(got.gates[k]) - want.gates[k]) / want.gates[k], bound) << k;
  }
}

TYPED_TEST(MoeTypes, LayerLossAndBiasUpdateRunAndStayFinite) {
  using T = TypeParam;
  const Routing<T> r = route<T>(to_type<T>(kLogits), to_type<T>(kBias), grouped_config<T>());
  const std::vector<T> u = to_type<T>({0.5, -0.25, 1.0, 0.75});
  std::vector<ExpertFn<T>> routed;
  for (int i = 0; i < 8; ++i) {
    routed.push_back([i](std::span<const T> x) {
      std::vector<T> y;
      for (const T& v : x) y.push_back(T(v * T(0.125 * (i + 1))));
      return y;
    });
  }
  const std::vector<ExpertFn<T>> shared = {routed[0]};
  const std::vector<T> h = moe_layer<T>(u, r, shared, routed);
  expect_finite(h);
  const Routing<mp> rm = route<mp>(to_type<mp>(kLogits), to_type<mp>(kBias), grouped_config<mp>());
  std::vector<ExpertFn<mp>> routed_mp;
  for (int i = 0; i < 8; ++i) {
    routed_mp.push_back([i](std::span<const mp> x) {
      std::vector<mp> y;
      for (const mp& v : x) y.push_back(v * mp(0.125 * (i + 1)));
      return y;
    });
  }
  const std::vector<ExpertFn<mp>> shared_mp = {routed_mp[0]};
  const std::vector<mp> hm =
      moe_layer<mp>(to_type<mp>({0.5, -0.25, 1.0, 0.75}), rm, shared_mp, routed_mp);
  // Every term of h' is positive where u_j > 0 (negative where u_j < 0): no cancellation, so the
  // relative error is at most that of the gates (10 roundings) plus the expert's multiply, the
  // gate product and the 5 additions: 17 roundings.
  const mp bound = rounding_bound<T>(17);
  for (size_t j = 0; j < hm.size(); ++j) {
    EXPECT_LE(abs(to_mp(h[j]) - hm[j]) / abs(hm[j]), bound) << j;
  }

  std::vector<Routing<T>> routes = {
      r, route<T>(to_type<T>({-3, 3, 2, 0, 1, -2, -4, -1}), {}, grouped_config<T>())};
  const BalanceLoss<T> l = load_balance_loss<T>(routes, constant<T>("0.001"));
  using std::isfinite;
  EXPECT_TRUE(isfinite(l.loss));
  EXPECT_GT(to_mp(l.loss), 0);
  expect_finite(l.f);
  expect_finite(l.p);

  Mat<T> logits(2, 8);
  const std::vector<T> row0 = to_type<T>(kLogits), row1 = to_type<T>({-3, 3, 2, 0, 1, -2, -4, -1});
  std::copy(row0.begin(), row0.end(), logits.row(0).begin());
  std::copy(row1.begin(), row1.end(), logits.row(1).begin());
  const auto batch = route_tokens<T>(logits, {}, grouped_config<T>());
  EXPECT_EQ(batch[1].experts, routes[1].experts);
  const std::vector<T> dense = dense_gates(batch[0]);
  EXPECT_EQ(dense.size(), 8u);
  expect_finite(dense);

  const std::vector<T> bias = update_balance_bias<T>(to_type<T>(kBias), expert_load(routes, 8),
                                                     default_bias_update_speed<T>());
  expect_finite(bias);
}

}  // namespace
}  // namespace lmo::ref
