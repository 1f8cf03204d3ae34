// Launchers of gpu/moe_router.cuh on device pointers (gpu/launch.h's conventions: enqueue on
// `stream`, return the launch's cudaError_t, cudaSuccess for an empty problem; no validation:
// gpu/api_moe.cc does that).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/api.h"
#include "gpu/moe_route.h"

namespace lmo::gpu {

// bias: null or N values in s; affinities: null or tokens × N floats.
cudaError_t launch_moe_router(Storage s, const void* logits, const void* bias, int64_t tokens,
                              const moe::RouteShape& shape, int64_t* experts, void* gates,
                              float* affinities, cudaStream_t stream);

// totals: `tokens` doubles of scratch on the device, used when normalize_affinities (each
// token's Σ_j s_{j,t}).
cudaError_t launch_expert_balance(int64_t tokens, int64_t n_experts, int64_t top_k,
                                  const int64_t* experts, const float* affinities,
                                  bool normalize_affinities, double* totals, int64_t* counts,
                                  float* p, cudaStream_t stream);

// loss: one float on the device.
cudaError_t launch_load_balance_loss(const int64_t* counts, const float* p, int64_t tokens,
                                     int64_t n_experts, int64_t top_k, float alpha, float* loss,
                                     cudaStream_t stream);

// total = Σ load (the caller's, checked to keep n·load_i exact); new_bias may equal bias.
cudaError_t launch_aux_free_update(Storage s, const void* bias, const int64_t* load, int64_t n,
                                   int64_t total, float gamma, void* new_bias, cudaStream_t stream);

// The device buffers of one MoE layer (gpu/moe_layer.cuh): inputs in the storage format (bias,
// ws, vs, w2s may be null), f32 and index scratch, the output.
struct MoeLayerBuffers {
  const void *x = nullptr, *router = nullptr, *bias = nullptr;
  const void *w = nullptr, *v = nullptr, *w2 = nullptr;  // [N, d, d_ff], [N, d, d_ff], [N, d_ff, d]
  const void *ws = nullptr, *vs = nullptr, *w2s = nullptr;  // the shared experts', [S, …]
  float* logits = nullptr;                                  // [tokens, N]
  float* bias_f32 = nullptr;                                // [N], when bias
  int64_t* experts = nullptr;                               // [tokens, K]
  float* gates = nullptr;                                   // [tokens, K]
  float* hidden = nullptr;                                  // [tokens, S + K, d_ff]
  void* y = nullptr;                                        // [tokens, d]
};

struct MoeLayerShape {
  int64_t tokens = 0, d = 1, d_ff = 1, shared = 0;
  bool residual = false;
  moe::RouteShape route;
};

// The router logits, their routing (launch_moe_router on f32), the experts' hidden layer and
// the combine, enqueued in that order.
cudaError_t launch_moe_layer(Activation act, Storage s, const MoeLayerBuffers& b,
                             const MoeLayerShape& sh, cudaStream_t stream);

}  // namespace lmo::gpu
