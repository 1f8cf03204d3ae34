// The shapes, strides and limits of the attention kernel (gpu/attention_f32.cuh: attention, its
// decode step and the attention half of F19's absorbed MLA decode, gpu/mla.cuh).
#pragma once

#include "gpu/attention_math.h"
#include "gpu/common.cuh"

namespace lmo::gpu {

constexpr int kWarpSize = 32;
constexpr int kWarps = kThreads / kWarpSize;
// Keys per chunk: one logit slot per thread.
constexpr int kChunk = kThreads;
// Value components per thread (registers): value width ≤ kThreads · kValuesPerThread.
constexpr int kValuesPerThread = 4;
constexpr int64_t kMaxValueDim = int64_t{kThreads} * kValuesPerThread;
// The query row is held in shared memory as floats (8 KiB): key width ≤ kMaxKeyDim.
constexpr int64_t kMaxKeyDim = 2048;

// Shapes and strides (in elements) of one launch. Query row i, head h: q[i·ldq + h·dk …] and, for
// a second key part, q2[i·ldq2 + h·dk2 …]; key t of KV head g: k[t·ldk + g·dk …],
// k2[t·ldk2 + g·dk2 …]; value: v[t·ldv + g·dv …]; output o[i·ldo + h·dv …]. Query i sits at
// position kv_len − q_len + i.
struct AttentionShape {
  int64_t q_len = 0, kv_len = 0, heads = 1, kv_heads = 1;
  int64_t dk = 0, dk2 = 0, dv = 0;
  int64_t ldq = 0, ldq2 = 0, ldk = 0, ldk2 = 0, ldv = 0, ldo = 0;
  int mask = attn::kCausal;
  int64_t window = 0;
  const int64_t* doc = nullptr;  // kv_len ids on the device, for attn::kDocument
};

}  // namespace lmo::gpu
