// The kernels of fast/moe_router.h. Highway skeleton: compiled once per target (see
// fast/targets.cc). The affinities (sigmoid, or the softmax's exponentials, sum and quotients)
// run in vector lanes; the selection (group scores, top-k) is scalar code over the N scores of a
// token, with the reference's ranking rule as its comparison.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/moe_router.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "fast/math-inl.h"
#include "fast/moe_router.h"
#include "fast/reduce-inl.h"
#include "fast/storage-inl.h"
#include "fast/threads.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {

// Tokens per parallel chunk: a token is ~N·20 flops, so a few make a chunk worth a thread.
constexpr int64_t kTokenGrain = 4;
// Experts per parallel chunk of the column sums of expert_balance.
constexpr int64_t kExpertGrain = 64;
// Experts per parallel chunk of aux_free_update (one addition each).
constexpr int64_t kBiasGrain = 4096;

// reference/moe.h moe_detail::ranks_before: true when (va, ia) ranks before (vb, ib).
inline bool RanksBefore(float va, int64_t ia, float vb, int64_t ib) {
  const bool na = std::isnan(va), nb = std::isnan(vb);
  if (na != nb) return na;
  if (!na && va != vb) return vb < va;
  return ia < ib;
}

// y[i] = fn(x[i]) for a row of n values in S, written as f32.
template <Storage S, class D, class Fn>
HWY_INLINE void MapToF32(D d, const Elem<S>* HWY_RESTRICT x, float* HWY_RESTRICT y, size_t n,
                         const Fn& fn) {
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(fn(LoadF<S>(d, x + i)), d, y + i);
  if (i < n) {
    StoreTailF<Storage::f32>(d, fn(LoadTailF<S>(d, x + i, n - i, 0.0f)), y + i, n - i);
  }
}

// softmax(z) into aff (f32): e_i = e^{z_i − m}, their sum in vector lanes, then e_i / Σ. The
// reference's special rows: any NaN, or a non-finite maximum (+inf, or a row of −inf), gives
// NaN everywhere; a −inf beside a finite maximum gives 0.
template <Storage S, class D>
void SoftmaxAffinities(D d, const Elem<S>* HWY_RESTRICT z, float* HWY_RESTRICT aff, size_t n) {
  bool has_nan = false;
  for (size_t i = 0; i < n && !has_nan; ++i) {
    has_nan = std::isnan(load_f32(S, z, static_cast<int64_t>(i)));
  }
  const auto mx = RowFold<S>(
      d, z, n, -std::numeric_limits<float>::infinity(),
      hn::Set(d, -std::numeric_limits<float>::infinity()),
      [](auto a, auto v) { return hn::Max(a, v); }, [](auto a, auto b) { return hn::Max(a, b); });
  const float m = hn::GetLane(hn::MaxOfLanes(d, mx));
  if (has_nan || std::isinf(m)) {
    std::fill(aff, aff + n, std::numeric_limits<float>::quiet_NaN());
    return;
  }
  const auto vm = hn::Set(d, m);
  MapToF32<S>(d, z, aff, n, [&](auto v) { return ExpF(d, hn::Sub(v, vm)); });
  const auto vs = hn::Set(d, RowSum<Storage::f32>(d, aff, n, 1.0f));
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(hn::Div(hn::LoadU(d, aff + i), vs), d, aff + i);
  for (; i < n; ++i) aff[i] /= hn::GetLane(vs);
}

// Per-token scratch, reused over a chunk's tokens.
struct Scratch {
  std::vector<float> aff, sel, group_scores;
  std::vector<int64_t> groups, candidates;
};

// Steps 2–5 of fast/moe_router.h for one token whose affinities are in sc.aff.
template <Storage S>
void SelectAndGate(const float* bias, const RouterConfig& cfg, Scratch& sc, int64_t* experts,
                   Elem<S>* gates) {
  const int64_t n = cfg.experts;
  const float* sel = sc.aff.data();
  if (bias) {
    for (int64_t i = 0; i < n; ++i)
      sc.sel[static_cast<size_t>(i)] = sc.aff[static_cast<size_t>(i)] + bias[i];
    sel = sc.sel.data();
  }
  const auto before = [sel](int64_t a, int64_t b) { return RanksBefore(sel[a], a, sel[b], b); };
  sc.candidates.clear();
  if (cfg.n_group > 1) {
    const int64_t gs = n / cfg.n_group;
    for (int64_t g = 0; g < cfg.n_group; ++g) {
      // The group's best and second best by the ranking rule.
      int64_t first = g * gs, second = -1;
      for (int64_t i = g * gs + 1; i < (g + 1) * gs; ++i) {
        if (before(i, first)) {
          second = first;
          first = i;
        } else if (second < 0 || before(i, second)) {
          second = i;
        }
      }
      sc.group_scores[static_cast<size_t>(g)] =
          cfg.group_score == GroupScore::max ? sel[first] : sel[first] + sel[second];
    }
    sc.groups.resize(static_cast<size_t>(cfg.n_group));
    std::iota(sc.groups.begin(), sc.groups.end(), int64_t{0});
    const float* gsc = sc.group_scores.data();
    std::partial_sort(sc.groups.begin(), sc.groups.begin() + cfg.topk_group, sc.groups.end(),
                      [gsc](int64_t a, int64_t b) { return RanksBefore(gsc[a], a, gsc[b], b); });
    std::sort(sc.groups.begin(), sc.groups.begin() + cfg.topk_group);
    for (int64_t k = 0; k < cfg.topk_group; ++k) {
      const int64_t g = sc.groups[static_cast<size_t>(k)];
      for (int64_t i = g * gs; i < (g + 1) * gs; ++i) sc.candidates.push_back(i);
    }
  } else {
    sc.candidates.resize(static_cast<size_t>(n));
    std::iota(sc.candidates.begin(), sc.candidates.end(), int64_t{0});
  }
  // The ranking rule is a strict total order, so the K best are unique whatever the sort.
  std::partial_sort(sc.candidates.begin(), sc.candidates.begin() + cfg.top_k, sc.candidates.end(),
                    before);
  std::sort(sc.candidates.begin(), sc.candidates.begin() + cfg.top_k);
  float denom = 1.0f;
  if (cfg.normalize) {
    denom = 0.0f;
    for (int64_t k = 0; k < cfg.top_k; ++k)
      denom += sc.aff[static_cast<size_t>(sc.candidates[size_t(k)])];
  }
  for (int64_t k = 0; k < cfg.top_k; ++k) {
    const int64_t e = sc.candidates[static_cast<size_t>(k)];
    const float s = sc.aff[static_cast<size_t>(e)];
    const float g = cfg.normalize ? s / denom : s;
    experts[k] = e;
    store_f32(S, gates, k, g * cfg.routed_scale);
  }
}

template <Storage S>
void RouteTokens(const Elem<S>* z, const float* bias, int64_t tokens, const RouterConfig& cfg,
                 int64_t* experts, Elem<S>* gates, float* affinities) {
  const hn::ScalableTag<float> d;
  const size_t n = static_cast<size_t>(cfg.experts);
  const size_t k = static_cast<size_t>(cfg.top_k);
  parallel_for(tokens, kTokenGrain, [&](int64_t begin, int64_t end) {
    Scratch sc;
    sc.aff.resize(n);
    sc.sel.resize(n);
    sc.group_scores.resize(static_cast<size_t>(cfg.n_group));
    for (int64_t t = begin; t < end; ++t) {
      const Elem<S>* zt = z + static_cast<size_t>(t) * n;
      if (cfg.score == RouterScore::sigmoid) {
        MapToF32<S>(d, zt, sc.aff.data(), n, [&](auto v) { return SigmoidF(d, v); });
      } else {
        SoftmaxAffinities<S>(d, zt, sc.aff.data(), n);
      }
      if (affinities)
        std::copy(sc.aff.begin(), sc.aff.end(), affinities + static_cast<size_t>(t) * n);
      SelectAndGate<S>(bias, cfg, sc, experts + static_cast<size_t>(t) * k,
                       gates + static_cast<size_t>(t) * k);
    }
  });
}

void Route(Storage s, const void* logits, const float* bias, int64_t tokens,
           const RouterConfig& cfg, int64_t* experts, void* gates, float* affinities) {
  WithStorage(s, [&](auto tag) {
    constexpr Storage S = decltype(tag)::value;
    RouteTokens<S>(static_cast<const Elem<S>*>(logits), bias, tokens, cfg, experts,
                   static_cast<Elem<S>*>(gates), affinities);
  });
}

// P_i = (Σ_t s'_{i,t}) / T: the totals Σ_j s_{j,t} per token (when normalizing), then one
// sequential sum over t per expert, experts side by side in the lanes.
void BalanceMeans(int64_t tokens, int64_t n_experts, const float* aff, bool normalize, float* p) {
  const hn::ScalableTag<float> d;
  const size_t n = static_cast<size_t>(n_experts);
  std::vector<float> total(static_cast<size_t>(tokens), 1.0f);
  if (normalize) {
    parallel_for(tokens, kTokenGrain, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        total[static_cast<size_t>(t)] =
            RowSum<Storage::f32>(d, aff + static_cast<size_t>(t) * n, n, 1.0f);
      }
    });
  }
  const auto vt = hn::Set(d, static_cast<float>(tokens));
  const size_t N = hn::Lanes(d);
  parallel_for(n_experts, kExpertGrain, [&](int64_t begin, int64_t end) {
    for (size_t i = static_cast<size_t>(begin); i < static_cast<size_t>(end); i += N) {
      const size_t lanes = std::min(N, static_cast<size_t>(end) - i);
      auto acc = hn::Zero(d);
      for (int64_t t = 0; t < tokens; ++t) {
        const float* row = aff + static_cast<size_t>(t) * n + i;
        const auto v = lanes == N ? hn::LoadU(d, row) : LoadTailF<Storage::f32>(d, row, lanes, 0);
        acc = hn::Add(acc, normalize ? hn::Div(v, hn::Set(d, total[static_cast<size_t>(t)])) : v);
      }
      const auto mean = hn::Div(acc, vt);
      if (lanes == N) {
        hn::StoreU(mean, d, p + i);
      } else {
        StoreTailF<Storage::f32>(d, mean, p + i, lanes);
      }
    }
  });
}

// new_bias = c + step (step = ±γ), or c itself where step is 0 (c + 0 would turn −0 into +0).
template <Storage S>
void AddSteps(const Elem<S>* c, const float* step, int64_t n, Elem<S>* out) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto update = [&](auto vc, auto vs) {
    return hn::IfThenElse(hn::Eq(vs, hn::Zero(d)), vc, hn::Add(vc, vs));
  };
  parallel_for(n, kBiasGrain, [&](int64_t begin, int64_t end) {
    auto i = static_cast<size_t>(begin);
    const auto e = static_cast<size_t>(end);
    for (; i + N <= e; i += N) {
      StoreF<S>(d, update(LoadF<S>(d, c + i), hn::LoadU(d, step + i)), out + i);
    }
    if (i < e) {
      const auto vc = LoadTailF<S>(d, c + i, e - i, 0.0f);
      const auto vs = LoadTailF<Storage::f32>(d, step + i, e - i, 0.0f);
      StoreTailF<S>(d, update(vc, vs), out + i, e - i);
    }
  });
}

void BiasSteps(Storage s, const void* c, const float* step, int64_t n, void* out) {
  WithStorage(s, [&](auto tag) {
    constexpr Storage S = decltype(tag)::value;
    AddSteps<S>(static_cast<const Elem<S>*>(c), step, n, static_cast<Elem<S>*>(out));
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <stdexcept>
#include <string>

#include "fast/kernel_api.h"

namespace lmo::fast {
HWY_EXPORT(Route);
HWY_EXPORT(BalanceMeans);
HWY_EXPORT(BiasSteps);

void moe_router(Storage s, const void* logits, const void* bias, int64_t tokens,
                const RouterConfig& cfg, int64_t* experts, void* gates, float* affinities) {
  const char* fn = "moe_router";
  detail::check_storage(fn, s);
  detail::check_count(fn, "tokens", tokens, 0);
  detail::check_router_config(fn, cfg);
  detail::check_ptr(fn, "logits", logits, tokens > 0);
  detail::check_ptr(fn, "experts", experts, tokens > 0);
  detail::check_ptr(fn, "gates", gates, tokens > 0);
  // The bias once as f32 (exact), shared by every token.
  std::vector<float> b;
  if (bias) {
    b.resize(static_cast<size_t>(cfg.experts));
    for (int64_t i = 0; i < cfg.experts; ++i) b[static_cast<size_t>(i)] = load_f32(s, bias, i);
  }
  HWY_DYNAMIC_DISPATCH(Route)
  (s, logits, bias ? b.data() : nullptr, tokens, cfg, experts, gates, affinities);
}

void expert_balance(int64_t tokens, int64_t n_experts, int64_t top_k, const int64_t* experts,
                    const float* affinities, bool normalize_affinities, int64_t* counts, float* p) {
  const char* fn = "expert_balance";
  detail::check_balance_args(fn, tokens, n_experts, top_k, experts, affinities, counts, p);
  detail::check_selections(fn, experts, tokens, n_experts, top_k);
  // Counting is exact in integers, so it needs no fixed order; it is cheap, so it is serial.
  std::fill(counts, counts + n_experts, int64_t{0});
  for (int64_t i = 0; i < tokens * top_k; ++i) ++counts[experts[i]];
  HWY_DYNAMIC_DISPATCH(BalanceMeans)(tokens, n_experts, affinities, normalize_affinities, p);
}

float load_balance_loss(const int64_t* counts, const float* p, int64_t tokens, int64_t n_experts,
                        int64_t top_k, float alpha) {
  detail::check_loss_args("load_balance_loss", counts, p, tokens, n_experts, top_k, alpha);
  // Σ_i counts_i·P_i: each product exact in double (a count below 2^29 times a 24-bit P).
  double total = 0;
  for (int64_t i = 0; i < n_experts; ++i) total += static_cast<double>(counts[i]) * p[i];
  const double f_scale = static_cast<double>(n_experts) / (static_cast<double>(top_k) * tokens);
  return static_cast<float>(static_cast<double>(alpha) * (f_scale * total));
}

void aux_free_update(Storage s, const void* bias, const int64_t* load, int64_t n, float gamma,
                     void* new_bias) {
  const char* fn = "aux_free_update";
  detail::check_storage(fn, s);
  const int64_t total = detail::checked_load_total(fn, bias, load, n, gamma, new_bias);
  std::vector<float> step(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t scaled = n * load[i];
    step[static_cast<size_t>(i)] = scaled < total ? gamma : scaled > total ? -gamma : 0.0f;
  }
  HWY_DYNAMIC_DISPATCH(BiasSteps)(s, bias, step.data(), n, new_bias);
}

}  // namespace lmo::fast
#endif  // HWY_ONCE
