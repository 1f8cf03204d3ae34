// C18, C19, C23, E06, E07: counts of parameters, FLOPs and memory (000 §2, §4; 001 §4-2; 004).
// Exact integers: the same on every backend, so each is evaluated once ("exact").
#include <array>
#include <cmath>
#include <vector>

#include "oracle/claims/eval.h"
#include "reference/counted.h"
#include "reference/counts.h"
#include "reference/kv_cache.h"
#include "reference/mla.h"
#include "reference/presets.h"

namespace lmo::oracle::claims {
namespace {

using C = ref::Counted<double>;

// Evidence of an exact integer claim: every (name, formula, measured) triple must agree.
struct IntCheck {
  std::vector<std::string> lines;
  bool ok = true;
  int checks = 0;
  void expect(const std::string& what, int64_t formula, int64_t measured) {
    ++checks;
    if (formula != measured) {
      ok = false;
      lines.push_back(what + ": formula " + std::to_string(formula) + " != measured " +
                      std::to_string(measured));
    }
  }
  ClaimEvidence evidence(std::string summary) const {
    ClaimEvidence ev;
    ev.trials = checks;
    ev.status = ok ? ClaimStatus::kHolds : ClaimStatus::kFails;
    BackendEvidence b;
    b.backend = "exact";
    b.trials = checks;
    b.ok = ok;
    b.note = ok ? "exact integers (the same on every backend)" : lines.front();
    ev.backends.push_back(b);
    ev.summary = std::move(summary);
    return ev;
  }
};

Mat<C> counted(int64_t rows, int64_t cols, int64_t salt) {
  Mat<C> m(rows, cols);
  for (int64_t i = 0; i < rows * cols; ++i) m.data[i] = C(static_cast<double>((i * 7 + salt) % 5));
  return m;
}

// The multiply-adds of one instrumented attention forward (b sequences): the tq new tokens are
// projected to q, k, v (ref::matmul), their queries score against tk keys (the tk − tq cached
// ones are free: made before counting) with ref::dot, P·V is summed left to right, the output
// projected; the softmax runs but is not counted (the notes leave it out). tq = tk = T is the
// full forward, tq = 1 one decode step with a cache of tk.
int64_t instrumented_flops(int64_t b, int64_t tq, int64_t tk, int64_t D, int64_t h, int64_t g,
                           int64_t d) {
  int64_t flops = 0;
  auto kept = [&](const ref::OpCounts& o) { flops += o.add + o.mul; };
  for (int64_t bi = 0; bi < b; ++bi) {
    const Mat<C> x = counted(tq, D, bi), wq = counted(D, h * d, 1), wk = counted(D, g * d, 2),
                 wv = counted(D, g * d, 3), wo = counted(h * d, D, 4);
    Mat<C> k = counted(tk, g * d, 5), v = counted(tk, g * d, 6);  // the cache
    ref::OpCountScope proj;
    const Mat<C> q = ref::matmul<C>(x, wq), k_new = ref::matmul<C>(x, wk),
                 v_new = ref::matmul<C>(x, wv);
    kept(proj.counts());
    for (int64_t r = 0; r < tq; ++r) {
      for (int64_t c = 0; c < g * d; ++c) {
        k(tk - tq + r, c) = k_new(r, c);
        v(tk - tq + r, c) = v_new(r, c);
      }
    }
    Mat<C> o(tq, h * d);
    for (int64_t j = 0; j < h; ++j) {
      const int64_t kv = j * g / h;
      std::vector<C> s(static_cast<size_t>(tk));
      for (int64_t i = 0; i < tq; ++i) {
        ref::OpCountScope sc;
        for (int64_t r = 0; r < tk; ++r) {
          s[r] = ref::dot<C>(q.row(i).subspan(j * d, d), k.row(r).subspan(kv * d, d));
        }
        kept(sc.counts());
        const std::vector<C> p = ref::softmax<C>(std::span<const C>(s));  // not counted
        ref::OpCountScope pv;
        for (int64_t c = 0; c < d; ++c) {
          C acc(0.0);
          for (int64_t r = 0; r < tk; ++r) acc = acc + p[r] * v(r, kv * d + c);
          o(i, j * d + c) = acc;
        }
        kept(pv.counts());
      }
    }
    ref::OpCountScope out;
    (void)ref::matmul<C>(o, wo);
    kept(out.counts());
  }
  return flops;
}

// C18: F23's FLOP and memory formulas equal the counts of an instrumented run.
ClaimEvidence eval_c18(const ClaimContext&) {
  IntCheck ic;
  for (auto [b, T, h, g, d] : {std::array<int64_t, 5>{1, 5, 4, 4, 3}, {2, 4, 4, 2, 2},
                              {1, 3, 2, 1, 4}}) {
    const int64_t D = h * d;
    const std::string shape = "b=" + std::to_string(b) + " T=" + std::to_string(T) +
                              " h=" + std::to_string(h) + " g=" + std::to_string(g) +
                              " d=" + std::to_string(d);
    const int64_t full = instrumented_flops(b, T, T, D, h, g, d);
    ic.expect("attention_flops " + shape, ref::attention_flops(b, T, D, h, g, d).total(), full);
    if (g == h) ic.expect("8bTD^2 + 4bhT^2d " + shape, ref::attention_flops_mha(b, T, h, d), full);
    const int64_t step = instrumented_flops(b, 1, T, D, h, g, d);
    ic.expect("decode_step_flops " + shape, ref::decode_step_flops(b, T, D, h, g, d).total(), step);
    if (g == h) ic.expect("8bD^2 + 4bhtd " + shape, ref::decode_step_flops_mha(b, T, h, d), step);
    // KV cache after T steps: 2·g·T·d elements per sequence.
    ref::KvCache<double> cache(g, d, d);
    for (int64_t t = 0; t < T; ++t) {
      const std::vector<double> kv(static_cast<size_t>(g * d), 1.0);
      cache.append(kv, kv);
    }
    ic.expect("kv_cache_elements " + shape, ref::kv_cache_elements(1, T, g, d), cache.numel());
  }
  return ic.evidence("instrumented Counted<double> runs: projections (ref::matmul), QK^T "
                     "(ref::dot), PV; softmax excluded as in the notes");
}

// C19: 3·d·(8d/3) = 8d² = 2·d·4d (d a multiple of 3, so that 8d/3 is an integer).
ClaimEvidence eval_c19(const ClaimContext&) {
  IntCheck ic;
  for (int64_t d : {3, 12, 768, 3072, 12288, 18432}) {
    ic.expect("d = " + std::to_string(d), ref::ffn_params(d, 4 * d), ref::glu_ffn_params(d, 8 * d / 3));
    ic.expect("8d^2, d = " + std::to_string(d), 8 * d * d, ref::glu_ffn_params(d, 8 * d / 3));
  }
  return ic.evidence("exact for every d divisible by 3; otherwise d_ff is rounded and the counts "
                     "differ by at most 3d");
}

// C23: MLA caches d_c + d_h^R per token (absorbed form) instead of 2·h·d_h.
ClaimEvidence eval_c23(const ClaimContext& ctx) {
  IntCheck ic;
  ref::MlaConfig c;
  c.model_dim = 8, c.heads = 2, c.head_dim = 4, c.rope_dim = 2, c.kv_latent_dim = 3,
  c.q_latent_dim = 5;
  ref::MlaWeights<mp> w{uniform_mat<mp>(ctx.seed, "C23/dq", 8, 5, -1, 1),
                        uniform_mat<mp>(ctx.seed, "C23/uq", 5, 8, -1, 1),
                        uniform_mat<mp>(ctx.seed, "C23/qr", 5, 4, -1, 1),
                        uniform_mat<mp>(ctx.seed, "C23/dkv", 8, 3, -1, 1),
                        uniform_mat<mp>(ctx.seed, "C23/uk", 3, 8, -1, 1),
                        uniform_mat<mp>(ctx.seed, "C23/kr", 8, 2, -1, 1),
                        uniform_mat<mp>(ctx.seed, "C23/uv", 3, 8, -1, 1),
                        uniform_mat<mp>(ctx.seed, "C23/o", 8, 8, -1, 1)};
  const int64_t T = 4;
  const Mat<mp> h = uniform_mat<mp>(ctx.seed, "C23/h", T, 8, -1, 1);
  const auto naive = ref::mla_naive<mp>(h, w, c);
  const auto absorbed = ref::mla_absorbed<mp>(h, ref::mla_absorb<mp>(w, c), c);
  ic.expect("absorbed cache", ref::mla_cache_elements(1, T, 3, 2), absorbed.cache.numel());
  ic.expect("naive cache (2 h d_h + d_h^R per token)", T * (2 * 2 * 4 + 2), naive.cache.numel());
  const ref::ModelPreset& v3 = ref::preset("deepseek-v3");
  const int64_t per_token = ref::mla_cache_elements(1, 1, v3.mla->d_c, v3.mla->d_rope);
  ic.expect("DeepSeek-V3 per token", 512 + 64, per_token);
  ic.expect("MHA per token (h = 128, d_h = 128)", 2 * 128 * 128,
            ref::kv_cache_elements(1, 1, v3.n_heads, v3.mla->d_h));
  return ic.evidence("DeepSeek-V3: " + std::to_string(per_token) + " numbers per token instead "
                     "of 32768 (" + show(mp(32768) / per_token, 4) + "x fewer)");
}

// E06: PaLM's head dimension is 256 (ratio 18432/(48·256) = 1.5), not 258.
ClaimEvidence eval_e06(const ClaimContext&) {
  const ref::ModelPreset& palm = ref::preset("palm-540b");
  const mp published = mp(palm.d_model) / (palm.n_heads * palm.d_head);
  const mp notes = mp(18432) / (48 * 258);
  Counterexample cx{"PaLM 540B: d_model 18432, 48 heads (Chowdhery et al. 2022, Table 1)",
                    "d_model / (h d_head) with the notes' d_head 258", show(notes, 8),
                    "with the published d_head 256", show(published, 8)};
  const bool shown = palm.d_head == 256 && published == mp(3) / 2 && notes != published;
  return counterexample_evidence(shown, cx, 1, ClaimStatus::kErratumShown,
                                 static_cast<double>(relative_difference(notes, published)),
                                 "258 gives 1.488 (which the notes print as 1.48); 256 gives 1.5");
}

// Parameters of a dense GLU decoder: untied embeddings and head, per layer attention + GLU FFN +
// two norm weights, a final norm.
int64_t dense_params(const ref::ModelPreset& p, int64_t d_ff) {
  const int64_t layer = ref::attention_params(p.d_model, p.n_heads, p.n_kv_heads, p.d_head) +
                        ref::glu_ffn_params(p.d_model, d_ff) + 2 * p.d_model;
  return 2 * *p.vocab * p.d_model + *p.n_layers * layer + p.d_model;
}

// E07: Llama 3.1 405B's feed-forward width is 53,248, not 20,480: only the published width gives
// 405B parameters.
ClaimEvidence eval_e07(const ClaimContext&) {
  const ref::ModelPreset& p = ref::preset("llama3.1-405b");
  const int64_t with_notes = dense_params(p, 20480), published = dense_params(p, *p.d_ff);
  Counterexample cx{"Llama 3.1 405B: d 16384, 126 layers, 128 heads, 8 KV heads, d_head 128, "
                    "vocabulary 128256 (untied)",
                    "parameters with d_ff = 20,480 (notes)", std::to_string(with_notes),
                    "parameters with d_ff = 53,248 (published config)", std::to_string(published)};
  const bool shown = *p.d_ff == 53248 && published > 400'000'000'000 &&
                     published < 410'000'000'000 && with_notes < 250'000'000'000;
  return counterexample_evidence(shown, cx, 1, ClaimStatus::kErratumShown,
                                 static_cast<double>(relative_difference(mp(with_notes), mp(published))),
                                 "only 53,248 gives the model's 405B parameters");
}

}  // namespace

std::vector<Claim> count_claims() {
  return {
      {"C18", "000 §4.1–4.2",
       "the FLOP and memory formulas of F23 equal the operation counts of an instrumented "
       "reference run (the terms the notes keep)",
       ClaimKind::kIdentity, "n/a: exact integers", eval_c18},
      {"C19", "000 §2.1; 001 §3-1",
       "GLU with d_ff = 8/3 d has the parameter count of a standard FFN with d_ff = 4d",
       ClaimKind::kIdentity, "n/a: exact integers", eval_c19},
      {"C23", "004", "MLA caches d_c + d_h^R numbers per token instead of 2 h d_h",
       ClaimKind::kIdentity, "n/a: exact integers", eval_c23},
      {"E06", "000 §2.2", "notes: PaLM head dim 258, ratio 1.48; correct: 256, ratio 1.5",
       ClaimKind::kCounterexample, "n/a: exact rationals", eval_e06},
      {"E07", "004", "notes: Llama 3 405B feed-forward 20,480; correct: 53,248 (published config)",
       ClaimKind::kCounterexample, "n/a: exact integers", eval_e07},
  };
}

}  // namespace lmo::oracle::claims
