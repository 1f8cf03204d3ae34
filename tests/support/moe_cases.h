// The MoE router configurations and inputs the fast and GPU router tests share: DeepSeek-V3
// (sigmoid, bias, 8 groups by top-2 sums, top-4 groups, top-8, scale 2.5), DeepSeek-V2 (softmax,
// groups by their best, no renormalization), routers without a group limit (Switch, Mixtral, a
// biased sigmoid router), logits drawn N(0, logit_std) with special values placed, and logits
// with many exact ties (integers, a bias of 0 or 1/2).
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fast/storage.h"
#include "oracle/core/guarded_buffer.h"
#include "oracle/core/inputs.h"
#include "oracle/ops/moe.h"
#include "oracle/ops/moe_balance.h"
#include "oracle/core/specials.h"
#include "tests/support/fast_cases.h"

namespace lmo::testdata {

// A configuration under test and the inputs drawn for it.
struct Routed {
  oracle::RouterParams p;
  oracle::InputSet in;
};

// The routings of oracle/ops/moe.h's cases (cases/moe.json) at a chosen token count.
inline oracle::RouterParams deepseek_v3(int64_t tokens) {
  return {.tokens = tokens,
          .experts = 256,
          .top_k = 8,
          .score = ref::RouterScore::kSigmoid,
          .n_group = 8,
          .topk_group = 4,
          .group_score = ref::GroupScore::kTopTwoSum,
          .routed_scale = 2.5,
          .bias = true,
          .logit_std = 2,
          .alpha = 1e-4};
}

inline oracle::RouterParams deepseek_v2(int64_t tokens) {
  return {.tokens = tokens,
          .experts = 160,
          .top_k = 6,
          .score = ref::RouterScore::kSoftmax,
          .n_group = 8,
          .topk_group = 3,
          .group_score = ref::GroupScore::kMax,
          .normalize = false,
          .routed_scale = 16,
          .logit_std = 2,
          .alpha = 3e-3};
}

// No group limit (Switch, Mixtral, a biased sigmoid router).
inline oracle::RouterParams flat_router(int64_t tokens, int64_t experts, int64_t k,
                                        ref::RouterScore score, bool normalize, bool bias = false) {
  return {.tokens = tokens,
          .experts = experts,
          .top_k = k,
          .score = score,
          .normalize = normalize,
          .bias = bias,
          .alpha = 1e-2};
}

// Logits N(0, logit_std) (with specials placed) and the bias N(0, bias_std), in storage s.
inline Routed draw_router(const oracle::RouterParams& p, fast::Storage s, uint64_t seed,
                          const std::vector<oracle::SpecialAt>& specials = {}) {
  Routed r{p, {}};
  ref::Tensor z = fast_normal(seed, "logits", s, {p.tokens, p.experts}, 0.0, p.logit_std);
  oracle::place_specials(z, specials);
  r.in.add("logits", std::move(z));
  if (p.bias) r.in.add("bias", fast_normal(seed, "bias", s, {p.experts}, 0.0, p.bias_std));
  return r;
}

// Logits and bias with many exactly equal scores: integer logits in [−2, 2] and a bias of 0 or
// 1/2 (equal (z, c) pairs give equal f32 scores; distinct ones differ far beyond f32 errors), so
// the selection must follow the reference's tie rule exactly, groups included.
inline Routed tied_router(const oracle::RouterParams& p, fast::Storage s, uint64_t seed) {
  Routed r{p, {}};
  const ref::Tensor zi =
      oracle::uniform_int(seed, "z", ref::DType::i64, {p.tokens, p.experts}, -2, 3);
  ref::Tensor z(dtype_of(s), {p.tokens, p.experts});
  for (int64_t i = 0; i < z.numel(); ++i) z.set(i, static_cast<double>(zi.as<int64_t>()[i]));
  r.in.add("logits", std::move(z));
  if (p.bias) {
    const ref::Tensor ci = oracle::uniform_int(seed, "c", ref::DType::i64, {p.experts}, 0, 2);
    ref::Tensor c(dtype_of(s), {p.experts});
    for (int64_t i = 0; i < c.numel(); ++i)
      c.set(i, 0.5 * static_cast<double>(ci.as<int64_t>()[i]));
    r.in.add("bias", std::move(c));
  }
  return r;
}

// The special logits of the router tests, with the configuration each is placed in: sigmoid
// (a NaN ranks first and makes its token's gates NaN; ±inf are affinities 1 and 0), softmax (a
// NaN or +inf makes a row NaN, ranked by index; a −inf is a masked expert), and a softmax row of
// only −inf (NaN).
inline std::vector<std::pair<std::string, Routed>> special_routers(fast::Storage s) {
  using oracle::Special;
  std::vector<std::pair<std::string, Routed>> out;
  out.emplace_back("sigmoid specials", draw_router(deepseek_v3(4), s, 515,
                                                   {{3, Special::nan},
                                                    {256 + 40, Special::pos_inf},
                                                    {256 + 41, Special::pos_inf},
                                                    {512 + 7, Special::neg_inf},
                                                    {768 + 200, Special::max_finite}}));
  out.emplace_back("softmax specials", draw_router(deepseek_v2(4), s, 516,
                                                   {{5, Special::nan},
                                                    {160 + 9, Special::pos_inf},
                                                    {320 + 0, Special::neg_inf},
                                                    {320 + 1, Special::neg_inf}}));
  std::vector<oracle::SpecialAt> masked;
  for (int64_t i = 0; i < 5; ++i) masked.push_back({5 + i, Special::neg_inf});
  out.emplace_back(
      "softmax row of −inf",
      draw_router(flat_router(2, 5, 2, ref::RouterScore::kSoftmax, true), s, 517, masked));
  return out;
}

inline std::vector<int64_t> indices_of(const oracle::GuardedBuffer& b) {
  const auto* p = static_cast<const int64_t*>(b.data());
  return std::vector<int64_t>(p, p + b.nbytes() / sizeof(int64_t));
}

// A kernel's moe_router outputs (gates in storage, experts as i64) judged against the exact
// routing of the op: the selections as sets with the policy table's top-k row (and, with
// exact_selection, exactly the reference's experts in its ascending order), the gates with the
// naive_relative row (naive: the reference run in f32).
inline void expect_router_outputs(const oracle::RouterParams& p,
                                  const oracle::Outputs<ref::mp>& exact,
                                  const oracle::Outputs<double>& naive,
                                  const oracle::GuardedBuffer& gates,
                                  const oracle::GuardedBuffer& experts, bool exact_selection,
                                  const std::string& where) {
  const oracle::Verdict v =
      oracle::judge_topk(oracle::policy_for("moe_router", "experts"), exact[1].values, p.experts,
                         exact[1].indices, experts);
  EXPECT_TRUE(v.pass) << where << " experts: " << v.detail;
  if (exact_selection) {
    EXPECT_EQ(indices_of(experts), exact[1].indices) << where;
  }
  expect_judged("moe_router", "gates", exact[0].values, gates, naive[0].values, where);
}

// A routing under test: its name in failure messages, the configuration with its inputs, and
// whether the selection must be the reference's own (exact ties, special logits).
struct NamedRouting {
  std::string what;
  Routed r;
  bool exact_selection = false;
};

// Routers without a group limit (seeds 503–507): Switch, Mixtral, a biased sigmoid router with
// an odd N over `sigmoid_tokens` tokens, K = N, N = 1.
inline std::vector<NamedRouting> flat_routings(fast::Storage s, int64_t sigmoid_tokens) {
  using ref::RouterScore;
  std::vector<NamedRouting> out;
  out.push_back(
      {"switch", draw_router(flat_router(64, 128, 1, RouterScore::kSoftmax, false), s, 503)});
  out.push_back(
      {"mixtral", draw_router(flat_router(64, 8, 2, RouterScore::kSoftmax, true), s, 504)});
  out.push_back(
      {"sigmoid with bias, odd N",
       draw_router(flat_router(sigmoid_tokens, 37, 5, RouterScore::kSigmoid, true, true), s, 505)});
  out.push_back({"K = N", draw_router(flat_router(9, 6, 6, RouterScore::kSigmoid, true), s, 506)});
  out.push_back({"N = 1", draw_router(flat_router(3, 1, 1, RouterScore::kSoftmax, true), s, 507)});
  return out;
}

// DeepSeek-V3 reshaped (seeds 508–510): one expert per group scored by its best, every group
// kept (the flat top-k; when all_groups_kept), K = every expert of the 4 kept groups.
inline std::vector<NamedRouting> group_routings(fast::Storage s, bool all_groups_kept) {
  std::vector<NamedRouting> out;
  oracle::RouterParams p = deepseek_v3(24);
  p.experts = 24;
  p.n_group = 24;
  p.topk_group = 5;
  p.top_k = 3;
  p.group_score = ref::GroupScore::kMax;
  out.push_back({"one expert per group", draw_router(p, s, 508)});
  if (all_groups_kept) {
    p = deepseek_v3(24);
    p.topk_group = 8;
    out.push_back({"all groups kept", draw_router(p, s, 509)});
  }
  p = deepseek_v3(24);
  p.top_k = 128;
  out.push_back({"K = the kept groups' experts", draw_router(p, s, 510)});
  return out;
}

// Exact ties (seeds 511–514; tied_router): DeepSeek-V3, its groups without the bias (when
// groups_without_bias), DeepSeek-V2, a flat sigmoid router. The selection must be exact.
inline std::vector<NamedRouting> tied_routings(fast::Storage s, bool groups_without_bias) {
  std::vector<NamedRouting> out;
  out.push_back({"ties, deepseek-v3", tied_router(deepseek_v3(48), s, 511), true});
  if (groups_without_bias) {
    oracle::RouterParams p = deepseek_v3(48);
    p.bias = false;
    out.push_back({"ties, groups without bias", tied_router(p, s, 512), true});
  }
  out.push_back({"ties, deepseek-v2", tied_router(deepseek_v2(48), s, 513), true});
  out.push_back({"ties, flat",
                 tied_router(flat_router(48, 16, 4, ref::RouterScore::kSigmoid, true), s, 514),
                 true});
  return out;
}

inline const void* input_bytes(const oracle::InputSet& in, const char* name) {
  return in.at(name).bytes().data();
}
inline const void* bias_of(const Routed& r) {
  return r.p.bias ? input_bytes(r.in, "bias") : nullptr;
}

// The load-balance loss's sequences (seeds 521–524): DeepSeek-V3, DeepSeek-V2, Switch, and a
// biased sigmoid router of `sigmoid_experts` experts over `sigmoid_tokens` tokens (`sigmoid_what`).
inline std::vector<NamedRouting> balance_routings(fast::Storage s, int64_t sigmoid_tokens,
                                                  int64_t sigmoid_experts,
                                                  const std::string& sigmoid_what) {
  using ref::RouterScore;
  std::vector<NamedRouting> out;
  out.push_back({"deepseek-v3 sequence", draw_router(deepseek_v3(64), s, 521)});
  out.push_back({"deepseek-v2", draw_router(deepseek_v2(40), s, 522)});
  out.push_back(
      {"switch", draw_router(flat_router(64, 128, 1, RouterScore::kSoftmax, false), s, 523)});
  out.push_back({sigmoid_what, draw_router(flat_router(sigmoid_tokens, sigmoid_experts, 3,
                                                       RouterScore::kSigmoid, true, true),
                                           s, 524)});
  return out;
}

// C25's perfectly balanced routing: 8 tokens on 8 experts, K = 2, each expert chosen twice,
// every affinity 1/4 (sigmoid-normalized: P_i = 1/8), so that L = α exactly.
struct BalancedRouting {
  int64_t tokens = 8, n = 8, k = 2;
  std::vector<int64_t> experts;
  std::vector<float> affinities;
};
inline BalancedRouting balanced_routing() {
  BalancedRouting b;
  for (int64_t t = 0; t < b.tokens; ++t) {
    b.experts.push_back((2 * t) % b.n);
    b.experts.push_back((2 * t + 1) % b.n);
  }
  b.affinities.assign(static_cast<size_t>(b.tokens * b.n), 0.25f);
  return b;
}

// F22's inputs: the bias N(0, bias_std) in s and integer loads in [0, max_load).
struct AuxFreeCase {
  oracle::AuxFreeParams p;
  oracle::InputSet in;
};
inline AuxFreeCase aux_free_case(fast::Storage s, int64_t n, int64_t max_load, double gamma,
                                 uint64_t seed) {
  AuxFreeCase c;
  c.p.experts = n;
  c.p.gamma = gamma;
  c.p.max_load = max_load;
  c.in.add("bias", fast_normal(seed, "bias", s, {n}, 0.0, c.p.bias_std));
  c.in.add("load", oracle::uniform_int(seed, "load", ref::DType::i64, {n}, 0, max_load));
  return c;
}

// The argument checks that fast/moe_router.h and gpu/api_moe.h share (kernels/api/validate_moe.h), for
// a kernel library K as oracle/backends/moe_adapters.h names one (oracle::fast_adapters::FastMoe,
// oracle::GpuMoe). Every call throws (or returns at once for zero tokens) before reaching a
// kernel, so this runs without a device for the GPU library too.
template <class K>
void expect_moe_argument_checks() {
  using S = typename K::Storage;
  using Config = typename K::RouterConfig;
  const S f32 = S::f32;
  float z[8] = {0, 1, 2, 3, 4, 5, 6, 7}, g[8];
  int64_t e[8] = {};
  Config c;
  c.experts = 8;
  c.top_k = 2;
  const auto router_throws = [&](const Config& cfg) {
    EXPECT_THROW(K::moe_router(f32, z, nullptr, 1, cfg, e, g, nullptr), std::invalid_argument);
  };
  EXPECT_NO_THROW(K::moe_router(f32, nullptr, nullptr, 0, c, nullptr, nullptr, nullptr));
  EXPECT_THROW(K::moe_router(f32, z, nullptr, -1, c, e, g, nullptr), std::invalid_argument);
  EXPECT_THROW(K::moe_router(f32, nullptr, nullptr, 1, c, e, g, nullptr), std::invalid_argument);
  EXPECT_THROW(K::moe_router(f32, z, nullptr, 1, c, nullptr, g, nullptr), std::invalid_argument);
  EXPECT_THROW(K::moe_router(f32, z, nullptr, 1, c, e, nullptr, nullptr), std::invalid_argument);
  EXPECT_THROW(K::moe_router(static_cast<S>(9), z, nullptr, 1, c, e, g, nullptr),
               std::invalid_argument);
  Config bad = c;
  bad.top_k = 9;
  router_throws(bad);
  bad = c;
  bad.n_group = 3;
  router_throws(bad);
  bad = c;
  bad.n_group = 4;
  bad.topk_group = 5;
  router_throws(bad);
  bad = c;
  bad.n_group = 8;  // groups of one expert cannot take a top-2 sum
  bad.topk_group = 2;
  router_throws(bad);
  bad = c;
  bad.n_group = 4;
  bad.topk_group = 1;
  bad.top_k = 3;  // more than the 2 experts of the one kept group
  router_throws(bad);
  bad = c;
  bad.routed_scale = INFINITY;
  router_throws(bad);
  bad = c;
  bad.score = static_cast<decltype(bad.score)>(5);
  router_throws(bad);

  const int64_t sel[4] = {0, 1, 2, 2};  // token 1 repeats expert 2
  const float aff[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  int64_t counts[4];
  float p[4];
  EXPECT_THROW(K::expert_balance(2, 4, 2, sel, aff, true, counts, p), std::invalid_argument);
  const int64_t out_of_range[2] = {0, 4};
  EXPECT_THROW(K::expert_balance(1, 4, 2, out_of_range, aff, true, counts, p),
               std::invalid_argument);
  EXPECT_THROW(K::expert_balance(0, 4, 2, sel, aff, true, counts, p), std::invalid_argument);
  EXPECT_THROW(K::expert_balance(1, 4, 5, sel, aff, true, counts, p), std::invalid_argument);
  EXPECT_THROW(K::expert_balance(1, 4, 2, sel, nullptr, true, counts, p), std::invalid_argument);
  EXPECT_THROW(K::load_balance_loss(counts, p, 1, 4, 2, NAN), std::invalid_argument);
  EXPECT_THROW(K::load_balance_loss(nullptr, p, 1, 4, 2, 1), std::invalid_argument);
  EXPECT_THROW(K::load_balance_loss(counts, p, 0, 4, 2, 1), std::invalid_argument);
  const int64_t loads[2] = {1, -1};
  EXPECT_THROW(K::aux_free_update(f32, z, loads, 2, 0.001f, g), std::invalid_argument);
  const int64_t huge[2] = {int64_t{1} << 61, int64_t{1} << 61};
  EXPECT_THROW(K::aux_free_update(f32, z, huge, 2, 0.001f, g), std::invalid_argument);
  EXPECT_THROW(K::aux_free_update(f32, z, e, 2, NAN, g), std::invalid_argument);
  EXPECT_THROW(K::aux_free_update(f32, z, e, 0, 0.001f, g), std::invalid_argument);
  EXPECT_THROW(K::aux_free_update(f32, z, e, 2, 0.001f, nullptr), std::invalid_argument);
}

}  // namespace lmo::testdata
