// Argument checks of the feed-forward entry points (fast/ffn.h, fast/decoder_block.h), shared with
// gpu/api_ffn.h's so that both libraries refuse the same calls with the same messages: every
// violation throws std::invalid_argument naming the function, the parameter, its value and the
// expectation. The storage and activation are checked by the caller (before these, as in
// fast/ffn.cc) or in a callback (the decoder block's order).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/api/decoder_block_args.h"
#include "kernels/api/validate.h"

namespace lmo::kernels::detail {

// The shape and pointers both FFN forms share; `up` names the first weight (w1 or w).
inline void check_ffn_shape(const char* fn, const void* x, const char* up, const void* up_w,
                            const void* w2, const void* y, int64_t tokens, int64_t d,
                            int64_t d_ff) {
  check_count(fn, "tokens", tokens, 0);
  check_count(fn, "d", d, 1);
  check_count(fn, "d_ff", d_ff, 1);
  check_blas_dim(fn, "tokens", tokens);
  check_blas_dim(fn, "d", d);
  check_blas_dim(fn, "d_ff", d_ff);
  check_ptr(fn, "x", x, tokens > 0);
  check_ptr(fn, up, up_w, tokens > 0);
  check_ptr(fn, "w2", w2, tokens > 0);
  check_ptr(fn, "y", y, tokens > 0);
}

// The γ pointers a decoder block layout reads, with their parameter names.
inline std::vector<std::pair<const char*, const void*>> layout_norms(const DecoderBlockWeights& w,
                                                                     BlockLayout l) {
  switch (l) {
    case BlockLayout::post_ln:
    case BlockLayout::pre_ln:
      return {{"attn_norm", w.attn_norm}, {"ffn_norm", w.ffn_norm}};
    case BlockLayout::double_norm:
      return {{"attn_norm", w.attn_norm},
              {"attn_post_norm", w.attn_post_norm},
              {"ffn_norm", w.ffn_norm},
              {"ffn_post_norm", w.ffn_post_norm}};
    case BlockLayout::olmo2:
      return {{"attn_post_norm", w.attn_post_norm}, {"ffn_post_norm", w.ffn_post_norm}};
    case BlockLayout::parallel:
      return {{"attn_norm", w.attn_norm}};
  }
  return {};
}

// The decoder block's layout, FFN kind, storage (check_storage(), the library's own check),
// shape, ε and the pointers the layout reads or writes, in that order.
template <class CheckStorage>
void check_decoder_block_args(const char* fn, const CheckStorage& check_storage, const void* x,
                              const DecoderBlockWeights& w, const void* y,
                              const DecoderBlockArgs& a) {
  if (a.layout > BlockLayout::parallel) {
    throw std::invalid_argument(std::string(fn) + ": layout is " +
                                std::to_string(static_cast<int>(a.layout)) +
                                ", expected post_ln, pre_ln, double_norm, olmo2 or parallel");
  }
  if (a.ffn != BlockFfn::swiglu && a.ffn != BlockFfn::gelu) {
    throw std::invalid_argument(std::string(fn) + ": ffn is " +
                                std::to_string(static_cast<int>(a.ffn)) +
                                ", expected swiglu or gelu");
  }
  check_storage();
  check_count(fn, "tokens", a.tokens, 0);
  check_count(fn, "d", a.d, 1);
  check_count(fn, "heads", a.heads, 1);
  check_count(fn, "kv_heads", a.kv_heads, 1);
  check_count(fn, "d_ff", a.d_ff, 1);
  if (a.d % a.heads != 0) {
    throw std::invalid_argument(std::string(fn) + ": heads is " + std::to_string(a.heads) +
                                ", expected a divisor of d = " + std::to_string(a.d));
  }
  if (a.heads % a.kv_heads != 0) {
    throw std::invalid_argument(std::string(fn) + ": kv_heads is " + std::to_string(a.kv_heads) +
                                ", expected a divisor of heads = " + std::to_string(a.heads));
  }
  check_blas_dim(fn, "tokens", a.tokens);
  check_blas_dim(fn, "d", a.d);
  check_blas_dim(fn, "d_ff", a.d_ff);
  check_eps(fn, a.eps);
  const bool any = a.tokens > 0;
  check_ptr(fn, "x", x, any);
  check_ptr(fn, "y", y, any);
  for (const auto& [name, p] : {std::pair<const char*, const void*>{"w_q", w.w_q},
                                {"w_k", w.w_k},
                                {"w_v", w.w_v},
                                {"w_o", w.w_o},
                                {"w1", w.w1},
                                {"w2", w.w2}}) {
    check_ptr(fn, name, p, any);
  }
  check_ptr(fn, "v", w.v, any && a.ffn == BlockFfn::swiglu);
  for (const auto& [name, p] : layout_norms(w, a.layout)) check_ptr(fn, name, p, any);
}

}  // namespace lmo::kernels::detail
