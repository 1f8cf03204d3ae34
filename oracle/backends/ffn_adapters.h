// Adapters of the feed-forward ops (oracle/ops/ffn.h) and the decoder block (oracle/ops/blocks.h)
// shared by the fast and gpu backends: fast/ffn.h, fast/decoder_block.h and gpu/api_ffn.h take
// the same arguments (the decoder block's argument types are fast's in both), so one template per
// op serves both. K names the library: using Storage (f32, bf16, f16) and Activation (relu, gelu,
// gelu_tanh, silu), and pointers to ffn, glu_ffn and decoder_block with fast/'s signatures.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fast/kernel_api.h"
#include "oracle/backends/adapters.h"
#include "oracle/ops/blocks.h"
#include "oracle/ops/ffn.h"

namespace lmo::oracle::op_adapters {

// ffn (x, w1, w2, and b1, b2 with a bias) and glu_ffn (x, w, v, w2): output y.
template <class K>
void run_ffn(const Op& op, typename K::Storage s, const InputSet& in,
             std::vector<GuardedBuffer>& out) {
  const FfnParams& p = op_as<FfnOp>(op).params();
  const auto act = activation_of<typename K::Activation>(p.act);
  if (p.gated) {
    K::glu_ffn(act, s, input_ptr(in, "x"), input_ptr(in, "w"), input_ptr(in, "v"),
               input_ptr(in, "w2"), out[0].data(), p.tokens, p.d, p.d_ff);
    return;
  }
  K::ffn(act, s, input_ptr(in, "x"), input_ptr(in, "w1"), p.bias ? input_ptr(in, "b1") : nullptr,
         input_ptr(in, "w2"), p.bias ? input_ptr(in, "b2") : nullptr, out[0].data(), p.tokens, p.d,
         p.d_ff);
}

// The decoder block's shape and layout as fast::DecoderBlockArgs (ε rounded once to f32).
inline fast::DecoderBlockArgs decoder_block_args(const DecoderBlockParams& p) {
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
  return a;
}

// The block's weight inputs; only the layout's norms are inputs of the case.
inline fast::DecoderBlockWeights decoder_block_weights(const DecoderBlockParams& p,
                                                       const InputSet& in) {
  fast::DecoderBlockWeights w;
  w.w_q = input_ptr(in, "w_q");
  w.w_k = input_ptr(in, "w_k");
  w.w_v = input_ptr(in, "w_v");
  w.w_o = input_ptr(in, "w_o");
  w.w1 = input_ptr(in, "w1");
  if (p.swiglu) w.v = input_ptr(in, "v");
  w.w2 = input_ptr(in, "w2");
  const std::map<std::string, const void**> norms = {{"attn_norm", &w.attn_norm},
                                                     {"ffn_norm", &w.ffn_norm},
                                                     {"attn_post_norm", &w.attn_post_norm},
                                                     {"ffn_post_norm", &w.ffn_post_norm}};
  for (const std::string& name : p.norm_names()) *norms.at(name) = input_ptr(in, name);
  return w;
}

// decoder_block: input x and the weights; output y.
template <class K>
void run_decoder_block(const Op& op, typename K::Storage s, const InputSet& in,
                       std::vector<GuardedBuffer>& out) {
  const DecoderBlockParams& p = op_as<DecoderBlockOp>(op).params();
  K::decoder_block(s, input_ptr(in, "x"), decoder_block_weights(p, in), out[0].data(),
                   decoder_block_args(p));
}

}  // namespace lmo::oracle::op_adapters
