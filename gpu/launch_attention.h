// Launchers of gpu/attention.cuh and gpu/mla.cuh on device pointers (gpu/launch.h's
// conventions: enqueue on `stream`, return the launch's cudaError_t, no validation beyond the
// kernels' limits, which return cudaErrorInvalidValue).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/api_attention.h"

namespace lmo::gpu {

// a.doc_ids, when the mask is document, points to kv_len ids on the device; scale is the
// resolved scale (> 0); scratch: attention_scratch_floats(a) floats on the device (the split-KV
// ranges' states; null where that is 0).
cudaError_t launch_attention(Storage s, const void* q, const void* k, const void* v, void* o,
                             const AttentionArgs& a, float scale, float* scratch,
                             cudaStream_t stream);
int64_t attention_scratch_floats(const AttentionArgs& a);

// cos_sin: rope_dim/2 cosines then rope_dim/2 sines of (t − 1)·θ_k, each rounded once to f32, on
// the device; work: heads·(latent_dim + rope_dim) floats on the device (the absorbed and rotated
// query); scratch: mla_scratch_floats(a) floats on the device (the split-KV ranges' states; null
// where that is 0).
cudaError_t launch_mla_decode(Storage s, const void* q_c, const void* q_r, const void* c_kv,
                              const void* k_r, const void* w_uk, const float* cos_sin, float* work,
                              float* scratch, void* o, const MlaDecodeArgs& a, float scale,
                              cudaStream_t stream);
int64_t mla_scratch_floats(const MlaDecodeArgs& a);
// work: heads·(latent_dim + rope_dim) doubles on the device (the absorbed and rotated query).
cudaError_t launch_mla_decode(Storage s, const void* q_c, const void* q_r, const void* c_kv,
                              const void* k_r, const void* w_uk, const double* cos_sin,
                              double* work, void* o, const MlaDecodeArgs& a, float scale,
                              cudaStream_t stream);

}  // namespace lmo::gpu
