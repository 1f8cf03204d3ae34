#include "oracle/backends/gpu_recipes.h"

namespace lmo::oracle {

// A switch without a default, as gpu.cc's gpu_adapter: a new kernel entry makes the compiler ask
// what its GPU kernel declares. Each declaration is what the kernel's code does (docs/gpu.md):
// "strict" for a kernel whose every f32 operation rounds once, unfused (gpu/f32_ops.h), in the
// order of the naive f32 run, and whose library functions stay within the bounds the op's
// policy assumes of them.
std::string_view gpu_recipe_text(KernelEntry e) {
  switch (e) {
    // RMSNorm, Gemma's 1 + γ and LayerNorm (gpu/norms.cuh, gpu/norm_math.h): the sums of squares
    // fused (each square an fma into the running sum), everything else rounded apart.
    case KernelEntry::kNorm:
      return "strict+fma";
    case KernelEntry::kFusedAddRmsnorm:  // gpu/norm_math.h
    // Activations, GLU gates, soft-cap (gpu/elementwise.cuh, gpu/activation_f32.h: CUDA's expf
    // and tanhf within the bounds the policies assume; erfc in double rounded once).
    case KernelEntry::kElementwise:
    // softmax, online softmax, log-sum-exp and the cross-entropy in f32 (gpu/softmax_math.h; a
    // cross-entropy row with a non-finite logit in double, as fast/ takes it).
    case KernelEntry::kSoftmax:
    case KernelEntry::kFp8Quantize:  // gpu/fp8_math.h
    case KernelEntry::kFp8Dequantize:
    case KernelEntry::kFp8Linear:
    case KernelEntry::kMoeLayer:  // gpu/moe_layer_math.h, gpu/activation_f32.h
    // RoPE from positions or a table (gpu/rope.cuh, gpu/rope_math.h): fast/rope.cc's arithmetic,
    // cos and sin in double from the frequencies in turns rounded once to f32, the rotation in
    // f32 with one fma per output.
    case KernelEntry::kRope:
      return "strict";
    // Attention, its decode step and the paged decode (gpu/attention_f32.cuh,
    // gpu/attention_f32_math.h): f32 throughout, the dot products and the P·V sums fused.
    case KernelEntry::kAttention:
    case KernelEntry::kPagedAttentionDecode:
    // Absorbed MLA decode (gpu/mla.cuh, then gpu/attention_f32.cuh with the key's two parts): q̃
    // in f32 with fused products, q^R rotated as RoPE is.
    case KernelEntry::kMlaDecode:
    case KernelEntry::kPagedMlaDecode:
    // The FFN (gpu/ffn.cuh, gpu/ffn_math.h): f32 dot products, each product fused, in k order;
    // the hidden layer with the f32 activations.
    case KernelEntry::kFfn:
      return "strict+fma";
    // Evaluated in double and rounded once to f32, then to the storage: no f32 recipe.
    case KernelEntry::kSinusoidalPe:
    case KernelEntry::kLearnedPosition:
    case KernelEntry::kShawLogits:
    case KernelEntry::kT5Bias:
    case KernelEntry::kMoeRouter:
    case KernelEntry::kLoadBalanceLoss:
    case KernelEntry::kAuxFreeUpdate:
    case KernelEntry::kDecoderBlock:
    case KernelEntry::kNone:
      return "";
  }
  return "";
}

std::optional<Recipe> gpu_declared_recipe(KernelEntry e) {
  const std::string_view text = gpu_recipe_text(e);
  if (text.empty()) return std::nullopt;
  return parse_recipe(text);
}

}  // namespace lmo::oracle
