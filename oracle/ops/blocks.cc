#include "oracle/ops/blocks.h"

#include <cmath>

#include "oracle/ops/families.h"
#include "oracle/ops/limits.h"

namespace lmo::oracle {

std::vector<std::string> DecoderBlockParams::norm_names() const {
  switch (layout) {
    case BlockLayoutKind::kPostLn:
    case BlockLayoutKind::kPreLn:
      return {"attn_norm", "ffn_norm"};
    case BlockLayoutKind::kDoubleNorm:
      return {"attn_norm", "attn_post_norm", "ffn_norm", "ffn_post_norm"};
    case BlockLayoutKind::kOlmo2:
      return {"attn_post_norm", "ffn_post_norm"};
    case BlockLayoutKind::kParallel:
      return {"attn_norm"};  // one norm shared by both branches
  }
  return {};
}

std::vector<InputDecl> DecoderBlockOp::inputs() const {
  // Weights of a layer with fan-in n: uniform in ±1/√n (nn.Linear's default, as the FFN ops);
  // γ around 1, as the norm ops.
  const double in_scale = 1 / std::sqrt(static_cast<double>(p_.d));
  const double hidden_scale = 1 / std::sqrt(static_cast<double>(p_.d_ff));
  const int64_t kv = p_.kv_heads * p_.head_dim();
  std::vector<InputDecl> v = {{"x", {p_.tokens, p_.d}, Dist::kNormal, 0, 1},
                              {"w_q", {p_.d, p_.d}, Dist::kUniform, -in_scale, in_scale},
                              {"w_k", {p_.d, kv}, Dist::kUniform, -in_scale, in_scale},
                              {"w_v", {p_.d, kv}, Dist::kUniform, -in_scale, in_scale},
                              {"w_o", {p_.d, p_.d}, Dist::kUniform, -in_scale, in_scale},
                              {"w1", {p_.d, p_.d_ff}, Dist::kUniform, -in_scale, in_scale}};
  if (p_.swiglu) v.push_back({"v", {p_.d, p_.d_ff}, Dist::kUniform, -in_scale, in_scale});
  v.push_back({"w2", {p_.d_ff, p_.d}, Dist::kUniform, -hidden_scale, hidden_scale});
  for (const std::string& n : p_.norm_names()) v.push_back({n, {p_.d}, Dist::kNormal, 1, 0.1});
  return v;
}

std::vector<OutputDecl> DecoderBlockOp::outputs() const { return {{"y", {p_.tokens, p_.d}}}; }

double DecoderBlockOp::cost() const {
  const double t = static_cast<double>(p_.tokens), d = static_cast<double>(p_.d);
  const double kv = static_cast<double>(p_.kv_heads * p_.head_dim());
  const double ffn = static_cast<double>(p_.d_ff) * d * (p_.swiglu ? 3.0 : 2.0);
  // Projections and FFN (a multiply-add each), QKᵀ and PV, and the norms and residuals.
  return 2.0 * t * (2.0 * d * d + 2.0 * d * kv + ffn) + 4.0 * t * t * d + 20.0 * t * d;
}

template <class T>
Outputs<T> DecoderBlockOp::compute(const InputSet& in) const {
  const BlockParts<T> b = block_parts<T>(p_, in);
  const ref::Mat<T> x(p_.tokens, p_.d, in.values<T>("x"));
  Outputs<T> out(1);
  out[0].values = block_forward<T>(b, p_.layout, x).data;
  return out;
}

namespace {

std::unique_ptr<Op> make_decoder_block(ParamReader& r) {
  DecoderBlockParams p;
  const std::string layout =
      r.choice("layout", {"post_ln", "pre_ln", "double_norm", "olmo2", "parallel"});
  if (layout == "post_ln") p.layout = BlockLayoutKind::kPostLn;
  if (layout == "pre_ln") p.layout = BlockLayoutKind::kPreLn;
  if (layout == "double_norm") p.layout = BlockLayoutKind::kDoubleNorm;
  if (layout == "olmo2") p.layout = BlockLayoutKind::kOlmo2;
  if (layout == "parallel") p.layout = BlockLayoutKind::kParallel;
  p.tokens = r.integer("tokens", 1, kMaxRows);
  p.d = r.integer("d", 1, kMaxWidth);
  p.heads = r.integer("h", 1, kMaxHeads);
  if (p.d % p.heads != 0) {
    r.fail("h",
           "expected a divisor of d = " + std::to_string(p.d) + ", got " + std::to_string(p.heads));
  }
  p.kv_heads = r.integer("g", 1, kMaxHeads, p.heads);
  if (p.heads % p.kv_heads != 0) {
    r.fail("g", "expected a divisor of h = " + std::to_string(p.heads) + ", got " +
                    std::to_string(p.kv_heads));
  }
  p.d_ff = r.integer("d_ff", 1, kMaxWidth);
  p.swiglu = r.choice("ffn", {"swiglu", "gelu"}) == "swiglu";
  p.eps = r.real("eps", 0, 1);
  if (static_cast<double>(p.d) * static_cast<double>(p.d_ff) >
      static_cast<double>(int64_t{1} << 28)) {
    r.fail("d_ff", "expected d × d_ff ≤ 2^28 weights per matrix");
  }
  return std::make_unique<DecoderBlockOp>(p);
}

}  // namespace

void add_block_ops(std::vector<OpInfo>& ops) {
  ops.push_back({"decoder_block",
                 "F18",
                 "one block: post_ln | pre_ln | double_norm | olmo2 | parallel layout of RMSNorm, "
                 "causal attention (h heads on g KV heads) and a SwiGLU or GELU FFN",
                 make_decoder_block,
                 KernelEntry::kDecoderBlock,
                 {reduction_output(naive_policy(),
                                   "norms, attention, FFN and residual sums: a "
                                   "composition of reductions")}});
}

}  // namespace lmo::oracle
