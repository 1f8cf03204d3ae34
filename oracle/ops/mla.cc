#include "oracle/ops/mla.h"

#include <string>

#include "oracle/core/decimal_text.h"
#include "oracle/ops/families.h"
#include "oracle/ops/limits.h"
#include "oracle/ops/rope.h"  // read_rope_scaling

namespace lmo::oracle {
namespace {

// "scaling": "none" or "yarn" with the rope op's keys (factor, original_context, beta_fast,
// beta_slow), plus mscale_all_dim ≥ 0 (default 0: no temperature, since 0.1·0·ln s + 1 = 1;
// DeepSeek-V3's config.json has 1, V2's 0.707).
std::optional<MlaYarn> read_mla_yarn(ParamReader& r, const MlaDecodeParams& p) {
  RopeParams rp;
  rp.rotary_dims = p.rope_dim;
  rp.base = p.rope_base;
  read_rope_scaling(r, rp, {"none", "yarn"}, false);
  if (rp.scaling == RopeScalingRule::kNone) return std::nullopt;
  // The correction dimensions divide by ln base.
  if (!(p.rope_base > 1)) r.fail("rope_base", "expected a base > 1 with YaRN scaling");
  MlaYarn y;
  y.factor = shortest_decimal(rp.factor);
  y.original_context = rp.original_context;
  y.beta_fast = shortest_decimal(rp.beta_fast);
  y.beta_slow = shortest_decimal(rp.beta_slow);
  const double m = r.real("mscale_all_dim", 0, 100, 0.0);
  if (m > 0) y.mscale_all_dim = shortest_decimal(m);
  return y;
}

// One absorbed decode step with DeepSeek-V2's widths (128 heads, d_h 128, d_h^R 64, d_c 512) over
// a cache of 16·tokens. Its useful operations: the absorption q̃ = q^C·W^UKᵀ (2·d_c·d_h per
// head), then per head and cached key q·k over d_c + d_h^R and p·v over d_c; against the sgemm
// of all heads' logits, h × cache × (d_c + d_h^R).
ComputeShape mla_decode_bench() {
  static constexpr int64_t kHeads = 128, kHeadDim = 128, kRopeDim = 64, kLatentDim = 512,
                           kCachePerToken = 16;
  return {"mla_decode",
          [](int64_t tokens) {
            return nlohmann::json{{"cache_len", kCachePerToken * tokens},
                                  {"h", kHeads},
                                  {"d_h", kHeadDim},
                                  {"d_rope", kRopeDim},
                                  {"d_c", kLatentDim}};
          },
          [](int64_t tokens) {
            ComputeCount c;
            const int64_t cache = kCachePerToken * tokens;
            c.shape = "h" + std::to_string(kHeads) + " d_h" + std::to_string(kHeadDim) + " d_r" +
                      std::to_string(kRopeDim) + " d_c" + std::to_string(kLatentDim) + " cache " +
                      std::to_string(cache);
            c.size = cache;
            c.flops = static_cast<double>(kHeads) *
                      (2.0 * kLatentDim * kHeadDim +
                       static_cast<double>(cache) * 2.0 * (2 * kLatentDim + kRopeDim));
            c.gemm_m = kHeads, c.gemm_n = cache, c.gemm_k = kLatentDim + kRopeDim;
            return c;
          }};
}

}  // namespace

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

std::vector<RoundingPoint> MlaDecodeOp::rounding_points() const { return mla_rounding_points(); }

std::vector<RoundingPoint> mla_rounding_points() {
  std::vector<RoundingPoint> v = {
      {"query", {}, "f32",
       "q̃ = q^C·W^UKᵀ and the rotated q^R, as stored for the attention kernel"}};
  for (RoundingPoint& p : attention_rounding_points()) v.push_back(std::move(p));
  return v;
}

template <class T>
Outputs<T> MlaDecodeOp::compute(const InputSet& in, const BoundRecipe& recipe) const {
  Outputs<T> out(1);
  out[0].values = mla_decode_latent<T>(p_, in, ref::mla_scale(p_.config()),
                                       point_rounding<T>(recipe, "query"),
                                       attention_rounding<T>(recipe), &recipe,
                                       &out[0].error_scale);
  return out;
}

MlaDecodeParams read_mla_params(ParamReader& r, bool dense_cache) {
  MlaDecodeParams p;
  p.heads = r.integer("h", 1, kMaxHeads);
  p.head_dim = r.integer("d_h", 1, kMaxWidth);
  p.rope_dim = r.integer("d_rope", 2, kMaxWidth);
  if (p.rope_dim % 2 != 0) r.fail("d_rope", "expected an even number (RoPE pairs)");
  p.latent_dim = r.integer("d_c", 1, kMaxWidth);
  if (dense_cache) p.cache_len = r.integer("cache_len", 1, kMaxRows);
  p.rope_base = r.real("rope_base", 1, 1e12, 10000.0);
  p.layout = r.choice("rope_layout", {"interleaved", "half_split"}, "interleaved") == "interleaved"
                 ? ref::RopeLayout::kInterleaved
                 : ref::RopeLayout::kHalfSplit;
  p.yarn = read_mla_yarn(r, p);
  return p;
}

void add_mla_ops(std::vector<OpInfo>& ops) {
  ops.push_back({"mla_decode",
                 "F19, F16",
                 "absorbed MLA decode step over cached latents c^KV and rotary keys k^R; scale "
                 "1/√(d_h + d_h^R) (none | yarn, with DeepSeek's temperature mscale_all_dim)",
                 [](ParamReader& r) {
                   const MlaDecodeParams p = read_mla_params(r, /*dense_cache=*/true);
                   return std::make_unique<MlaDecodeOp>(p);
                 },
                 KernelEntry::kMlaDecode,
                 {reduction_output(naive_policy(),
                                   "latent up-projections, QKᵀ, softmax and PV: "
                                   "a composition of reductions")},
                 {"flash-mla"},
                 {},
                 {mla_decode_bench()}});
}

}  // namespace lmo::oracle
