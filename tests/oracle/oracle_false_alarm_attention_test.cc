// No false alarms on attention, KV-cache decode, MLA, MoE routing and the MoE layer: correct
// kernels — the exact values rounded once (`ref`), the reference formula computed in f64 and in f32
// with every operation rounded once (`ref-f64`, `ref-f32`), outputs stored in f32, bf16 or f16 —
// are never flagged over 1000 random small cases per family (random op, shapes, masks, caps,
// routing rules, input scales, storage formats and seeds, drawn from Philox so the sweep is the
// same on every run). The fast kernels of these ops are judged on the built-in cases (verify) and
// their own tests, not in these sweeps of tiny shapes (see oracle_false_alarm_positional_test's
// FeedForward for what the naive policy does on tiny compositions).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/oracle_sweep.h"

namespace lmo::oracle {
namespace {

using lmo::testing::Draw;
using nlohmann::json;

constexpr int kCases = 1000;
const std::vector<std::string> kCorrect = {"ref", "ref-f64", "ref-f32"};

// Head counts with a divisor g drawn among all divisors: MHA, GQA and MQA alike.
void heads(Draw& d, json& p) {
  const int64_t h = d.pick<int64_t>({1, 2, 3, 4, 6, 8});
  std::vector<int64_t> divisors;
  for (int64_t g = 1; g <= h; ++g) {
    if (h % g == 0) divisors.push_back(g);
  }
  p["h"] = h;
  p["g"] = d.pick(divisors);
  p["d"] = d.between(1, 24);
  p["softcap"] = d.pick<double>({0.0, 0.0, 5.0, 50.0});
  p["qk_std"] = d.log_uniform(0.1, 4);
}

json attention_case(Draw& d) {
  const std::string op =
      d.pick<std::string>({"attention", "attention", "attention_decode", "mla_decode"});
  json c = {{"op", op}, {"params", json::object()}};
  json& p = c["params"];
  if (op == "mla_decode") {
    p["h"] = d.between(1, 3);
    p["d_h"] = d.between(1, 16);
    p["d_rope"] = 2 * d.between(1, 4);
    p["d_c"] = d.between(1, 24);
    p["cache_len"] = d.between(1, 16);
    p["rope_layout"] = d.pick<std::string>({"interleaved", "half_split"});
    return c;
  }
  heads(d, p);
  if (op == "attention_decode") {
    const int64_t t = d.between(1, 24);
    p["cache_len"] = t;
    p["window"] = d.between(0, 1) == 1 ? d.between(1, t + 2) : 0;  // may exceed the cache
    return c;
  }
  const int64_t t = d.between(1, 12);
  p["tokens"] = t;
  const std::string mask = d.pick<std::string>({"none", "causal", "window", "document"});
  p["mask"] = mask;
  if (mask == "window") p["window"] = d.between(1, t + 2);
  if (mask == "document") {
    json starts = json::array();
    for (int64_t j = 1; j < t; ++j) {
      if (d.between(0, 3) == 0) starts.push_back(j);
    }
    if (starts.empty()) {
      p["mask"] = "causal";  // doc_starts is a required, non-empty list
    } else {
      p["doc_starts"] = starts;
    }
  }
  return c;
}

json router_case(Draw& d) {
  const std::string op = d.pick<std::string>({"moe_router", "moe_router", "load_balance_loss"});
  const int64_t n = d.pick<int64_t>({2, 4, 8, 16, 32, 64, 160, 256});
  json p = {{"tokens", d.between(1, 8)},
            {"experts", n},
            {"score", d.pick<std::string>({"sigmoid", "softmax"})},
            {"normalize", d.between(0, 1) == 1},
            {"routed_scale", d.pick<double>({1.0, 2.5, 16.0})},
            {"logit_std", d.log_uniform(0.1, 8)}};
  std::vector<int64_t> groups;
  for (int64_t g = 1; g <= 8; ++g) {
    if (n % g == 0 && n / g >= 2) groups.push_back(g);
  }
  const int64_t g = d.between(0, 1) == 1 ? d.pick(groups) : 1;
  int64_t eligible = n;
  if (g > 1) {
    const int64_t kept = d.between(1, g);
    p["groups"] = g;
    p["topk_groups"] = kept;
    p["group_score"] = d.pick<std::string>({"top2_sum", "max"});
    eligible = kept * (n / g);
  }
  p["top_k"] = d.between(1, std::min<int64_t>(eligible, 8));
  if (d.between(0, 1) == 1) {
    p["bias"] = true;
    p["bias_std"] = d.log_uniform(1e-3, 0.3);
  }
  if (op == "load_balance_loss") p["alpha"] = d.pick<double>({1e-4, 1e-2, 1.0});
  return {{"op", op}, {"params", p}};
}

// The whole MoE layer on top of the router's draws: small widths, 0–2 shared experts, with and
// without the residual.
json moe_layer_case(Draw& d) {
  json c = router_case(d);
  if (c["op"] == "load_balance_loss") c["params"].erase("alpha");
  c["op"] = "moe_layer";
  json& p = c["params"];
  p.erase("logit_std");
  p["tokens"] = d.between(1, 4);
  p["d"] = d.between(1, 16);
  p["d_ff"] = d.between(1, 16);
  p["shared"] = d.between(0, 2);
  p["activation"] = d.pick<std::string>({"silu", "gelu", "relu"});
  p["residual"] = d.between(0, 1) == 1;
  return c;
}

TEST(NoFalseAlarms, AttentionDecodeAndMla) {
  lmo::testing::sweep("attention", kCases, attention_case, kCorrect, 2 * kCases);
}
TEST(NoFalseAlarms, MoeRouterAndBalanceLoss) {
  lmo::testing::sweep("router", kCases, router_case, kCorrect, 2 * kCases);
}
TEST(NoFalseAlarms, MoeLayer) {
  lmo::testing::sweep("moe_layer", kCases / 4, moe_layer_case, kCorrect, kCases / 2);
}

}  // namespace
}  // namespace lmo::oracle
