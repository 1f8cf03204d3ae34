// The fast backend's adapters for the feed-forward ops (oracle/ops/ffn.h) and the decoder block
// (oracle/ops/blocks.h), on fast/ffn.h and fast/decoder_block.h.
#include <map>
#include <string>

#include "fast/decoder_block.h"
#include "fast/ffn.h"
#include "oracle/backend_fast_adapters.h"
#include "oracle/ops/blocks.h"
#include "oracle/ops/ffn.h"

namespace lmo::oracle::fast_adapters {

void run_ffn(const Op& op, fast::Storage s, const InputSet& in, std::vector<GuardedBuffer>& out) {
  const FfnParams& p = as<FfnOp>(op).params();
  const fast::Activation act = op_adapters::activation_of<fast::Activation>(p.act);
  if (p.gated) {
    fast::glu_ffn(act, s, ptr(in, "x"), ptr(in, "w"), ptr(in, "v"), ptr(in, "w2"), out[0].data(),
                  p.tokens, p.d, p.d_ff);
    return;
  }
  fast::ffn(act, s, ptr(in, "x"), ptr(in, "w1"), p.bias ? ptr(in, "b1") : nullptr, ptr(in, "w2"),
            p.bias ? ptr(in, "b2") : nullptr, out[0].data(), p.tokens, p.d, p.d_ff);
}

void run_decoder_block(const Op& op, fast::Storage s, const InputSet& in,
                       std::vector<GuardedBuffer>& out) {
  const DecoderBlockParams& p = as<DecoderBlockOp>(op).params();
  static const std::map<BlockLayoutKind, fast::BlockLayout> kLayouts = {
      {BlockLayoutKind::kPostLn, fast::BlockLayout::post_ln},
      {BlockLayoutKind::kPreLn, fast::BlockLayout::pre_ln},
      {BlockLayoutKind::kDoubleNorm, fast::BlockLayout::double_norm},
      {BlockLayoutKind::kOlmo2, fast::BlockLayout::olmo2},
      {BlockLayoutKind::kParallel, fast::BlockLayout::parallel}};
  fast::DecoderBlockArgs a;
  a.layout = kLayouts.at(p.layout);
  a.ffn = p.swiglu ? fast::BlockFfn::swiglu : fast::BlockFfn::gelu;
  a.tokens = p.tokens;
  a.d = p.d;
  a.heads = p.heads;
  a.kv_heads = p.kv_heads;
  a.d_ff = p.d_ff;
  a.eps = static_cast<float>(p.eps);
  fast::DecoderBlockWeights w;
  w.w_q = ptr(in, "w_q");
  w.w_k = ptr(in, "w_k");
  w.w_v = ptr(in, "w_v");
  w.w_o = ptr(in, "w_o");
  w.w1 = ptr(in, "w1");
  if (p.swiglu) w.v = ptr(in, "v");
  w.w2 = ptr(in, "w2");
  // Only the layout's norms are inputs of the case.
  const std::map<std::string, const void**> norms = {{"attn_norm", &w.attn_norm},
                                                     {"ffn_norm", &w.ffn_norm},
                                                     {"attn_post_norm", &w.attn_post_norm},
                                                     {"ffn_post_norm", &w.ffn_post_norm}};
  for (const std::string& name : p.norm_names()) *norms.at(name) = ptr(in, name);
  fast::decoder_block(s, ptr(in, "x"), w, out[0].data(), a);
}

}  // namespace lmo::oracle::fast_adapters
