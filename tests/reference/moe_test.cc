// F20 MoE routing and layer, F21 load-balance loss, F22 aux-loss-free bias update, against
// tests/data/moe.json (tests/data/make_moe.py, mpmath at 50 digits); claims C24 and C25.
#include "reference/moe.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tests/support/test_data.h"

namespace lmo::ref {
namespace {

using testdata::exact_doubles;
using testdata::expected;
using testdata::expected_vector;
using testdata::relative_error;

const nlohmann::json& data() {
  static const nlohmann::json d = testdata::load("moe.json");
  return d;
}

template <class T>
std::vector<T> inputs(const nlohmann::json& arr) {
  std::vector<T> out;
  for (double v : exact_doubles(arr)) out.push_back(convert<T>(v));
  return out;
}

std::vector<int64_t> ints(const nlohmann::json& arr) { return arr.get<std::vector<int64_t>>(); }

// Every value of `got` within rel of the 50-digit expected strings.
template <class T>
void expect_close(const std::vector<T>& got, const nlohmann::json& want, double rel,
                  const char* what) {
  const std::vector<mp> w = expected_vector(want);
  ASSERT_EQ(got.size(), w.size()) << what;
  for (size_t i = 0; i < w.size(); ++i) {
    EXPECT_LT(relative_error(to_mp(got[i]), w[i]), mp(rel)) << what << "[" << i << "]";
  }
}

// mp against 50-digit mpmath: a few roundings at 2^-166 each, so 1e-40 has ample room.
constexpr double kMp = 1e-40;
// float128 against mp: a handful of operations at u = 2^-113 ≈ 1e-34.
constexpr double kQuad = 1e-30;

RouterConfig<mp> sigmoid_top(int64_t k, mp scale = mp(1)) {
  RouterConfig<mp> c;
  c.top_k = k;
  c.routed_scale = scale;
  return c;
}

TEST(MoeRouting, SigmoidAffinitiesAndGatesMatchMpmath) {
  const auto& c = data()["bias_flip"];
  const auto logits = inputs<mp>(c["logits"]);
  const Routing<mp> r = route<mp>(logits, {}, sigmoid_top(3));
  expect_close(r.affinities, c["affinities"], kMp, "affinities");
  EXPECT_EQ(r.experts, ints(c["unbiased_experts"]));
  expect_close(r.gates, c["unbiased_gates"], kMp, "gates");
}

// HARD POINT (C24): the bias changes which experts are chosen, never the gate values.
TEST(MoeRouting, BiasFlipsTheSelectionButGatesComeFromUnbiasedAffinities) {
  const auto& c = data()["bias_flip"];
  const auto logits = inputs<mp>(c["logits"]);
  const auto bias = inputs<mp>(c["bias"]);
  const Routing<mp> plain = route<mp>(logits, {}, sigmoid_top(3));
  const Routing<mp> r = route<mp>(logits, bias, sigmoid_top(3));
  EXPECT_EQ(plain.experts, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(r.experts, (std::vector<int64_t>{0, 1, 5}));  // expert 5 replaces expert 2
  EXPECT_EQ(r.affinities, plain.affinities);              // the bias never touches s_i
  expect_close(r.gates, c["gates"], kMp, "gates");
  // g_i = s_i / Σ_{selected} s_j with the unbiased s: exactly that expression in mp.
  const mp denom = r.affinities[0] + r.affinities[1] + r.affinities[5];
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_LT(relative_error(r.gates[k], r.affinities[static_cast<size_t>(r.experts[k])] / denom),
              mp(kMp));
  }
  // ...and visibly not the gates a kernel would get by normalizing the biased scores.
  const auto wrong = expected_vector(c["gates_from_biased_scores"]);
  for (size_t k = 0; k < 3; ++k) EXPECT_GT(relative_error(r.gates[k], wrong[k]), mp("0.01"));
  // Selection scores are s + c; the ranking exposes them for margin checks.
  EXPECT_EQ(r.ranking[0], 5);
  EXPECT_EQ(r.ranked_scores[0], r.affinities[5] + bias[5]);
  EXPECT_TRUE(std::is_sorted(r.ranked_scores.rbegin(), r.ranked_scores.rend()));
}

TEST(MoeRouting, RoutedScaleMultipliesGatesAndGatesSumToOne) {
  const auto& c = data()["bias_flip"];
  const auto logits = inputs<mp>(c["logits"]);
  const auto bias = inputs<mp>(c["bias"]);
  const Routing<mp> r1 = route<mp>(logits, bias, sigmoid_top(3));
  const Routing<mp> r25 = route<mp>(logits, bias, sigmoid_top(3, mp("2.5")));
  expect_close(r25.gates, c["gates_scaled_2_5"], kMp, "scaled gates");
  mp s1 = 0, s25 = 0;
  for (size_t k = 0; k < 3; ++k) {
    s1 += r1.gates[k];
    s25 += r25.gates[k];
  }
  EXPECT_LT(abs(s1 - 1), mp("1e-48"));
  EXPECT_LT(abs(s25 - mp("2.5")), mp("1e-48"));
  const auto dense = dense_gates(r1);
  EXPECT_EQ(dense.size(), 8u);
  EXPECT_EQ(dense[2], 0);
  EXPECT_EQ(dense[5], r1.gates[2]);
}

TEST(MoeRouting, DeepSeekV3GroupLimitedRouting) {
  const auto& c = data()["v3_groups"];
  RouterConfig<mp> cfg;
  cfg.top_k = 8;
  cfg.n_group = 8;
  cfg.topk_group = 4;
  cfg.routed_scale = mp("2.5");
  const auto bias = inputs<mp>(c["bias"]);
  bool limit_mattered = false;
  for (const auto& tok : c["tokens"]) {
    const auto logits = inputs<mp>(tok["logits"]);
    const Routing<mp> r = route<mp>(logits, bias, cfg);
    EXPECT_EQ(r.groups, ints(tok["groups"]));
    EXPECT_EQ(r.experts, ints(tok["experts"]));
    expect_close(r.gates, tok["gates"], kMp, "v3 gates");
    mp total = 0;
    for (const mp& g : r.gates) total += g;
    EXPECT_LT(abs(total - mp("2.5")), mp("1e-47"));
    for (int64_t i : r.experts) {  // every chosen expert lies in a kept group
      EXPECT_TRUE(std::binary_search(r.groups.begin(), r.groups.end(), i / 32));
    }
    EXPECT_EQ(r.ranking.size(), 4u * 32u);  // only the kept groups' experts compete
    // Group score = sum of the two largest biased affinities of the group.
    for (int64_t g = 0; g < 8; ++g) {
      std::vector<mp> v(r.selection_scores.begin() + g * 32,
                        r.selection_scores.begin() + g * 32 + 32);
      std::sort(v.rbegin(), v.rend());
      EXPECT_EQ(r.group_scores[static_cast<size_t>(g)], v[0] + v[1]);
    }
    RouterConfig<mp> free = cfg;
    free.n_group = 1;
    const Routing<mp> f = route<mp>(logits, bias, free);
    EXPECT_EQ(f.experts, ints(tok["ungrouped_experts"]));
    limit_mattered |= f.experts != r.experts;
  }
  EXPECT_TRUE(limit_mattered);
}

TEST(MoeRouting, SoftmaxRoutingProbabilitiesAndRenormalization) {
  const auto& c = data()["softmax"];
  const auto logits = inputs<mp>(c["logits"]);
  RouterConfig<mp> cfg;
  cfg.top_k = 2;
  cfg.score = RouterScore::kSoftmax;
  cfg.normalize = false;
  const Routing<mp> r = route<mp>(logits, {}, cfg);
  expect_close(r.affinities, c["probabilities"], kMp, "probabilities");
  EXPECT_EQ(r.experts, ints(c["experts"]));
  expect_close(r.gates, c["gates"], kMp, "gates");
  cfg.normalize = true;
  expect_close(route<mp>(logits, {}, cfg).gates, c["gates_renormalized"], kMp, "renormalized");

  const auto& v2 = c["v2"];
  RouterConfig<mp> v2cfg;
  v2cfg.top_k = 3;
  v2cfg.score = RouterScore::kSoftmax;
  v2cfg.n_group = 4;
  v2cfg.topk_group = 2;
  v2cfg.group_score = GroupScore::kMax;
  v2cfg.normalize = false;
  v2cfg.routed_scale = mp(16);
  const Routing<mp> rv2 = route<mp>(inputs<mp>(v2["logits"]), {}, v2cfg);
  EXPECT_EQ(rv2.groups, ints(v2["groups"]));
  EXPECT_EQ(rv2.experts, ints(v2["experts"]));
  expect_close(rv2.gates, v2["gates"], kMp, "v2 gates");
}

TEST(MoeRouting, ExactTiesGoToTheLowerIndex) {
  const std::vector<mp> logits = {mp(0), mp(1), mp(1), mp(1), mp(-1), mp(1)};
  const Routing<mp> r = route<mp>(logits, {}, sigmoid_top(2));
  EXPECT_EQ(r.experts, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(r.ranking, (std::vector<int64_t>{1, 2, 3, 5, 0, 4}));
  // Groups {0,1} and {2,3} both score sigmoid(2) + sigmoid(1), computed identically: a tie.
  const std::vector<mp> g = {mp(1), mp(2), mp(2), mp(1), mp(-3), mp(-3)};
  RouterConfig<mp> cfg = sigmoid_top(2);
  cfg.n_group = 3;
  cfg.topk_group = 1;
  const Routing<mp> rg = route<mp>(g, {}, cfg);
  EXPECT_EQ(rg.groups, (std::vector<int64_t>{0}));
  EXPECT_EQ(rg.group_ranking, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(rg.experts, (std::vector<int64_t>{0, 1}));
}

TEST(MoeRouting, NaNRanksFirstLikeTorchTopk) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> logits = {0.0, nan, 3.0};
  const Routing<double> r = route<double>(logits, {}, RouterConfig<double>{.top_k = 1});
  EXPECT_EQ(r.experts, (std::vector<int64_t>{1}));
}

TEST(MoeRouting, SigmoidStableAndLiteralForms) {
  for (const char* z : {"-30", "-2.5", "-0.125", "0", "0.75", "12"}) {
    const mp x(z);
    const mp want = 1 / (1 + exp(-x));
    EXPECT_LT(relative_error(router_sigmoid(x), want), mp(kMp)) << z;
    EXPECT_LT(relative_error(router_sigmoid(x, true), want), mp(kMp)) << z;
  }
  // In fp8 E4M3 (no infinity, max 448) e^{6.5} ≈ 665 overflows to NaN: the literal form fails
  // where the default evaluation gives sigmoid(−6.5) ≈ 0.0015 → 2^-9, the smallest subnormal.
  const fp8_e4m3 z(-6.5);
  EXPECT_TRUE(isnan(router_sigmoid(z, true)));
  EXPECT_FALSE(isnan(router_sigmoid(z)));
  EXPECT_EQ(router_sigmoid(z).value(), 0x1p-9);
}

TEST(MoeRouting, Float128AndDoubleAgreeWithMp) {
  const auto& c = data()["v3_groups"];
  for (const auto& tok : c["tokens"]) {
    RouterConfig<mp> cm;
    cm.top_k = 8;
    cm.n_group = 8;
    cm.topk_group = 4;
    cm.routed_scale = mp("2.5");
    const Routing<mp> rm = route<mp>(inputs<mp>(tok["logits"]), inputs<mp>(c["bias"]), cm);
    RouterConfig<float128> cq{
        .top_k = 8, .n_group = 8, .topk_group = 4, .routed_scale = float128(2.5)};
    const Routing<float128> rq =
        route<float128>(inputs<float128>(tok["logits"]), inputs<float128>(c["bias"]), cq);
    RouterConfig<double> cd{.top_k = 8, .n_group = 8, .topk_group = 4, .routed_scale = 2.5};
    const Routing<double> rd =
        route<double>(inputs<double>(tok["logits"]), inputs<double>(c["bias"]), cd);
    EXPECT_EQ(rq.experts, rm.experts);
    EXPECT_EQ(rd.experts, rm.experts);
    for (size_t k = 0; k < 8; ++k) {
      EXPECT_LT(relative_error(to_mp(rq.gates[k]), rm.gates[k]), mp(kQuad));
      // double: sigmoid (3 roundings), + bias, 7 adds for the denominator, /, ×2.5: under
      // 16 u = 16·2^-53 ≈ 1.8e-15; 1e-14 leaves room.
      EXPECT_LT(relative_error(to_mp(rd.gates[k]), rm.gates[k]), mp("1e-14"));
    }
  }
}

TEST(MoeRouting, RouteTokensIsIndependentOfThreadCount) {
  const auto& c = data()["v3_groups"];
  Mat<double> logits(4, 256);
  for (int64_t t = 0; t < 4; ++t) {
    const auto row = inputs<double>(c["tokens"][static_cast<size_t>(t)]["logits"]);
    std::copy(row.begin(), row.end(), logits.row(t).begin());
  }
  const auto bias = inputs<double>(c["bias"]);
  RouterConfig<double> cfg{.top_k = 8, .n_group = 8, .topk_group = 4, .routed_scale = 2.5};
  set_reference_threads(1);
  const auto one = route_tokens<double>(logits, bias, cfg);
  set_reference_threads(3);
  const auto three = route_tokens<double>(logits, bias, cfg);
  set_reference_threads(0);
  for (size_t t = 0; t < 4; ++t) {
    EXPECT_EQ(one[t].experts, three[t].experts);
    EXPECT_EQ(one[t].gates, three[t].gates);
    EXPECT_EQ(one[t].experts, ints(c["tokens"][t]["experts"]));
  }
}

TEST(MoeRouting, ValidatesArguments) {
  const std::vector<mp> z(8, mp(0));
  const std::vector<mp> short_bias(3, mp(0));
  EXPECT_THROW(route<mp>(std::vector<mp>{}, {}, sigmoid_top(1)), std::invalid_argument);
  EXPECT_THROW(route<mp>(z, short_bias, sigmoid_top(1)), std::invalid_argument);
  EXPECT_THROW(route<mp>(z, {}, sigmoid_top(0)), std::invalid_argument);
  EXPECT_THROW(route<mp>(z, {}, sigmoid_top(9)), std::invalid_argument);
  RouterConfig<mp> cfg = sigmoid_top(2);
  cfg.n_group = 3;  // does not divide 8
  EXPECT_THROW(route<mp>(z, {}, cfg), std::invalid_argument);
  cfg.n_group = 4;
  cfg.topk_group = 5;
  EXPECT_THROW(route<mp>(z, {}, cfg), std::invalid_argument);
  cfg.topk_group = 1;
  cfg.top_k = 3;  // only 2 experts in one kept group
  EXPECT_THROW(route<mp>(z, {}, cfg), std::invalid_argument);
  cfg.n_group = 8;  // groups of 1 cannot have a top-2 sum
  cfg.top_k = 1;
  EXPECT_THROW(route<mp>(z, {}, cfg), std::invalid_argument);
  try {
    route<mp>(z, {}, sigmoid_top(9));
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("top_k = 9"), std::string::npos) << e.what();
  }
}

// --- the layer -------------------------------------------------------------------------------

ExpertFn<mp> linear_expert(const Mat<mp>& w, int* calls) {
  return [w, calls](std::span<const mp> x) {
    ++*calls;
    return vecmat<mp>(x, w);
  };
}

Mat<mp> matrix(const nlohmann::json& rows) {
  std::vector<mp> v;
  for (const auto& row : rows) {
    for (const mp& x : inputs<mp>(row)) v.push_back(x);
  }
  return Mat<mp>(static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size()), v);
}

TEST(MoeLayer, SharedPlusGatedRoutedExpertsMatchMpmath) {
  const auto& c = data()["layer"];
  const auto u = inputs<mp>(c["u"]);
  const Mat<mp> router = matrix(c["router"]);
  const std::vector<mp> logits = vecmat<mp>(u, router);
  RouterConfig<mp> cfg = sigmoid_top(2, mp("2.5"));
  const Routing<mp> r = route<mp>(logits, inputs<mp>(c["bias"]), cfg);
  EXPECT_EQ(r.experts, ints(c["selected"]));
  EXPECT_NE(r.experts, route<mp>(logits, {}, cfg).experts);
  expect_close(r.gates, c["gates"], kMp, "gates");

  std::vector<int> calls(8, 0);
  int shared_calls = 0;
  std::vector<ExpertFn<mp>> routed;
  for (size_t i = 0; i < 8; ++i)
    routed.push_back(linear_expert(matrix(c["experts"][i]), &calls[i]));
  const std::vector<ExpertFn<mp>> shared = {linear_expert(matrix(c["shared"]), &shared_calls)};
  expect_close(moe_layer<mp>(u, r, shared, routed), c["output"], kMp, "h'");
  expect_close(moe_layer<mp>(u, r, shared, routed, false), c["output_no_residual"], kMp, "no res");
  // C24: shared experts always run; a routed expert only when selected.
  EXPECT_EQ(shared_calls, 2);
  for (int64_t i = 0; i < 8; ++i) {
    const bool chosen = std::count(r.experts.begin(), r.experts.end(), i) == 1;
    EXPECT_EQ(calls[static_cast<size_t>(i)], chosen ? 2 : 0) << i;
  }
}

template <class T>
std::vector<T> layer_case() {
  const auto& c = data()["layer"];
  auto mat = [](const nlohmann::json& rows) {
    std::vector<T> v;
    for (const auto& row : rows) {
      for (const T& x : inputs<T>(row)) v.push_back(x);
    }
    return Mat<T>(static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size()), v);
  };
  const auto u = inputs<T>(c["u"]);
  RouterConfig<T> cfg;
  cfg.top_k = 2;
  cfg.routed_scale = T(2.5);
  const Routing<T> r = route<T>(vecmat<T>(u, mat(c["router"])), inputs<T>(c["bias"]), cfg);
  std::vector<ExpertFn<T>> routed, shared;
  for (size_t i = 0; i < 8; ++i) {
    routed.push_back([w = mat(c["experts"][i])](std::span<const T> x) { return vecmat<T>(x, w); });
  }
  shared.push_back([w = mat(c["shared"])](std::span<const T> x) { return vecmat<T>(x, w); });
  return moe_layer<T>(u, r, shared, routed);
}

TEST(MoeLayer, Float128AndDoubleAgreeWithMp) {
  const auto m = layer_case<mp>();
  const auto q = layer_case<float128>();
  const auto d = layer_case<double>();
  const auto want = expected_vector(data()["layer"]["output"]);
  // Absolute error scaled by max|h'|: the sum u + φ_s + Σ g φ may cancel (h'_3 ≈ −0.002 while
  // the terms are O(1)), so a per-element relative bound would measure the cancellation, not
  // the arithmetic. The terms are at most ~2 in magnitude; double does about 40 roundings.
  mp scale = 0;
  for (const mp& w : want) scale = abs(w) > scale ? mp(abs(w)) : scale;
  for (size_t j = 0; j < want.size(); ++j) {
    EXPECT_LT(abs(to_mp(q[j]) - m[j]) / scale, mp(kQuad));
    EXPECT_LT(abs(to_mp(d[j]) - m[j]) / scale, mp("1e-14"));
  }
}

TEST(MoeLayer, ValidatesExperts) {
  const std::vector<mp> u = {mp(1), mp(2)};
  const Routing<mp> r = route<mp>(std::vector<mp>{mp(0), mp(1), mp(2)}, {}, sigmoid_top(1));
  const ExpertFn<mp> good = [](std::span<const mp> x) {
    return std::vector<mp>(x.begin(), x.end());
  };
  const ExpertFn<mp> bad = [](std::span<const mp>) { return std::vector<mp>(3, mp(0)); };
  const std::vector<ExpertFn<mp>> two = {good, good};
  const std::vector<ExpertFn<mp>> three_bad = {good, good, bad};
  EXPECT_THROW(moe_layer<mp>(u, r, {}, two), std::invalid_argument);
  EXPECT_THROW(moe_layer<mp>(u, r, {}, three_bad), std::invalid_argument);
}

// --- F21 --------------------------------------------------------------------------------------

TEST(LoadBalanceLoss, MatchesMpmath) {
  const auto& c = data()["balance"];
  std::vector<Routing<mp>> routes;
  for (const auto& row : c["logits"])
    routes.push_back(route<mp>(inputs<mp>(row), {}, sigmoid_top(2)));
  for (size_t t = 0; t < routes.size(); ++t) EXPECT_EQ(routes[t].experts, ints(c["experts"][t]));
  const mp alpha = inputs<mp>(nlohmann::json::array({c["alpha"]}))[0];
  const BalanceLoss<mp> l = load_balance_loss<mp>(routes, alpha);
  expect_close(l.f, c["f"], kMp, "f");
  expect_close(l.p, c["p"], kMp, "P");
  EXPECT_LT(relative_error(l.loss, expected(c["loss"])), mp(kMp));
  mp fsum = 0, psum = 0;
  for (size_t i = 0; i < l.f.size(); ++i) {
    fsum += l.f[i];
    psum += l.p[i];
  }
  // C25: Σ f_i = N (each f_i = 6/10·count is rounded once, so not exactly).
  EXPECT_LT(abs(fsum - 6), mp("1e-48"));
  EXPECT_LT(abs(psum - 1), mp("1e-48"));  // P is a distribution over experts
}

template <class T>
BalanceLoss<T> balance_case() {
  const auto& c = data()["balance"];
  std::vector<Routing<T>> routes;
  RouterConfig<T> cfg;
  cfg.top_k = 2;
  for (const auto& row : c["logits"]) routes.push_back(route<T>(inputs<T>(row), {}, cfg));
  return load_balance_loss<T>(routes, inputs<T>(nlohmann::json::array({c["alpha"]}))[0]);
}

TEST(LoadBalanceLoss, Float128AndDoubleAgreeWithMp) {
  const BalanceLoss<mp> m = balance_case<mp>();
  const BalanceLoss<float128> q = balance_case<float128>();
  const BalanceLoss<double> d = balance_case<double>();
  EXPECT_LT(relative_error(to_mp(q.loss), m.loss), mp(kQuad));
  // double: per P_i 6 terms normalized (sigmoid 3 roundings, 5 additions, 1 division) and
  // summed over 5 tokens, then f_i P_i, 6 additions and ×α, all terms positive: under
  // 25 u ≈ 2.8e-15; 1e-14 leaves room.
  EXPECT_LT(relative_error(to_mp(d.loss), m.loss), mp("1e-14"));
  for (size_t i = 0; i < m.p.size(); ++i) {
    EXPECT_LT(relative_error(to_mp(q.p[i]), m.p[i]), mp(kQuad));
    EXPECT_LT(relative_error(to_mp(d.p[i]), m.p[i]), mp("1e-14"));
  }
}

// C25: L = α under perfectly balanced routing with uniform affinities.
TEST(LoadBalanceLoss, EqualsAlphaWhenBalancedAndUniform) {
  const mp alpha("0.003");
  for (int64_t n : {4, 8, 12}) {
    for (int64_t k : {1, 2}) {
      const int64_t tokens = n / k;  // token t takes experts t·k … t·k + k − 1: each once
      Mat<mp> s(tokens, n);
      for (auto& v : s.data) v = mp("0.7");  // the same affinity for every expert
      std::vector<std::vector<int64_t>> sel(static_cast<size_t>(tokens));
      for (int64_t t = 0; t < tokens; ++t) {
        for (int64_t j = 0; j < k; ++j) sel[static_cast<size_t>(t)].push_back(t * k + j);
      }
      const BalanceLoss<mp> l = load_balance_loss<mp>(s, sel, k, alpha);
      EXPECT_LT(relative_error(l.loss, alpha), mp("1e-48")) << n << " " << k;
      for (const mp& f : l.f) EXPECT_EQ(f, 1);
    }
  }
}

// C25: invariant to relabelling the experts.
TEST(LoadBalanceLoss, InvariantToPermutingExperts) {
  const auto& c = data()["balance"];
  Mat<mp> s(5, 6), sp(5, 6);
  std::vector<std::vector<int64_t>> sel, selp;
  const std::vector<int64_t> perm = {3, 0, 5, 1, 4, 2};  // expert i becomes perm[i]
  for (int64_t t = 0; t < 5; ++t) {
    const Routing<mp> r =
        route<mp>(inputs<mp>(c["logits"][static_cast<size_t>(t)]), {}, sigmoid_top(2));
    for (int64_t i = 0; i < 6; ++i) {
      s(t, i) = r.affinities[static_cast<size_t>(i)];
      sp(t, perm[static_cast<size_t>(i)]) = r.affinities[static_cast<size_t>(i)];
    }
    sel.push_back(r.experts);
    std::vector<int64_t> p;
    for (int64_t i : r.experts) p.push_back(perm[static_cast<size_t>(i)]);
    selp.push_back(p);
  }
  const mp a = load_balance_loss<mp>(s, sel, 2, mp("0.001")).loss;
  const mp b = load_balance_loss<mp>(sp, selp, 2, mp("0.001")).loss;
  EXPECT_LT(relative_error(b, a), mp("1e-45"));
}

TEST(LoadBalanceLoss, ValidatesSelections) {
  Mat<mp> s(2, 4);
  for (auto& v : s.data) v = mp("0.5");
  EXPECT_THROW(load_balance_loss<mp>(s, {{0, 1}}, 2, mp(1)), std::invalid_argument);
  EXPECT_THROW(load_balance_loss<mp>(s, {{0, 1}, {2}}, 2, mp(1)), std::invalid_argument);
  EXPECT_THROW(load_balance_loss<mp>(s, {{0, 1}, {2, 2}}, 2, mp(1)), std::invalid_argument);
  EXPECT_THROW(load_balance_loss<mp>(s, {{0, 1}, {2, 4}}, 2, mp(1)), std::invalid_argument);
}

// --- F22 --------------------------------------------------------------------------------------

TEST(BalanceBias, UpdateStepsMatchMpmath) {
  const auto& c = data()["bias_update"];
  const mp gamma = inputs<mp>(nlohmann::json::array({c["gamma"]}))[0];
  std::vector<mp> bias(8, mp(0));
  std::vector<std::vector<int64_t>> previous;
  bool flipped = false;
  for (const auto& step : c["steps"]) {
    std::vector<Routing<mp>> routes;
    std::vector<std::vector<int64_t>> chosen;
    for (const auto& row : c["logits"]) {
      routes.push_back(route<mp>(inputs<mp>(row), bias, sigmoid_top(2)));
      chosen.push_back(routes.back().experts);
    }
    EXPECT_EQ(chosen, step["experts"].get<std::vector<std::vector<int64_t>>>());
    const std::vector<int64_t> load = expert_load(routes, 8);
    EXPECT_EQ(load, ints(step["load"]));
    bias = update_balance_bias<mp>(bias, load, gamma);
    const auto want = expected_vector(step["bias"]);
    for (size_t i = 0; i < 8; ++i) EXPECT_LT(abs(bias[i] - want[i]), mp("1e-48")) << i;
    flipped |= !previous.empty() && previous != chosen;
    previous = chosen;
  }
  EXPECT_TRUE(flipped);
}

TEST(BalanceBias, SignOfMeanMinusLoadAndNoChangeAtTheMean) {
  const std::vector<double> bias = {0.5, 0.5, 0.5, 0.5};
  const std::vector<int64_t> load = {1, 3, 2, 2};  // mean 2
  const auto out = update_balance_bias<double>(bias, load, 0.25);
  EXPECT_EQ(out, (std::vector<double>{0.75, 0.25, 0.5, 0.5}));
  EXPECT_EQ(to_mp(default_bias_update_speed<double>()), mp(0.001));
  EXPECT_THROW(update_balance_bias<double>(bias, std::vector<int64_t>{1, 2}, 0.1),
               std::invalid_argument);
}

}  // namespace
}  // namespace lmo::ref
