// C21, C22, E05: multi-head latent attention (004 DeepSeek-V2, eq. 37–47).
#include <cmath>

#include "oracle/claims/eval.h"
#include "reference/mla.h"
#include "reference/rope.h"

namespace lmo::oracle::claims {
namespace {

ref::MlaConfig small_config() {
  ref::MlaConfig c;
  c.model_dim = 8, c.heads = 2, c.head_dim = 4, c.rope_dim = 2, c.kv_latent_dim = 3,
  c.q_latent_dim = 5;
  return c;
}

template <class N>
ref::MlaWeights<N> weights(uint64_t seed, const std::string& id, int t) {
  auto m = [&](const char* name, int64_t r, int64_t c) {
    return uniform_mat<N>(seed, key(id, name, t), r, c, -0.5, 0.5);
  };
  return {m("dq", 8, 5), m("uq", 5, 8), m("qr", 5, 4), m("dkv", 8, 3),
          m("uk", 3, 8), m("kr", 8, 2), m("uv", 3, 8), m("o", 8, 8)};
}

// C21: absorbed MLA (W^UK on the query side, W^UV folded into W^O, attention over the cached
// latents) equals naive MLA.
ClaimEvidence eval_c21(const ClaimContext& ctx) {
  return run_identity(ctx, 3, FloatBound::kAnalysis, [&]<class N>(int t, IdentityCheck& c) {
    const ref::MlaConfig cfg = small_config();
    const auto w = weights<N>(ctx.seed, "C21", t);
    const Mat<N> h = uniform_mat<N>(ctx.seed, key("C21", "h", t), 5, 8, -1, 1);
    const auto naive = ref::mla_naive<N>(h, w, cfg);
    if (!all_finite(naive.u.data)) return c.skip("10000 (the RoPE base) is not finite here");
    const auto absorbed = ref::mla_absorbed<N>(h, ref::mla_absorb<N>(w, cfg), cfg);
    c.add_all(absorbed.u.data, naive.u.data, mp(1) + max_abs(naive.u.data));
  },
      ReferenceOnly{
          "absorbed vs naive MLA: the mla_decode op evaluates one form only, so a backend cannot "
          "run both sides"});
}

// C22: RoPE applied to the compressed q^C = c^Q W^UQ and k^C = c^KV W^UK cannot be absorbed: the
// score is c^Q A(m, n) c^KVᵀ with A(m, n)_ab = RoPE(W^UQ_a, m)·RoPE(W^UK_b, n), a matrix that
// depends on the positions (through n − m), so no single matrix can be precomputed.
ClaimEvidence eval_c22(const ClaimContext& ctx) {
  const int64_t dc_q = 3, dc = 3, dh = 4;
  const auto wuq = uniform_mat<mp>(ctx.seed, "C22/uq", dc_q, dh, -1, 1);
  const auto wuk = uniform_mat<mp>(ctx.seed, "C22/uk", dc, dh, -1, 1);
  const auto cq = uniform<mp>(ctx.seed, "C22/cq", dc_q, -1, 1);
  const auto ckv = uniform<mp>(ctx.seed, "C22/ckv", dc, -1, 1);
  const std::vector<mp> inv = ref::rope_inv_freq<mp>(dh, mp(10000));
  auto rope = [&](std::span<const mp> x, int64_t p) {
    return ref::rope<mp>(x, mp(p), std::span<const mp>(inv), ref::RopeLayout::kInterleaved);
  };
  auto absorbed = [&](int64_t m, int64_t n) {
    Mat<mp> a(dc_q, dc);
    for (int64_t i = 0; i < dc_q; ++i) {
      for (int64_t j = 0; j < dc; ++j) {
        const auto qi = rope(wuq.row(i), m), kj = rope(wuk.row(j), n);
        a(i, j) = ref::dot<mp>(std::span<const mp>(qi), std::span<const mp>(kj));
      }
    }
    return a;
  };
  // The direct score with RoPE on the decompressed vectors, and through A: equal (to 1e-40).
  mp worst = 0;
  for (auto [m, n] : {std::pair<int64_t, int64_t>{3, 1}, {7, 5}, {10, 2}}) {
    const auto q = rope(std::span<const mp>(ref::vecmat<mp>(std::span<const mp>(cq), wuq)), m);
    const auto k = rope(std::span<const mp>(ref::vecmat<mp>(std::span<const mp>(ckv), wuk)), n);
    const mp direct = ref::dot<mp>(std::span<const mp>(q), std::span<const mp>(k));
    const Mat<mp> a = absorbed(m, n);
    mp via = 0;
    for (int64_t i = 0; i < dc_q; ++i) {
      for (int64_t j = 0; j < dc; ++j) via += cq[i] * a(i, j) * ckv[j];
    }
    worst = std::max(worst, mp(abs(direct - via) / (1 + abs(direct))));
  }
  const Mat<mp> a1 = absorbed(0, 1), a2 = absorbed(0, 2), a1s = absorbed(5, 6);
  const mp gap = relative_difference(a1(0, 0), a2(0, 0));
  const mp shift_gap = abs(a1(0, 0) - a1s(0, 0));
  Counterexample cx{"d_c' = d_c = 3, d_h = 4, base 10000, W^UQ, W^UK uniform[-1, 1), W^UQ_0 = " +
                        show_vector(std::vector<mp>(wuq.row(0).begin(), wuq.row(0).end())),
                    "A(m=0, n=1)[0,0]", show(a1(0, 0)), "A(m=0, n=2)[0,0]", show(a2(0, 0))};
  const bool found = gap > mp("1e-6") && worst < mp("1e-40") && shift_gap < mp("1e-40");
  return counterexample_evidence(found, cx, 1, ClaimStatus::kHolds, static_cast<double>(gap),
                                 "score = c^Q A(m, n) c^KV^T to " + show(worst, 3) +
                                     "; A depends on n - m only (A(5,6) = A(0,1) to " +
                                     show(shift_gap, 3) + "): decoupled RoPE is needed");
}

// E05: eq. 46 as printed scales by 1/sqrt(d_h + d_h²); the intended 1/sqrt(d_h + d_h^R).
ClaimEvidence eval_e05(const ClaimContext& ctx) {
  ref::MlaConfig cfg = small_config();
  const auto w = weights<mp>(ctx.seed, "E05", 0);
  const Mat<mp> h = uniform_mat<mp>(ctx.seed, "E05/h", 5, 8, -1, 1);
  const auto good = ref::mla_naive<mp>(h, w, cfg);
  cfg.scale = ref::MlaScale::kLiteralE05;
  const auto literal = ref::mla_naive<mp>(h, w, cfg);
  const int64_t r = 4;  // last token: it attends to five keys
  const mp gap = relative_difference(good.u(r, 0), literal.u(r, 0));
  Counterexample cx{"d = 8, h = 2, d_h = 4, d_h^R = 2, d_c = 3, d_c' = 5, T = 5; scales 1/sqrt(6) "
                    "vs 1/sqrt(20)",
                    "u[4][0] with 1/sqrt(d_h + d_h^R)", show(good.u(r, 0)),
                    "u[4][0] with 1/sqrt(d_h + d_h^2) (as printed)", show(literal.u(r, 0))};
  return counterexample_evidence(gap > mp("1e-6"), cx, 1, ClaimStatus::kErratumShown,
                                 static_cast<double>(gap),
                                 "the printed scale changes the attention outputs");
}

}  // namespace

std::vector<Claim> mla_claims() {
  return {
      {"C21", "004", "MLA absorbed attention equals naive MLA attention", ClaimKind::kIdentity,
       kAnalysisSource, eval_c21},
      {"C22", "004 \"Decoupled Rotary Position Embedding\"",
       "MLA cannot absorb RoPE applied to the compressed keys: the would-be absorbed matrix "
       "depends on the relative position",
       ClaimKind::kCounterexample, "n/a: a counterexample in exact arithmetic", eval_c22},
      {"E05", "004 eq. 46",
       "notes: MLA score scale 1/sqrt(d_h + d_h^2); correct: 1/sqrt(d_h + d_h^R)",
       ClaimKind::kCounterexample, "n/a: the two forms compared in exact arithmetic", eval_e05},
  };
}

}  // namespace lmo::oracle::claims
