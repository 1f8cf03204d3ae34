// F20 mixture-of-experts routing and layer (DeepSeek-V3; softmax routing of Switch/GShard),
// F21 the load-balance loss, F22 auxiliary-loss-free bias balancing. Source: seeds/004
// "DeepSeek-V3 MoE", "Auxiliary-Loss-Free Load Balancing", "Loss-based balancing".
//
// Routing of one token, in order:
//  1. affinities s_i: sigmoid(z_i) (DeepSeek-V3) or softmax(z)_i (Switch, GShard, DeepSeek-V2),
//     z_i = uᵀe_i the router logits;
//  2. selection scores s_i + c_i, where the balancing bias c_i (F22) is used ONLY here;
//  3. optionally group-limited routing: experts split into n_group equal contiguous groups, a
//     group's score is the sum of its two largest selection scores (V3) or its largest (V2), the
//     topk_group best groups are kept and every expert of another group is excluded (the "masked
//     to −∞" of the formula: excluded experts never compete, whatever their score);
//  4. TopK of the selection scores over the remaining experts;
//  5. gates from the UNBIASED affinities: g_i = s_i / Σ_{j selected} s_j (E04: the sum runs over
//     the selected experts, not all N; the all-expert normalization belongs to F21's P_i), or
//     g_i = s_i without normalization (Switch: the softmax probability itself); then times the
//     routed scaling factor (2.5 in DeepSeek-V3, 16 in V2).
//
// Ranking rule (top-k and top-groups): larger score first; on exactly equal scores the lower
// index wins; a NaN ranks above every number (torch.topk's order), NaNs among themselves by
// index. The full ranking is returned with its scores so an oracle can judge near-ties with a
// margin (DESIGN.md: discrete outputs compare as sets, ties within a stated margin allowed).
//
// Kernel shortcuts the reference does not copy: the `+ 1e-20` some implementations add to the
// gate denominator, and masking excluded groups with 0 instead of −∞ (wrong when biased scores
// are negative).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/linalg.h"
#include "reference/moe_kinds.h"
#include "reference/numeric.h"
#include "reference/parallel.h"
#include "reference/softmax.h"

namespace lmo::ref {

template <class T>
struct RouterConfig {
  int64_t top_k = 1;  // K: experts selected per token
  RouterScore score = RouterScore::kSigmoid;
  int64_t n_group = 1;     // 1: no group limit
  int64_t topk_group = 1;  // groups kept when n_group > 1
  GroupScore group_score = GroupScore::kTopTwoSum;
  // g_i = s_i / Σ_selected s_j (DeepSeek-V3, Mixtral); false: g_i = s_i (Switch, GShard and
  // DeepSeek-V2 take the softmax probability itself).
  bool normalize = true;
  T routed_scale = T(1);         // multiplies every gate (2.5 in DeepSeek-V3)
  bool literal_sigmoid = false;  // see router_sigmoid
  // A simulated kernel's rounding points (oracle/ops/moe.h; empty for the reference): each
  // affinity s_i as the kernel holds it for its gates, the gate denominator Σ_selected s_j, and
  // s_i / Σ before the routed scale. The selection stays on the unrounded scores: held in bf16,
  // sigmoid values near 1 tie, and a run that picked among ties by index would be judged on the
  // gates of other experts than the reference's; a kernel's own selection from its rounded
  // scores is judged against the exact ones with the tie margin instead (judge_topk).
  std::function<T(const T&)> round_scores, round_sum, round_normalized;
};

template <class T>
struct Routing {
  RouterScore score = RouterScore::kSigmoid;
  std::vector<T> affinities;           // s_i, all N experts, unbiased
  std::vector<T> selection_scores;     // s_i + c_i, all N experts (= s_i without bias)
  std::vector<T> group_scores;         // per group (empty without group limit)
  std::vector<int64_t> group_ranking;  // all groups, best first (empty without group limit)
  std::vector<int64_t> groups;         // the kept groups, ascending
  std::vector<int64_t> ranking;        // eligible experts (in kept groups), best first
  std::vector<T> ranked_scores;        // selection_scores[ranking[k]]
  std::vector<int64_t> experts;        // the K selected experts, ascending index
  std::vector<T> gates;                // g_i for experts[k], same order
};

// sigmoid(z) = 1 / (1 + e^{−z}). The default evaluation takes e^{−|z|} only, as
// 1 / (1 + e^{−z}) for z ≥ 0 and e^{z} / (1 + e^{z}) for z < 0: equal in exact arithmetic, and
// the exponential never overflows (in fp8 E4M3, which has no infinity, e^{6.1} is already NaN
// and the literal form returns NaN for z < −6.1). literal = true evaluates 1 / (1 + e^{−z}).
template <class T>
T router_sigmoid(const T& z, bool literal = false) {
  using std::exp;
  if (literal || !(z < T(0))) return T(T(1) / T(T(1) + T(exp(T(-z)))));
  const T e = exp(z);
  return T(e / T(T(1) + e));
}

namespace moe_detail {

// The ranking rule above: true when (va, ia) ranks before (vb, ib).
template <class T>
bool ranks_before(const T& va, int64_t ia, const T& vb, int64_t ib) {
  using std::isnan;
  const bool na = isnan(va), nb = isnan(vb);
  if (na != nb) return na;
  if (!na && va != vb) return vb < va;
  return ia < ib;
}

// Indices of `candidates` sorted by the ranking rule on values[i].
template <class T>
std::vector<int64_t> rank(std::vector<int64_t> candidates, const std::vector<T>& values) {
  std::sort(candidates.begin(), candidates.end(), [&](int64_t a, int64_t b) {
    return ranks_before(values[static_cast<size_t>(a)], a, values[static_cast<size_t>(b)], b);
  });
  return candidates;
}

inline void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

}  // namespace moe_detail

// Step 5: r.gates for the experts r.experts (ascending) from r.affinities; the denominator, the
// sum over the selected experts in ascending index order, accumulates in Acc. Also what gives
// the gates of another selection than route's own (the oracle judges a kernel's gates on the
// kernel's selection where it differs from the reference's within the tie margin).
template <class T, class Acc = T>
void set_gates(Routing<T>& r, const RouterConfig<T>& cfg) {
  T denom(1);
  if (cfg.normalize) {
    Acc s(0);
    for (int64_t i : r.experts) s = s + convert<Acc>(r.affinities[static_cast<size_t>(i)]);
    denom = convert<T>(s);
    if (cfg.round_sum) denom = cfg.round_sum(denom);
  }
  r.gates.clear();
  r.gates.reserve(r.experts.size());
  for (int64_t i : r.experts) {
    const T& s = r.affinities[static_cast<size_t>(i)];
    T g = s;
    if (cfg.normalize) {
      g = T(s / denom);
      if (cfg.round_normalized) g = cfg.round_normalized(g);
    }
    r.gates.push_back(T(g * cfg.routed_scale));
  }
}

// F20 routing of one token from its router logits z_i = uᵀe_i (see the file comment for the
// steps). bias: the F22 balancing bias c (N values), or empty for none. Sums (the gate
// denominator over the selected experts in ascending index order, the group score, the softmax
// denominator) accumulate in Acc.
template <class T, class Acc = T>
Routing<T> route(std::span<const T> logits, std::span<const T> bias, const RouterConfig<T>& cfg) {
  using moe_detail::require;
  const int64_t n = static_cast<int64_t>(logits.size());
  require(n >= 1, "route: logits must name at least one expert, got 0");
  require(bias.empty() || static_cast<int64_t>(bias.size()) == n,
          "route: bias has " + std::to_string(bias.size()) +
              " values, expected 0 or N = " + std::to_string(n));
  require(cfg.top_k >= 1 && cfg.top_k <= n, "route: top_k = " + std::to_string(cfg.top_k) +
                                                ", expected 1 … N = " + std::to_string(n));
  require(cfg.n_group >= 1 && n % cfg.n_group == 0,
          "route: n_group = " + std::to_string(cfg.n_group) +
              ", expected a divisor of N = " + std::to_string(n));
  const int64_t group_size = n / cfg.n_group;
  if (cfg.n_group > 1) {
    require(cfg.topk_group >= 1 && cfg.topk_group <= cfg.n_group,
            "route: topk_group = " + std::to_string(cfg.topk_group) +
                ", expected 1 … n_group = " + std::to_string(cfg.n_group));
    require(cfg.group_score != GroupScore::kTopTwoSum || group_size >= 2,
            "route: group size N / n_group = " + std::to_string(group_size) +
                ", expected at least 2 for the top-2-sum group score");
    require(cfg.top_k <= cfg.topk_group * group_size,
            "route: top_k = " + std::to_string(cfg.top_k) + " exceeds the " +
                std::to_string(cfg.topk_group * group_size) + " experts of the kept groups");
  }

  Routing<T> r;
  r.score = cfg.score;
  if (cfg.score == RouterScore::kSigmoid) {
    r.affinities.reserve(static_cast<size_t>(n));
    for (const T& z : logits) r.affinities.push_back(router_sigmoid(z, cfg.literal_sigmoid));
  } else {
    r.affinities = softmax<T, Acc>(logits);
  }
  r.selection_scores = r.affinities;
  if (!bias.empty()) {
    for (int64_t i = 0; i < n; ++i) {
      r.selection_scores[static_cast<size_t>(i)] =
          T(r.affinities[static_cast<size_t>(i)] + bias[static_cast<size_t>(i)]);
    }
  }
  // After the selection scores: a simulated kernel's selection follows the unrounded scores, so
  // that its gates are those of the reference's experts (see RouterConfig::round_scores).
  if (cfg.round_scores) {
    for (T& a : r.affinities) a = cfg.round_scores(a);
  }

  std::vector<int64_t> eligible;
  if (cfg.n_group > 1) {
    r.group_scores.reserve(static_cast<size_t>(cfg.n_group));
    for (int64_t grp = 0; grp < cfg.n_group; ++grp) {
      std::vector<int64_t> members(static_cast<size_t>(group_size));
      std::iota(members.begin(), members.end(), grp * group_size);
      const std::vector<int64_t> order = moe_detail::rank(members, r.selection_scores);
      const T& first = r.selection_scores[static_cast<size_t>(order[0])];
      if (cfg.group_score == GroupScore::kMax) {
        r.group_scores.push_back(first);
      } else {
        const T& second = r.selection_scores[static_cast<size_t>(order[1])];
        r.group_scores.push_back(convert<T>(Acc(convert<Acc>(first) + convert<Acc>(second))));
      }
    }
    std::vector<int64_t> all_groups(static_cast<size_t>(cfg.n_group));
    std::iota(all_groups.begin(), all_groups.end(), int64_t{0});
    r.group_ranking = moe_detail::rank(all_groups, r.group_scores);
    r.groups.assign(r.group_ranking.begin(), r.group_ranking.begin() + cfg.topk_group);
    std::sort(r.groups.begin(), r.groups.end());
    for (int64_t grp : r.groups) {
      for (int64_t i = grp * group_size; i < (grp + 1) * group_size; ++i) eligible.push_back(i);
    }
  } else {
    eligible.resize(static_cast<size_t>(n));
    std::iota(eligible.begin(), eligible.end(), int64_t{0});
  }

  r.ranking = moe_detail::rank(eligible, r.selection_scores);
  r.ranked_scores.reserve(r.ranking.size());
  for (int64_t i : r.ranking) r.ranked_scores.push_back(r.selection_scores[static_cast<size_t>(i)]);
  r.experts.assign(r.ranking.begin(), r.ranking.begin() + cfg.top_k);
  std::sort(r.experts.begin(), r.experts.end());
  set_gates<T, Acc>(r, cfg);
  return r;
}

// Routing of every row of a (tokens × N) logit matrix, one token per parallel_for index.
template <class T, class Acc = T>
std::vector<Routing<T>> route_tokens(const Mat<T>& logits, std::span<const T> bias,
                                     const RouterConfig<T>& cfg) {
  std::vector<Routing<T>> out(static_cast<size_t>(logits.rows));
  parallel_for(logits.rows, [&](int64_t t) {
    out[static_cast<size_t>(t)] = route<T, Acc>(logits.row(t), bias, cfg);
  });
  return out;
}

// The N gates of a routing as a dense vector: g_i for the selected experts, 0 otherwise.
template <class T>
std::vector<T> dense_gates(const Routing<T>& r) {
  std::vector<T> g(r.affinities.size(), T(0));
  for (size_t k = 0; k < r.experts.size(); ++k) g[static_cast<size_t>(r.experts[k])] = r.gates[k];
  return g;
}

// An expert φ: R^d → R^d (in DeepSeek-V3 a SwiGLU FFN, F05). The layer takes experts as
// callables so it depends on no particular FFN.
template <class T>
using ExpertFn = std::function<std::vector<T>(std::span<const T>)>;

// F20 layer: h' = u + Σ_{shared} φ_i(u) + Σ_{i selected} g_i φ_i(u). Shared experts are always
// evaluated; a routed expert only when selected. Per output element the sum accumulates in Acc
// in the order of the formula: u, the shared experts by index, then g_i φ_i(u) (the product
// formed in T) by ascending expert index. residual = false drops the u term (the DeepSeek code
// adds the residual in the block instead).
template <class T, class Acc = T>
std::vector<T> moe_layer(std::span<const T> u, const Routing<T>& routing,
                         std::span<const ExpertFn<T>> shared, std::span<const ExpertFn<T>> routed,
                         bool residual = true) {
  using moe_detail::require;
  const size_t d = u.size();
  require(routed.size() == routing.affinities.size(),
          "moe_layer: " + std::to_string(routed.size()) +
              " routed experts, the routing has N = " + std::to_string(routing.affinities.size()));
  require(routing.gates.size() == routing.experts.size(),
          "moe_layer: routing has " + std::to_string(routing.experts.size()) + " experts but " +
              std::to_string(routing.gates.size()) + " gates");
  auto run = [&](const ExpertFn<T>& phi, const std::string& name) {
    std::vector<T> y = phi(u);
    require(y.size() == d, "moe_layer: " + name + " returned " + std::to_string(y.size()) +
                               " values, expected d = " + std::to_string(d));
    return y;
  };
  std::vector<std::vector<T>> shared_out, routed_out;
  for (size_t i = 0; i < shared.size(); ++i) {
    shared_out.push_back(run(shared[i], "shared expert " + std::to_string(i)));
  }
  for (int64_t i : routing.experts) {
    require(i >= 0 && static_cast<size_t>(i) < routed.size(),
            "moe_layer: selected expert " + std::to_string(i) + " out of range");
    routed_out.push_back(run(routed[static_cast<size_t>(i)], "routed expert " + std::to_string(i)));
  }
  std::vector<T> h(d);
  const bool contract = fma_contraction();  // the g_i·φ_i products (mul_add)
  for (size_t j = 0; j < d; ++j) {
    Acc acc = residual ? convert<Acc>(u[j]) : Acc(0);
    for (const auto& y : shared_out) acc = acc + convert<Acc>(y[j]);
    for (size_t k = 0; k < routed_out.size(); ++k) {
      acc = mul_add(routing.gates[k], routed_out[k][j], acc, contract);
    }
    h[j] = convert<T>(acc);
  }
  return h;
}

template <class T>
struct BalanceLoss {
  T loss;
  std::vector<T> f;  // f_i = N / (K·T) · #{t : token t selects i};  Σ_i f_i = N
  std::vector<T> p;  // P_i = (1/T) Σ_t s'_{i,t}
};

// F21 L = α Σ_i f_i P_i over a sequence of T tokens (rows of `affinities`, N columns), with
// f_i = N/(K·T) Σ_t 1[token t selects i] and P_i = (1/T) Σ_t s'_{i,t}, where s'_{i,t} =
// s_{i,t} / Σ_j s_{j,t} are the affinities normalized over ALL N experts (E04). With
// normalize_affinities = false the rows are taken as already normalized (softmax routing).
// f_i is a ratio of integers: it is formed exactly and rounded once to T. Sums over t, over j
// and over i accumulate in Acc in ascending order; each product f_i P_i is formed in T.
template <class T, class Acc = T>
BalanceLoss<T> load_balance_loss(const Mat<T>& affinities,
                                 const std::vector<std::vector<int64_t>>& selected, int64_t top_k,
                                 const T& alpha, bool normalize_affinities = true) {
  using moe_detail::require;
  const int64_t tokens = affinities.rows, n = affinities.cols;
  require(tokens >= 1 && n >= 1, "load_balance_loss: affinities must be at least 1x1, got " +
                                     std::to_string(tokens) + "x" + std::to_string(n));
  require(static_cast<int64_t>(selected.size()) == tokens,
          "load_balance_loss: " + std::to_string(selected.size()) + " selections for " +
              std::to_string(tokens) + " tokens");
  require(top_k >= 1 && top_k <= n, "load_balance_loss: top_k = " + std::to_string(top_k) +
                                        ", expected 1 … N = " + std::to_string(n));
  std::vector<int64_t> count(static_cast<size_t>(n), 0);
  for (int64_t t = 0; t < tokens; ++t) {
    const auto& sel = selected[static_cast<size_t>(t)];
    require(static_cast<int64_t>(sel.size()) == top_k,
            "load_balance_loss: token " + std::to_string(t) + " selects " +
                std::to_string(sel.size()) + " experts, expected K = " + std::to_string(top_k));
    std::vector<bool> seen(static_cast<size_t>(n), false);
    for (int64_t i : sel) {
      require(i >= 0 && i < n && !seen[static_cast<size_t>(i)],
              "load_balance_loss: token " + std::to_string(t) + " selects expert " +
                  std::to_string(i) + ": out of range or repeated");
      seen[static_cast<size_t>(i)] = true;
      ++count[static_cast<size_t>(i)];
    }
  }

  Mat<T> sn = affinities;
  if (normalize_affinities) {
    for (int64_t t = 0; t < tokens; ++t) {
      const T total = convert<T>(sum<T, Acc>(affinities.row(t)));
      for (int64_t i = 0; i < n; ++i) sn(t, i) = T(affinities(t, i) / total);
    }
  }

  BalanceLoss<T> out;
  const T t_count = from_mp<T>(mp(tokens));
  Acc total(0);
  const bool contract = fma_contraction();  // the f_i·P_i products (mul_add)
  for (int64_t i = 0; i < n; ++i) {
    out.f.push_back(from_mp<T>(mp(n * count[static_cast<size_t>(i)]) / mp(top_k * tokens)));
    Acc s(0);
    for (int64_t t = 0; t < tokens; ++t) s = s + convert<Acc>(sn(t, i));
    out.p.push_back(T(convert<T>(s) / t_count));
    total = mul_add(out.f.back(), out.p.back(), total, contract);
  }
  out.loss = T(alpha * convert<T>(total));
  return out;
}

// F21 from routings of one sequence: affinities normalized over all experts for sigmoid
// routing, taken as they are (already a distribution) for softmax routing.
template <class T, class Acc = T>
BalanceLoss<T> load_balance_loss(const std::vector<Routing<T>>& routings, const T& alpha) {
  moe_detail::require(!routings.empty(), "load_balance_loss: no tokens");
  const int64_t n = static_cast<int64_t>(routings[0].affinities.size());
  Mat<T> s(static_cast<int64_t>(routings.size()), n);
  std::vector<std::vector<int64_t>> sel;
  for (size_t t = 0; t < routings.size(); ++t) {
    moe_detail::require(static_cast<int64_t>(routings[t].affinities.size()) == n,
                        "load_balance_loss: token " + std::to_string(t) + " routes over " +
                            std::to_string(routings[t].affinities.size()) + " experts, expected " +
                            std::to_string(n));
    for (int64_t i = 0; i < n; ++i)
      s(static_cast<int64_t>(t), i) = routings[t].affinities[static_cast<size_t>(i)];
    sel.push_back(routings[t].experts);
  }
  return load_balance_loss<T, Acc>(s, sel, static_cast<int64_t>(routings[0].experts.size()), alpha,
                                   routings[0].score == RouterScore::kSigmoid);
}

// Tokens routed to each of the n experts.
template <class T>
std::vector<int64_t> expert_load(const std::vector<Routing<T>>& routings, int64_t n) {
  std::vector<int64_t> load(static_cast<size_t>(n), 0);
  for (const auto& r : routings) {
    for (int64_t i : r.experts) {
      moe_detail::require(i >= 0 && i < n, "expert_load: expert " + std::to_string(i) +
                                               " out of range for N = " + std::to_string(n));
      ++load[static_cast<size_t>(i)];
    }
  }
  return load;
}

// γ = 0.001, DeepSeek-V3's bias update speed.
template <class T>
T default_bias_update_speed() {
  return constant<T>("0.001");
}

// F22 one auxiliary-loss-free balancing step: c_i ← c_i + γ·sign(mean load − load_i), i.e.
// + γ for an under-loaded expert (load below the mean over the N experts), − γ for an
// over-loaded one, and no change for an expert exactly at the mean (the sign of 0 is 0, as in
// DeepSeek's update `bias += γ·sign(mean − load)`). The comparison with the mean is done in
// integers (N·load_i against Σ_j load_j), so it is exact.
template <class T>
std::vector<T> update_balance_bias(std::span<const T> bias, std::span<const int64_t> load,
                                   const T& gamma) {
  moe_detail::require(!bias.empty() && load.size() == bias.size(),
                      "update_balance_bias: " + std::to_string(load.size()) + " loads for " +
                          std::to_string(bias.size()) + " biases (expected equal, nonzero)");
  const int64_t n = static_cast<int64_t>(bias.size());
  const int64_t total = std::accumulate(load.begin(), load.end(), int64_t{0});
  std::vector<T> out(bias.begin(), bias.end());
  for (int64_t i = 0; i < n; ++i) {
    const int64_t scaled = n * load[static_cast<size_t>(i)];
    if (scaled < total) out[static_cast<size_t>(i)] = T(out[static_cast<size_t>(i)] + gamma);
    if (scaled > total) out[static_cast<size_t>(i)] = T(out[static_cast<size_t>(i)] - gamma);
  }
  return out;
}

}  // namespace lmo::ref
