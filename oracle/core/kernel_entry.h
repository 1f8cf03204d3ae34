// The kernel call an op maps to: the entry point of the kernel contract (kernels/api/) that a
// kernel library implements for it. An op's record (OpInfo, op.h) names its entry; a backend
// (oracle/backends/) answers, per entry, with its adapter or with nothing. Backends switch over
// this enum without a default, so adding an entry makes every backend decide (-Wswitch), and
// an op that reuses an existing kernel (a new activation) needs no backend change at all.
#pragma once

#include <cstdint>

namespace lmo::oracle {

enum class KernelEntry : uint8_t {
  kNone,             // no kernel library implements the op (only the reference backends run it)
  kNorm,             // rmsnorm, rmsnorm_gemma, layernorm
  kFusedAddRmsnorm,  // the residual sum and RMSNorm of it, two outputs
  kElementwise,      // activations, GLU gates, soft-capping
  kSoftmax,          // softmax, online softmax, logsumexp, fused cross-entropy
  kAttention,        // prefill attention and dense-cache decode
  kPagedAttentionDecode,
  kMlaDecode,
  kPagedMlaDecode,
  kRope,  // angles from positions or from a cos/sin table
  kSinusoidalPe,
  kLearnedPosition,
  kShawLogits,
  kT5Bias,
  kMoeRouter,
  kLoadBalanceLoss,
  kAuxFreeUpdate,
  kMoeLayer,
  kFfn,  // plain and gated FFN
  kDecoderBlock,
  kFp8Quantize,
  kFp8Dequantize,
  kFp8Linear,
};

}  // namespace lmo::oracle
