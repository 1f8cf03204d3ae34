// The argument types of the decoder block (fast/decoder_block.h, gpu/api_ffn.h), apart from its
// entry points. Plain C++17: the CUDA sources are compiled as C++17.
#pragma once

#include <cstdint>

namespace lmo::kernels {

enum class BlockLayout : uint8_t { post_ln, pre_ln, double_norm, olmo2, parallel };
enum class BlockFfn : uint8_t { swiglu, gelu };

struct DecoderBlockArgs {
  BlockLayout layout = BlockLayout::pre_ln;
  BlockFfn ffn = BlockFfn::swiglu;
  int64_t tokens = 1;
  int64_t d = 1;
  int64_t heads = 1;     // h, a divisor of d
  int64_t kv_heads = 1;  // g, a divisor of h
  int64_t d_ff = 1;
  float eps = 0;  // the norms' ε
};

// The block's weights; a norm's γ the layout does not use may be null, as may v for a GELU FFN.
struct DecoderBlockWeights {
  const void* w_q = nullptr;
  const void* w_k = nullptr;
  const void* w_v = nullptr;
  const void* w_o = nullptr;
  const void* w1 = nullptr;
  const void* v = nullptr;
  const void* w2 = nullptr;
  const void* attn_norm = nullptr;
  const void* ffn_norm = nullptr;
  const void* attn_post_norm = nullptr;
  const void* ffn_post_norm = nullptr;
};

}  // namespace lmo::kernels
