// CUDA-free host interface (gpu/api.h's conventions) of the feed-forward family: F03/F04 ffn,
// F05 glu_ffn and the F18 decoder block, with fast/ffn.h's and fast/decoder_block.h's argument
// shapes and validation (kernels/api/validate_ffn.h: std::invalid_argument naming the function, the
// parameter and the expectation, before any CUDA call).
//
// Numerics, at fast/'s rounding points (the oracle's ffn, glu_ffn and decoder_block policies
// assume them): every dot product in f32 with each product fused in k order, activations and gates
// in f32 (gpu/ffn_math.h, gpu/activation_f32.h), the FFN's hidden layer f32 whatever the storage,
// its output rounded once to the storage. The decoder block runs on f32 intermediates as
// fast::decoder_block does: the weights widened exactly to f32, every projection, attention
// output, norm, FFN output and residual sum rounded to f32 (the sublayers are the GPU's own
// rmsnorm, attention and FFN kernels with f32 storage), and y rounded once to the storage at the
// end. One thread per output element, dot products in a fixed order, no atomics: identical
// results run to run.
#pragma once

#include <cstdint>

#include "kernels/api/decoder_block_args.h"
#include "gpu/api.h"

namespace lmo::gpu {

// y = act(x W1 (+ b1)) W2 (+ b2): b1 and b2 may be null. Throws as fast::ffn does.
void ffn(Activation act, Storage s, const void* x, const void* w1, const void* b1, const void* w2,
         const void* b2, void* y, int64_t tokens, int64_t d, int64_t d_ff);

// y = (act(x W) ⊙ x V) W2. Throws as fast::glu_ffn does.
void glu_ffn(Activation act, Storage s, const void* x, const void* w, const void* v, const void* w2,
             void* y, int64_t tokens, int64_t d, int64_t d_ff);

// fast/decoder_block.h's argument types (kernels/api/decoder_block_args.h).
using kernels::BlockFfn;
using kernels::BlockLayout;
using kernels::DecoderBlockArgs;
using kernels::DecoderBlockWeights;

// One decoder block (fast/decoder_block.h's layouts). Throws as fast::decoder_block does, and
// for a head width d/heads beyond kGpuAttentionMaxDim (the attention kernel's limit).
void decoder_block(Storage s, const void* x, const DecoderBlockWeights& w, void* y,
                   const DecoderBlockArgs& a);

}  // namespace lmo::gpu
