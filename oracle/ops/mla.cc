#include "oracle/ops/mla.h"

#include "oracle/ops/families.h"
#include "oracle/ops/limits.h"

namespace lmo::oracle {

std::vector<InputDecl> MlaDecodeOp::inputs() const {
  const int64_t h = p_.heads, t = p_.cache_len;
  // W^UK with entries of variance 1/d_h keeps q̃ at unit scale, so the logits have a spread of
  // a few units, as in a trained model, instead of a one-hot softmax.
  return {{"q_c", {1, h * p_.head_dim}, Dist::kNormal, 0, 1},
          {"q_r", {1, h * p_.rope_dim}, Dist::kNormal, 0, 1},
          {"c_kv", {t, p_.latent_dim}, Dist::kNormal, 0, 1},
          {"k_r", {t, p_.rope_dim}, Dist::kNormal, 0, 1},
          {"w_uk",
           {p_.latent_dim, h * p_.head_dim},
           Dist::kNormal,
           0,
           1 / std::sqrt(static_cast<double>(p_.head_dim))}};
}

std::vector<OutputDecl> MlaDecodeOp::outputs() const {
  return {{"o", {1, p_.heads * p_.latent_dim}}};
}

void add_mla_ops(std::vector<OpInfo>& ops) {
  ops.push_back({"mla_decode", "F19, F16",
                 "absorbed MLA decode step over cached latents c^KV and rotary keys k^R; scale "
                 "1/√(d_h + d_h^R)",
                 [](ParamReader& r) {
                   MlaDecodeParams p;
                   p.heads = r.integer("h", 1, kMaxHeads);
                   p.head_dim = r.integer("d_h", 1, kMaxWidth);
                   p.rope_dim = r.integer("d_rope", 2, kMaxWidth);
                   if (p.rope_dim % 2 != 0)
                     r.fail("d_rope", "expected an even number (RoPE pairs)");
                   p.latent_dim = r.integer("d_c", 1, kMaxWidth);
                   p.cache_len = r.integer("cache_len", 1, kMaxRows);
                   p.rope_base = r.real("rope_base", 1, 1e12, 10000.0);
                   p.layout = r.choice("rope_layout", {"interleaved", "half_split"},
                                       "interleaved") == "interleaved"
                                  ? ref::RopeLayout::kInterleaved
                                  : ref::RopeLayout::kHalfSplit;
                   return std::make_unique<MlaDecodeOp>(p);
                 }});
}

}  // namespace lmo::oracle
