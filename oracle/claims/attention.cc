// C13–C17 and E03: attention variants, masks, KV cache, online softmax (000 §4; 001 §4-2; 002;
// 004 Llama 3).
#include <algorithm>
#include <cmath>

#include "oracle/claims/eval.h"
#include "reference/attention.h"
#include "reference/attention_online.h"
#include "reference/kv_cache.h"
#include "reference/softmax.h"

namespace lmo::oracle::claims {
namespace {

using ref::AttentionConfig;
using ref::MaskKind;

constexpr int64_t kTokens = 6, kHeads = 4, kDim = 4;

AttentionConfig config(int64_t g, MaskKind mask = MaskKind::kCausal) {
  AttentionConfig cfg;
  cfg.heads = kHeads;
  cfg.kv_heads = g;
  cfg.head_dim = kDim;
  cfg.mask = mask;
  return cfg;
}

// Columns [first, first + width) of m.
template <class N>
Mat<N> columns(const Mat<N>& m, int64_t first, int64_t width) {
  Mat<N> out(m.rows, width);
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t c = 0; c < width; ++c) out(r, c) = m(r, first + c);
  }
  return out;
}

// Rows [first, first + count) of m.
template <class N>
Mat<N> rows(const Mat<N>& m, int64_t first, int64_t count) {
  Mat<N> out(count, m.cols);
  for (int64_t r = 0; r < count; ++r) {
    for (int64_t c = 0; c < m.cols; ++c) out(r, c) = m(first + r, c);
  }
  return out;
}

template <class N>
mp max_abs(const Mat<N>& m) {
  return claims::max_abs(m.data);
}

// Kernel trials (claims_kernel.h): the same identities as attention and attention_decode runs
// on the ref-f32 trial's f32 inputs. A kernel may order its sums differently on the two sides
// (one head alone, or h heads at once), so they are held to the allowances, not bitwise.

// Rows [r0, r0 + nr) and columns [c0, c0 + nc) of a row-major matrix with `cols` columns.
template <class T>
std::vector<T> block(const std::vector<T>& m, int64_t cols, int64_t r0, int64_t nr, int64_t c0,
                     int64_t nc) {
  std::vector<T> out;
  for (int64_t r = r0; r < r0 + nr; ++r) {
    for (int64_t c = c0; c < c0 + nc; ++c) out.push_back(m[static_cast<size_t>(r * cols + c)]);
  }
  return out;
}

nlohmann::json attention_params(int64_t h, int64_t g, int64_t tokens, const char* mask) {
  return {{"h", h}, {"g", g}, {"d", kDim}, {"tokens", tokens}, {"mask", mask}};
}

std::vector<KernelValue> run_attention(KernelRunner& k, const nlohmann::json& params,
                                       const std::vector<double>& q, const std::vector<double>& kk,
                                       const std::vector<double>& v,
                                       const char* op = "attention") {
  return k.run(op, params, {{"q", q}, {"k", kk}, {"v", v}}).at("o");
}

mp max_abs(const std::vector<double>& v) {
  mp m = 0;
  for (double x : v) m = std::max(m, mp(std::fabs(x)));
  return m;
}

void kernel_c13(const ClaimContext& ctx, int t, KernelRunner& k, IdentityCheck& c) {
  const int64_t hd = kHeads * kDim;
  const auto q = f32_uniform(ctx.seed, key("C13", "q", t), kTokens * hd, -1, 1);
  for (int64_t g : {int64_t{1}, int64_t{2}, kHeads}) {
    const std::string gs = std::to_string(g);
    const auto kk = f32_uniform(ctx.seed, key("C13", "k" + gs, t), kTokens * g * kDim, -1, 1);
    const auto v = f32_uniform(ctx.seed, key("C13", "v" + gs, t), kTokens * g * kDim, -1, 1);
    const auto out = run_attention(k, attention_params(kHeads, g, kTokens, "causal"), q, kk, v);
    std::vector<double> k_rep(static_cast<size_t>(kTokens * hd)), v_rep(k_rep.size());
    for (int64_t j = 0; j < kHeads; ++j) {
      const int64_t kv = j * g / kHeads;
      const auto oj = run_attention(k, attention_params(1, 1, kTokens, "causal"),
                                    block(q, hd, 0, kTokens, j * kDim, kDim),
                                    block(kk, g * kDim, 0, kTokens, kv * kDim, kDim),
                                    block(v, g * kDim, 0, kTokens, kv * kDim, kDim));
      c.add_all(oj, block(out, hd, 0, kTokens, j * kDim, kDim), max_abs(v));
      for (int64_t r = 0; r < kTokens; ++r) {
        for (int64_t col = 0; col < kDim; ++col) {
          const auto at = static_cast<size_t>(r * hd + j * kDim + col);
          k_rep[at] = kk[static_cast<size_t>(r * g * kDim + kv * kDim + col)];
          v_rep[at] = v[static_cast<size_t>(r * g * kDim + kv * kDim + col)];
        }
      }
    }
    c.add_all(run_attention(k, attention_params(kHeads, kHeads, kTokens, "causal"), q, k_rep,
                            v_rep),
              out, max_abs(v));
  }
}

void kernel_c14(const ClaimContext& ctx, int t, KernelRunner& k, IdentityCheck& c) {
  const auto q = f32_uniform(ctx.seed, key("C14", "q", t), kTokens * kHeads * kDim, -1, 1);
  const auto kk = f32_uniform(ctx.seed, key("C14", "k", t), kTokens * 2 * kDim, -1, 1);
  const auto v = f32_uniform(ctx.seed, key("C14", "v", t), kTokens * 2 * kDim, -1, 1);
  nlohmann::json win = attention_params(kHeads, 2, kTokens, "window");
  win["window"] = kTokens + t % 3;
  c.add_all(run_attention(k, win, q, kk, v),
            run_attention(k, attention_params(kHeads, 2, kTokens, "causal"), q, kk, v),
            max_abs(v));
}

void kernel_c15(const ClaimContext& ctx, int t, KernelRunner& k, IdentityCheck& c) {
  const int64_t tokens = 8, hd = kHeads * kDim, gd = 2 * kDim;
  const auto q = f32_uniform(ctx.seed, key("C15", "q", t), tokens * hd, -1, 1);
  const auto kk = f32_uniform(ctx.seed, key("C15", "k", t), tokens * gd, -1, 1);
  const auto v = f32_uniform(ctx.seed, key("C15", "v", t), tokens * gd, -1, 1);
  const auto lengths = uniform_ints(ctx.seed, key("C15", "len", t), tokens, 1, 5);
  std::vector<std::pair<int64_t, int64_t>> docs;
  std::vector<int64_t> starts;
  for (int64_t at = 0, i = 0; at < tokens; ++i) {
    const int64_t len = std::min(lengths[static_cast<size_t>(i)], tokens - at);
    docs.push_back({at, len});
    if (at > 0) starts.push_back(at);
    at += len;
  }
  nlohmann::json doc = attention_params(kHeads, 2, tokens, "document");
  doc["doc_starts"] = starts;
  const auto out = run_attention(k, doc, q, kk, v);
  for (auto [first, len] : docs) {
    const auto alone = run_attention(k, attention_params(kHeads, 2, len, "causal"),
                                     block(q, hd, first, len, 0, hd),
                                     block(kk, gd, first, len, 0, gd),
                                     block(v, gd, first, len, 0, gd));
    c.add_all(alone, block(out, hd, first, len, 0, hd), max_abs(v));
  }
}

void kernel_c16(const ClaimContext& ctx, int t, KernelRunner& k, IdentityCheck& c) {
  const int64_t hd = kHeads * kDim, gd = 2 * kDim;
  const auto q = f32_uniform(ctx.seed, key("C16", "q", t), kTokens * hd, -1, 1);
  const auto kk = f32_uniform(ctx.seed, key("C16", "k", t), kTokens * gd, -1, 1);
  const auto v = f32_uniform(ctx.seed, key("C16", "v", t), kTokens * gd, -1, 1);
  for (int64_t s = 0; s < kTokens; ++s) {
    const nlohmann::json dec = {{"h", kHeads}, {"g", 2}, {"d", kDim}, {"cache_len", s + 1}};
    const auto step = run_attention(k, dec, block(q, hd, s, 1, 0, hd),
                                    block(kk, gd, 0, s + 1, 0, gd), block(v, gd, 0, s + 1, 0, gd),
                                    "attention_decode");
    const auto full = run_attention(k, attention_params(kHeads, 2, s + 1, "causal"),
                                    block(q, hd, 0, s + 1, 0, hd), block(kk, gd, 0, s + 1, 0, gd),
                                    block(v, gd, 0, s + 1, 0, gd));
    c.add_all(step, block(full, hd, s, 1, 0, hd), max_abs(v));
  }
}

// C17 on a kernel backend: online_softmax for every tile size against softmax. The online
// log-sum-exp and tiled attention have no op of their own (attention takes no tile), so that
// part of the claim stays on the reference backends.
void kernel_c17(const ClaimContext& ctx, int t, KernelRunner& k, IdentityCheck& c) {
  const int64_t n = 12;
  const auto z = f32_uniform(ctx.seed, key("C17", "z", t), n, -6, 6);
  const auto p = k.run("softmax", {{"rows", 1}, {"n", n}}, {{"z", z}}).at("p");
  for (int64_t tile = 1; tile <= n; ++tile) {
    c.add_all(k.run("online_softmax", {{"rows", 1}, {"n", n}, {"tile", tile}}, {{"z", z}}).at("p"),
              p, mp(1));
  }
}

// C13: attention with h query heads and g KV heads equals, head by head, single-head attention
// of query head j on KV head ⌊j·g/h⌋ (g = h: MHA; g = 1: MQA), and equals MHA on K, V with each
// KV head repeated h/g times.
ClaimEvidence eval_c13(const ClaimContext& ctx) {
  return run_identity(ctx, 6, FloatBound::kBitwise, [&]<class N>(int t, IdentityCheck& c) {
    const auto q = uniform_mat<N>(ctx.seed, key("C13", "q", t), kTokens, kHeads * kDim, -1, 1);
    for (int64_t g : {int64_t{1}, int64_t{2}, kHeads}) {
      const std::string gs = std::to_string(g);
      const auto k = uniform_mat<N>(ctx.seed, key("C13", "k" + gs, t), kTokens, g * kDim, -1, 1);
      const auto v = uniform_mat<N>(ctx.seed, key("C13", "v" + gs, t), kTokens, g * kDim, -1, 1);
      const Mat<N> out = ref::attention<N>(q, k, v, config(g));
      Mat<N> k_rep(kTokens, kHeads * kDim), v_rep(kTokens, kHeads * kDim);
      for (int64_t j = 0; j < kHeads; ++j) {
        const int64_t kv = j * g / kHeads;
        AttentionConfig one = config(1);
        one.heads = 1;
        const Mat<N> oj = ref::attention<N>(columns(q, j * kDim, kDim), columns(k, kv * kDim, kDim),
                                            columns(v, kv * kDim, kDim), one);
        c.add_all(oj.data, columns(out, j * kDim, kDim).data, max_abs(v));
        for (int64_t r = 0; r < kTokens; ++r) {
          for (int64_t col = 0; col < kDim; ++col) {
            k_rep(r, j * kDim + col) = k(r, kv * kDim + col);
            v_rep(r, j * kDim + col) = v(r, kv * kDim + col);
          }
        }
      }
      c.add_all(ref::attention<N>(q, k_rep, v_rep, config(kHeads)).data, out.data, max_abs(v));
    }
  },
      [&](int t, KernelRunner& k, IdentityCheck& c) { kernel_c13(ctx, t, k, c); });
}

// The input positions on which output row `row` of L stacked residual attention layers
// (x ← x + attention(x, x, x), window w) depends, found by perturbing each input row in mp.
int64_t measured_reach(int64_t layers, int64_t window, int64_t tokens, uint64_t seed) {
  AttentionConfig cfg;
  cfg.head_dim = 2;
  cfg.mask = MaskKind::kSlidingWindow;
  cfg.window = window;
  auto stack = [&](Mat<mp> x) {
    for (int64_t l = 0; l < layers; ++l) {
      const Mat<mp> a = ref::attention<mp>(x, x, x, cfg);
      for (size_t i = 0; i < x.data.size(); ++i) x.data[i] += a.data[i];
    }
    return x;
  };
  const Mat<mp> x = uniform_mat<mp>(seed, "C14/reach/x", tokens, 2, -1, 1);
  const Mat<mp> base = stack(x);
  int64_t reach = 0;
  for (int64_t j = 0; j < tokens; ++j) {
    Mat<mp> xp = x;
    xp(j, 0) += mp("1e-20");
    const Mat<mp> out = stack(xp);
    if (out(tokens - 1, 0) != base(tokens - 1, 0) || out(tokens - 1, 1) != base(tokens - 1, 1)) {
      ++reach;
    }
  }
  return reach;
}

// C14: a sliding window w ≥ T is full causal attention; L layers of window w reach L(w − 1) + 1
// tokens.
ClaimEvidence eval_c14(const ClaimContext& ctx) {
  ClaimEvidence ev =
      run_identity(ctx, 6, FloatBound::kBitwise, [&]<class N>(int t, IdentityCheck& c) {
        const auto q = uniform_mat<N>(ctx.seed, key("C14", "q", t), kTokens, kHeads * kDim, -1, 1);
        const auto k = uniform_mat<N>(ctx.seed, key("C14", "k", t), kTokens, 2 * kDim, -1, 1);
        const auto v = uniform_mat<N>(ctx.seed, key("C14", "v", t), kTokens, 2 * kDim, -1, 1);
        AttentionConfig win = config(2, MaskKind::kSlidingWindow);
        win.window = kTokens + t % 3;
        c.add_all(ref::attention<N>(q, k, v, win).data, ref::attention<N>(q, k, v, config(2)).data,
                  max_abs(v));
      },
      [&](int t, KernelRunner& k, IdentityCheck& c) { kernel_c14(ctx, t, k, c); });
  std::string reaches;
  bool reach_ok = true;
  for (auto [layers, window] : {std::pair<int64_t, int64_t>{1, 3}, {2, 3}, {3, 2}, {2, 4}}) {
    const int64_t expected = layers * (window - 1) + 1;
    const int64_t got = measured_reach(layers, window, expected + 2, ctx.seed);
    reach_ok = reach_ok && got == expected;
    reaches += (reaches.empty() ? "" : ", ") + std::string("L=") + std::to_string(layers) +
               " w=" + std::to_string(window) + ": " + std::to_string(got) + " (expected " +
               std::to_string(expected) + ")";
  }
  ev.summary = "measured reach (mp, perturbing each input row): " + reaches;
  if (!reach_ok) ev.status = ClaimStatus::kFails;
  return ev;
}

// C15: causal attention with a document mask equals causal attention run on each document alone.
ClaimEvidence eval_c15(const ClaimContext& ctx) {
  return run_identity(ctx, 6, FloatBound::kBitwise, [&]<class N>(int t, IdentityCheck& c) {
    const int64_t tokens = 8;
    const auto q = uniform_mat<N>(ctx.seed, key("C15", "q", t), tokens, kHeads * kDim, -1, 1);
    const auto k = uniform_mat<N>(ctx.seed, key("C15", "k", t), tokens, 2 * kDim, -1, 1);
    const auto v = uniform_mat<N>(ctx.seed, key("C15", "v", t), tokens, 2 * kDim, -1, 1);
    // Documents: contiguous runs with random lengths 1 … 4 (packed sequences, Llama 3).
    const auto lengths = uniform_ints(ctx.seed, key("C15", "len", t), tokens, 1, 5);
    AttentionConfig doc = config(2, MaskKind::kDocument);
    std::vector<std::pair<int64_t, int64_t>> docs;
    for (int64_t at = 0, i = 0; at < tokens; ++i) {
      const int64_t len = std::min(lengths[i], tokens - at);
      docs.push_back({at, len});
      for (int64_t r = 0; r < len; ++r) doc.document_ids.push_back(i);
      at += len;
    }
    const Mat<N> out = ref::attention<N>(q, k, v, doc);
    for (auto [first, len] : docs) {
      const Mat<N> alone =
          ref::attention<N>(rows(q, first, len), rows(k, first, len), rows(v, first, len), config(2));
      c.add_all(alone.data, rows(out, first, len).data, max_abs(v));
    }
  },
      [&](int t, KernelRunner& k, IdentityCheck& c) { kernel_c15(ctx, t, k, c); });
}

// C16: decoding with a KV cache reproduces, at every step, the last row of full causal attention.
ClaimEvidence eval_c16(const ClaimContext& ctx) {
  return run_identity(ctx, 6, FloatBound::kBitwise, [&]<class N>(int t, IdentityCheck& c) {
    const auto q = uniform_mat<N>(ctx.seed, key("C16", "q", t), kTokens, kHeads * kDim, -1, 1);
    const auto k = uniform_mat<N>(ctx.seed, key("C16", "k", t), kTokens, 2 * kDim, -1, 1);
    const auto v = uniform_mat<N>(ctx.seed, key("C16", "v", t), kTokens, 2 * kDim, -1, 1);
    ref::KvCache<N> cache(2, kDim, kDim);
    for (int64_t s = 0; s < kTokens; ++s) {
      const auto step = ref::decode_step<N>(q.row(s), k.row(s), v.row(s), cache, config(2));
      const Mat<N> full = ref::attention<N>(rows(q, 0, s + 1), rows(k, 0, s + 1),
                                            rows(v, 0, s + 1), config(2));
      c.add_all(step, rows(full, s, 1).data, max_abs(v));
    }
  },
      [&](int t, KernelRunner& k, IdentityCheck& c) { kernel_c16(ctx, t, k, c); });
}

// C17: online softmax, online log-sum-exp and tiled attention equal the untiled computation for
// every tile size.
ClaimEvidence eval_c17(const ClaimContext& ctx) {
  return run_identity(ctx, 6, FloatBound::kAnalysis, [&]<class N>(int t, IdentityCheck& c) {
    using S = std::span<const N>;
    const auto z = uniform<N>(ctx.seed, key("C17", "z", t), 12, -6, 6);
    const auto p = ref::softmax<N>(S(z));
    const N lse = ref::logsumexp<N>(S(z));
    for (int64_t tile = 1; tile <= 12; ++tile) {
      c.add_all(ref::online_softmax<N>(S(z), tile), p, mp(1));
      c.add(ref::online_logsumexp<N>(S(z), tile), lse, 1 + abs(value_of(lse)));
    }
    const auto q = uniform_mat<N>(ctx.seed, key("C17", "q", t), kTokens, kHeads * kDim, -1, 1);
    const auto k = uniform_mat<N>(ctx.seed, key("C17", "k", t), kTokens, 2 * kDim, -1, 1);
    const auto v = uniform_mat<N>(ctx.seed, key("C17", "v", t), kTokens, 2 * kDim, -1, 1);
    const Mat<N> full = ref::attention<N>(q, k, v, config(2));
    for (int64_t tile = 1; tile <= kTokens; ++tile) {
      c.add_all(ref::attention_tiled<N>(q, k, v, config(2), tile).data, full.data, max_abs(v));
    }
  },
      [&](int t, KernelRunner& k, IdentityCheck& c) { kernel_c17(ctx, t, k, c); });
}

// E03: MHA has h KV heads; with 1 KV head (the notes' table) the outputs differ.
ClaimEvidence eval_e03(const ClaimContext& ctx) {
  const auto q = uniform_mat<mp>(ctx.seed, "E03/q", kTokens, kHeads * kDim, -1, 1);
  const auto k = uniform_mat<mp>(ctx.seed, "E03/k", kTokens, kHeads * kDim, -1, 1);
  const auto v = uniform_mat<mp>(ctx.seed, "E03/v", kTokens, kHeads * kDim, -1, 1);
  const Mat<mp> mha = ref::attention<mp>(q, k, v, config(kHeads));
  // The notes' "1 KV head": every query head reads KV head 0.
  const Mat<mp> one =
      ref::attention<mp>(q, columns(k, 0, kDim), columns(v, 0, kDim), config(1));
  const int64_t r = kTokens - 1, col = kDim;  // last token, head 1
  const mp gap = relative_difference(mha(r, col), one(r, col));
  Counterexample cx{"T = 6, h = 4, d = 4, causal, uniform[-1, 1) Q, K, V (h KV heads)",
                    "MHA (h = 4 KV heads), output[5, head 1, 0]", show(mha(r, col)),
                    "1 KV head (notes), output[5, head 1, 0]", show(one(r, col))};
  return counterexample_evidence(gap > mp("1e-6"), cx, 1, ClaimStatus::kErratumShown,
                                 static_cast<double>(gap),
                                 "MHA's K, V have shape (b, seq, n_h, d_h): h KV heads (C13 checks "
                                 "attention with g = h is per-head MHA)");
}

}  // namespace

std::vector<Claim> attention_claims() {
  return {
      {"C13", "000 §4.2; 001; 002",
       "GQA with g = h is MHA, with g = 1 is MQA, and equals MHA with each KV head repeated h/g "
       "times",
       ClaimKind::kIdentity, std::string(kBitwiseSource) + "; " + kKernelSource, eval_c13},
      {"C14", "001; 002",
       "sliding-window attention with w >= T equals full causal attention; L layers of window w "
       "reach L(w - 1) + 1 tokens",
       ClaimKind::kIdentity, std::string(kBitwiseSource) + "; " + kKernelSource, eval_c14},
      {"C15", "004 Llama 3", "document masking equals running attention separately on each document",
       ClaimKind::kIdentity, std::string(kBitwiseSource) + "; " + kKernelSource, eval_c15},
      {"C16", "000 §4.1",
       "KV-cache decoding reproduces, at every step, the last row of full causal attention",
       ClaimKind::kIdentity, std::string(kBitwiseSource) + "; " + kKernelSource, eval_c16},
      {"C17", "F17",
       "online/tiled softmax and tiled attention equal the untiled computation for every tile "
       "size",
       ClaimKind::kIdentity,
       std::string(kAnalysisSource) + "; " + kKernelSource +
           " (on kernels: online_softmax against softmax; online log-sum-exp and tiled "
           "attention have no op)",
       eval_c17},
      {"E03", "001 §4-2", "notes' table: MHA has 1 KV head; correct: MHA has h KV heads",
       ClaimKind::kCounterexample, "n/a: the two forms compared in exact arithmetic", eval_e03},
  };
}

}  // namespace lmo::oracle::claims
