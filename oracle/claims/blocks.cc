// C20 and C27: block layouts (002 "Parallel layers", "Pre-vs-post norm", "'double' norm";
// 000 §1.1).
#include <vector>

#include "oracle/claims/eval.h"
#include "reference/attention.h"
#include "reference/blocks.h"
#include "reference/ffn.h"
#include "reference/norms.h"

namespace lmo::oracle::claims {
namespace {

constexpr int64_t kTokens = 4, kModel = 8, kHeads = 2, kHeadDim = 4, kHidden = 12;

template <class N>
struct Layer {
  Mat<N> wq, wk, wv, wo, w1, w2;
  std::vector<N> g1, g2, g3, g4;
};

template <class N>
Layer<N> layer(uint64_t seed, int t) {
  auto m = [&](const char* name, int64_t r, int64_t c) {
    return uniform_mat<N>(seed, key("blocks", name, t), r, c, -0.5, 0.5);
  };
  auto g = [&](const char* name) { return uniform<N>(seed, key("blocks", name, t), kModel, 0.5, 1.5); };
  return {m("wq", kModel, kHeads * kHeadDim), m("wk", kModel, kHeads * kHeadDim),
          m("wv", kModel, kHeads * kHeadDim), m("wo", kHeads * kHeadDim, kModel),
          m("w1", kModel, kHidden), m("w2", kHidden, kModel), g("g1"), g("g2"), g("g3"), g("g4")};
}

template <class N>
ref::AttentionConfig causal() {
  ref::AttentionConfig c;
  c.heads = kHeads;
  c.kv_heads = kHeads;
  c.head_dim = kHeadDim;
  c.mask = ref::MaskKind::kCausal;
  return c;
}

// Attention's output projection after the core, given its projected inputs.
template <class N>
Mat<N> attn_tail(const Mat<N>& q, const Mat<N>& k, const Mat<N>& v, const Layer<N>& w) {
  return ref::matmul<N>(ref::attention<N>(q, k, v, causal<N>()), w.wo);
}
template <class N>
Mat<N> attn(const Mat<N>& x, const Layer<N>& w) {
  return attn_tail(ref::matmul<N>(x, w.wq), ref::matmul<N>(x, w.wk), ref::matmul<N>(x, w.wv), w);
}
template <class N>
Mat<N> mlp(const Mat<N>& x, const Layer<N>& w) {
  return ref::ffn<N>(x, w.w1, w.w2, ref::Activation::kSiLU);
}
template <class N>
Mat<N> norm(const Mat<N>& x, const std::vector<N>& g) {
  return ref::rmsnorm<N>(x, std::span<const N>(g), rounded<N>(mp("1e-5")));
}

// C20: the attention-input and MLP-input products fused into one (concatenated weights) give the
// same values as the separate products, and the parallel block with one shared norm equals
// x + MLP(LN(x)) + Attn(LN(x)) with the norm evaluated separately for each branch.
ClaimEvidence eval_c20(const ClaimContext& ctx) {
  return run_identity(ctx, 4, FloatBound::kBitwise, [&]<class N>(int t, IdentityCheck& c) {
    const Layer<N> w = layer<N>(ctx.seed, t);
    const Mat<N> x = uniform_mat<N>(ctx.seed, key("C20", "x", t), kTokens, kModel, -1, 1);
    const Mat<N> n = norm(x, w.g1);
    const auto parts = ref::fused_projections<N>(n, {&w.wq, &w.wk, &w.wv, &w.w1});
    const Mat<N>* sep[] = {&w.wq, &w.wk, &w.wv, &w.w1};
    for (size_t i = 0; i < 4; ++i) c.add_all(parts[i].data, ref::matmul<N>(n, *sep[i]).data, mp(1));
    auto at = [&](const Mat<N>& y) { return attn(y, w); };
    auto ml = [&](const Mat<N>& y) { return mlp(y, w); };
    auto nm = [&](const Mat<N>& y) { return norm(y, w.g1); };
    const Mat<N> shared = ref::parallel_block(x, at, ml, nm);
    const Mat<N> separate = ref::residual_add(ref::residual_add(x, mlp(norm(x, w.g1), w)),
                                              attn(norm(x, w.g1), w));
    c.add_all(shared.data, separate.data, mp(1));
    const Mat<N> fused = ref::parallel_block_fused<N>(
        x, nm, {&w.wq, &w.wk, &w.wv}, {&w.w1},
        [&](const std::vector<Mat<N>>& a) { return attn_tail(a[0], a[1], a[2], w); },
        [&](const std::vector<Mat<N>>& m) {
          Mat<N> h = m[0];
          for (N& v : h.data) v = ref::activate(ref::Activation::kSiLU, v);
          return ref::matmul<N>(h, w.w2);
        });
    c.add_all(fused.data, shared.data, mp(1));
  },
      ReferenceOnly{
          "fused vs separate projections: no op computes a bare matrix product, so no backend "
          "can run either side"});
}

// C27: post-LN, pre-LN, double-norm and OLMo 2 blocks equal their equations written out with the
// F-rows (norm, attention, FFN, residual additions).
ClaimEvidence eval_c27(const ClaimContext& ctx) {
  return run_identity(ctx, 4, FloatBound::kBitwise, [&]<class N>(int t, IdentityCheck& c) {
    using ref::residual_add;
    const Layer<N> w = layer<N>(ctx.seed, t);
    const Mat<N> x = uniform_mat<N>(ctx.seed, key("C27", "x", t), kTokens, kModel, -1, 1);
    auto at = [&](const Mat<N>& y) { return attn(y, w); };
    auto ml = [&](const Mat<N>& y) { return mlp(y, w); };
    auto n1 = [&](const Mat<N>& y) { return norm(y, w.g1); };
    auto n2 = [&](const Mat<N>& y) { return norm(y, w.g2); };
    auto n3 = [&](const Mat<N>& y) { return norm(y, w.g3); };
    auto n4 = [&](const Mat<N>& y) { return norm(y, w.g4); };
    {  // post-LN: x2 = x + Attn(x), x3 = LN(x2), x5 = x3 + FFN(x3), out = LN'(x5)
      const Mat<N> x3 = n1(residual_add(x, attn(x, w)));
      c.add_all(ref::post_ln_block(x, at, ml, n1, n2).data,
                n2(residual_add(x3, mlp(x3, w))).data, mp(1));
    }
    {  // pre-LN: x3 = x + Attn(LN(x)), out = x3 + FFN(LN'(x3))
      const Mat<N> x3 = residual_add(x, attn(n1(x), w));
      c.add_all(ref::pre_ln_block(x, at, ml, n1, n2).data,
                residual_add(x3, mlp(n2(x3), w)).data, mp(1));
    }
    {  // double: x3 = x + Post(Attn(Pre(x))), out = x3 + Post'(FFN(Pre'(x3)))
      const Mat<N> x3 = residual_add(x, n2(attn(n1(x), w)));
      c.add_all(ref::double_norm_block(x, at, ml, n1, n2, n3, n4).data,
                residual_add(x3, n4(mlp(n3(x3), w))).data, mp(1));
    }
    {  // OLMo 2: x3 = x + Norm(Attn(x)), out = x3 + Norm'(FFN(x3))
      const Mat<N> x3 = residual_add(x, n1(attn(x, w)));
      c.add_all(ref::olmo2_block(x, at, ml, n1, n2).data,
                residual_add(x3, n2(mlp(x3, w))).data, mp(1));
    }
  },
      ReferenceOnly{
          "not yet written as op runs (a decoder_block run against the norm, attention and "
          "FFN runs it is composed of)"});
}

}  // namespace

std::vector<Claim> block_claims() {
  return {
      {"C20", "002 \"Parallel layers\"",
       "parallel block: the attention-input and MLP-input matmuls fuse into one (concatenated "
       "weights give identical results), and the norm can be shared",
       ClaimKind::kIdentity, kBitwiseSource, eval_c20},
      {"C27", "002; 000 §1.1",
       "post-LN, pre-LN, double-norm and OLMo 2 blocks follow their equations (block output = "
       "composition of the F-rows)",
       ClaimKind::kIdentity, kBitwiseSource, eval_c27},
  };
}

}  // namespace lmo::oracle::claims
