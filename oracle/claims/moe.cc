// C24, C25, E04: mixture-of-experts routing and balancing (004 DeepSeek-V3, "Loss-based
// balancing").
#include <algorithm>
#include <numeric>

#include "oracle/claims/eval.h"
#include "reference/moe.h"

namespace lmo::oracle::claims {
namespace {

constexpr int64_t kExperts = 8, kTopK = 2, kModel = 4;

template <class N>
ref::RouterConfig<N> router() {
  ref::RouterConfig<N> r;
  r.top_k = kTopK;
  r.score = ref::RouterScore::kSigmoid;
  return r;
}

// C24 on a kernel backend: the gates moe_router writes for the selected experts sum to 1, with
// and without the balancing bias. That the gates follow the unbiased affinities, and the shared
// experts, need the affinities and the layer, which the op does not output: reference only.
void kernel_c24(const ClaimContext& ctx, int t, KernelRunner& k, IdentityCheck& c) {
  const auto z = f32_uniform(ctx.seed, key("C24", "z", t), kExperts, -3, 3);
  const auto bias = f32_uniform(ctx.seed, key("C24", "bias", t), kExperts, -0.5, 0.5);
  nlohmann::json params = {{"tokens", 1}, {"experts", kExperts}, {"top_k", kTopK},
                           {"score", "sigmoid"}};
  const auto plain = k.run("moe_router", params, {{"logits", z}}).at("gates");
  params["bias"] = true;
  const auto biased = k.run("moe_router", params, {{"logits", z}, {"bias", bias}}).at("gates");
  for (const auto* gates : {&plain, &biased}) {
    KernelValue sum = exact_value(0);
    for (const KernelValue& g : *gates) sum = sum + g;
    c.add_exact(sum, mp(1), mp(1));
  }
}

// C24: the selected gates sum to 1; the balancing bias changes which experts are chosen but never
// the gate formula (gates come from the unbiased affinities of the selected experts); shared
// experts are always active.
ClaimEvidence eval_c24(const ClaimContext& ctx) {
  int changed = 0;
  bool in_mp = false;  // the selection change is counted in exact arithmetic only
  ClaimEvidence ev =
      run_identity(ctx, 8, FloatBound::kAnalysis, [&]<class N>(int t, IdentityCheck& c) {
        using S = std::span<const N>;
        const auto z = uniform<N>(ctx.seed, key("C24", "z", t), kExperts, -3, 3);
        const auto bias = uniform<N>(ctx.seed, key("C24", "bias", t), kExperts, -0.5, 0.5);
        const auto plain = ref::route<N>(S(z), {}, router<N>());
        const auto biased = ref::route<N>(S(z), S(bias), router<N>());
        for (const auto* r : {&plain, &biased}) {
          N sum(0);
          for (const N& g : r->gates) sum = sum + g;
          c.add(sum, N(1), mp(1));
          // The gate formula on the unbiased affinities of the selected experts.
          N denom(0);
          for (int64_t i : r->experts) denom = denom + plain.affinities[i];
          for (size_t k = 0; k < r->experts.size(); ++k) {
            c.add(r->gates[k], N(plain.affinities[r->experts[k]] / denom), mp(1));
          }
        }
        if constexpr (is_mp_v<N>) {
          in_mp = true;
          changed += plain.experts != biased.experts;
        }
        // Shared experts: present in the output whatever the routing (here all routed experts
        // output 0, so the layer is u + Σ shared φ(u)).
        const auto u = uniform<N>(ctx.seed, key("C24", "u", t), kModel, -1, 1);
        const auto scale = uniform<N>(ctx.seed, key("C24", "shared", t), kModel, 0.5, 1.5);
        std::vector<ref::ExpertFn<N>> shared{[&](std::span<const N> x) {
          std::vector<N> y;
          for (size_t i = 0; i < x.size(); ++i) y.push_back(x[i] * scale[i]);
          return y;
        }};
        std::vector<ref::ExpertFn<N>> routed(
            kExperts, [](std::span<const N> x) { return std::vector<N>(x.size(), N(0)); });
        const auto out = ref::moe_layer<N>(S(u), biased, shared, routed);
        for (int64_t i = 0; i < kModel; ++i) c.add(out[i], N(u[i] + N(u[i] * scale[i])), mp(1));
      },
      [&](int t, KernelRunner& k, IdentityCheck& c) { kernel_c24(ctx, t, k, c); });
  if (!in_mp) return ev;  // a backend selection without ref: the count needs mp
  ev.summary = "the bias changed the selection in " + std::to_string(changed) + " of 8 trials (mp)";
  if (changed == 0) ev.status = ClaimStatus::kFails;
  return ev;
}

// C25: α under perfectly balanced routing with uniform affinities; invariant to permuting the
// experts; Σ_i f_i = N.
ClaimEvidence eval_c25(const ClaimContext& ctx) {
  return run_identity(ctx, 6, FloatBound::kAnalysis, [&]<class N>(int t, IdentityCheck& c) {
    const N alpha = rounded<N>(mp("1e-3")) ;
    const int64_t tokens = kExperts;
    // Balanced: token s selects experts s and s + 1 (mod N): every expert K·T/N = 2 times.
    std::vector<std::vector<int64_t>> balanced;
    for (int64_t s = 0; s < tokens; ++s) balanced.push_back({s, (s + 1) % kExperts});
    const Mat<N> uniform_aff(tokens, kExperts, std::vector<N>(tokens * kExperts, N(0.5)));
    const auto lb = ref::load_balance_loss<N>(uniform_aff, balanced, kTopK, alpha);
    c.add(lb.loss, alpha, mp("1e-3"));
    // Random affinities and selections; then the experts relabelled by a permutation.
    const Mat<N> aff = uniform_mat<N>(ctx.seed, key("C25", "s", t), tokens, kExperts, 0.05, 1);
    std::vector<std::vector<int64_t>> sel;
    for (int64_t s = 0; s < tokens; ++s) {
      auto pick = uniform_ints(ctx.seed, key("C25", "sel" + std::to_string(s), t), 2, 0, kExperts);
      if (pick[1] == pick[0]) pick[1] = (pick[0] + 1) % kExperts;
      sel.push_back(pick);
    }
    std::vector<int64_t> perm(kExperts);
    std::iota(perm.begin(), perm.end(), 0);
    std::rotate(perm.begin(), perm.begin() + 1 + t % (kExperts - 1), perm.end());
    std::swap(perm[0], perm[kExperts - 1]);
    Mat<N> aff_p(tokens, kExperts);
    std::vector<std::vector<int64_t>> sel_p = sel;
    for (int64_t s = 0; s < tokens; ++s) {
      for (int64_t i = 0; i < kExperts; ++i) aff_p(s, perm[i]) = aff(s, i);
      for (int64_t& i : sel_p[s]) i = perm[i];
    }
    const auto a = ref::load_balance_loss<N>(aff, sel, kTopK, alpha);
    const auto b = ref::load_balance_loss<N>(aff_p, sel_p, kTopK, alpha);
    c.add(a.loss, b.loss, mp("1e-3"));
    N fsum(0);
    for (const N& f : a.f) fsum = fsum + f;
    c.add(fsum, N(kExperts), mp(kExperts));
  },
      ReferenceOnly{
          "the claim sets the routings and affinities directly (a balanced routing, random "
          "selections and their relabelling); the load_balance_loss op derives both from its "
          "own logits, so no op run can pose these inputs"});
}

// E04: normalizing the gates over all N experts (the notes) instead of the selected ones.
ClaimEvidence eval_e04(const ClaimContext& ctx) {
  using S = std::span<const mp>;
  const auto z = uniform<mp>(ctx.seed, "E04/z", kExperts, -3, 3);
  const auto r = ref::route<mp>(S(z), {}, router<mp>());
  mp all = 0, sel = 0, notes_sum = 0;
  for (const mp& s : r.affinities) all += s;
  for (const mp& g : r.gates) sel += g;
  for (int64_t i : r.experts) notes_sum += r.affinities[i] / all;
  Counterexample cx{"N = 8 sigmoid affinities of logits " + show_vector(z) + ", K = 2, selected " +
                        std::to_string(r.experts[0]) + ", " + std::to_string(r.experts[1]),
                    "sum of gates normalized over the selected experts (F20)", show(sel),
                    "sum of gates s_i / sum over all N (notes)", show(notes_sum)};
  const bool shown = abs(sel - 1) < mp("1e-40") && notes_sum < mp("0.99");
  return counterexample_evidence(shown, cx, 1, ClaimStatus::kErratumShown,
                                 static_cast<double>(relative_difference(sel, notes_sum)),
                                 "the all-expert normalization belongs to the balance loss's P_i");
}

}  // namespace

std::vector<Claim> moe_claims() {
  return {
      {"C24", "004",
       "MoE gates of the selected experts sum to 1; the balancing bias changes which experts are "
       "chosen but never the gate formula; shared experts are always active",
       ClaimKind::kIdentity,
       std::string(kAnalysisSource) + "; " + kKernelSource + " (on kernels: the gates sum to 1)",
       eval_c24},
      {"C25", "004",
       "load-balance loss = alpha under perfectly balanced routing with uniform affinities; "
       "invariant to permuting experts; sum_i f_i = N",
       ClaimKind::kIdentity, kAnalysisSource, eval_c25},
      {"E04", "004",
       "notes: DeepSeek-V3 gate s_i = s'_i / sum over all N_r experts; correct: normalize over "
       "the selected experts",
       ClaimKind::kCounterexample, "n/a: the two forms compared in exact arithmetic", eval_e04},
  };
}

}  // namespace lmo::oracle::claims
