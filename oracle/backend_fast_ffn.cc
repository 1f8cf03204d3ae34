// The fast backend's adapters for the feed-forward ops (oracle/ops/ffn.h) and the decoder block
// (oracle/ops/blocks.h), on fast/ffn.h and fast/decoder_block.h.
#include "fast/ffn.h"
#include "oracle/backend_fast_adapters.h"
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

}  // namespace lmo::oracle::fast_adapters
