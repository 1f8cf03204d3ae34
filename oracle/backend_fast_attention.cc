#include "oracle/backend_fast_attention.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "fast/attention.h"
#include "fast/mla_decode.h"
#include "oracle/backend_fast_adapters.h"
#include "oracle/ops/attention.h"
#include "oracle/ops/mla.h"

namespace lmo::oracle {
namespace {

using fast_adapters::as;
using fast_adapters::ptr;

fast::AttentionMask fast_mask(ref::MaskKind m) {
  switch (m) {
    case ref::MaskKind::kNone:
      return fast::AttentionMask::none;
    case ref::MaskKind::kCausal:
      return fast::AttentionMask::causal;
    case ref::MaskKind::kSlidingWindow:
      return fast::AttentionMask::window;
    case ref::MaskKind::kDocument:
      return fast::AttentionMask::document;
  }
  throw std::logic_error("fast backend: unknown attention mask");
}

// The op's scale 1/√d as the reference rounds it (once, to f32); fast/ would compute the same
// from double, but passing it keeps the two visibly identical.
float scale_of(int64_t d) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(d))); }

}  // namespace

void run_fast_attention(const Op& op, fast::Storage s, const InputSet& in,
                        std::vector<GuardedBuffer>& out) {
  const AttentionParams& p = as<AttentionOp>(op).params();
  const auto cap = static_cast<float>(p.softcap);
  if (p.decode) {
    fast::attention_decode(s, ptr(in, "q"), ptr(in, "k"), ptr(in, "v"), out[0].data(), p.heads,
                           p.kv_heads, p.head_dim, p.tokens, p.window, cap, scale_of(p.head_dim));
    return;
  }
  // Document ids from the first positions of the documents after the first (as
  // attention_config does for the reference).
  std::vector<int64_t> doc(static_cast<size_t>(p.tokens), 0);
  for (int64_t start : p.doc_starts) {
    for (int64_t j = start; j < p.tokens; ++j) ++doc[static_cast<size_t>(j)];
  }
  fast::AttentionArgs a;
  a.heads = p.heads;
  a.kv_heads = p.kv_heads;
  a.head_dim = p.head_dim;
  a.q_len = a.kv_len = p.tokens;
  a.mask = fast_mask(p.mask);
  a.window = p.window;
  a.doc_ids = doc.data();
  a.scale = scale_of(p.head_dim);
  a.softcap = cap;
  fast::attention(s, ptr(in, "q"), ptr(in, "k"), ptr(in, "v"), out[0].data(), a);
}

void run_fast_mla_decode(const Op& op, fast::Storage s, const InputSet& in,
                         std::vector<GuardedBuffer>& out) {
  const MlaDecodeParams& p = as<MlaDecodeOp>(op).params();
  fast::MlaDecodeArgs a;
  a.heads = p.heads;
  a.head_dim = p.head_dim;
  a.rope_dim = p.rope_dim;
  a.latent_dim = p.latent_dim;
  a.cache_len = p.cache_len;
  a.rope_base = p.rope_base;
  a.half_split = p.layout == ref::RopeLayout::kHalfSplit;
  fast::mla_decode(s, ptr(in, "q_c"), ptr(in, "q_r"), ptr(in, "c_kv"), ptr(in, "k_r"),
                   ptr(in, "w_uk"), out[0].data(), a);
}

}  // namespace lmo::oracle
