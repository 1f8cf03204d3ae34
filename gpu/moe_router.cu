// Launchers of gpu/moe_router.cuh for the three storage formats.
#include "gpu/launch_moe.h"
#include "gpu/moe_router.cuh"

namespace lmo::gpu {

cudaError_t launch_moe_router(Storage s, const void* logits, const void* bias, int64_t tokens,
                              const moe::RouteShape& shape, int64_t* experts, void* gates,
                              float* affinities, cudaStream_t stream) {
  if (tokens == 0) return cudaSuccess;
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    moe_route_kernel<T><<<element_grid(tokens), kThreads, 0, stream>>>(
        static_cast<const T*>(logits), static_cast<const T*>(bias), tokens, shape, experts,
        static_cast<T*>(gates), affinities);
    return cudaGetLastError();
  });
}

cudaError_t launch_expert_balance(int64_t tokens, int64_t n_experts, int64_t top_k,
                                  const int64_t* experts, const float* affinities,
                                  bool normalize_affinities, double* totals, int64_t* counts,
                                  float* p, cudaStream_t stream) {
  if (tokens == 0 || n_experts == 0) return cudaSuccess;
  if (normalize_affinities) {
    affinity_totals_kernel<<<row_grid(tokens), kThreads, 0, stream>>>(affinities, tokens, n_experts,
                                                                      totals);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
  }
  const int64_t chunks = (n_experts + kBalanceExperts - 1) / kBalanceExperts;
  expert_balance_kernel<<<row_grid(chunks), kThreads, 0, stream>>>(
      tokens, n_experts, top_k, experts, affinities, normalize_affinities ? totals : nullptr,
      counts, p);
  return cudaGetLastError();
}

cudaError_t launch_load_balance_loss(const int64_t* counts, const float* p, int64_t tokens,
                                     int64_t n_experts, int64_t top_k, float alpha, float* loss,
                                     cudaStream_t stream) {
  load_balance_loss_kernel<<<1, kThreads, 0, stream>>>(counts, p, tokens, n_experts, top_k,
                                                       static_cast<double>(alpha), loss);
  return cudaGetLastError();
}

cudaError_t launch_aux_free_update(Storage s, const void* bias, const int64_t* load, int64_t n,
                                   int64_t total, float gamma, void* new_bias,
                                   cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    aux_free_update_kernel<T><<<element_grid(n), kThreads, 0, stream>>>(
        static_cast<const T*>(bias), load, n, total, static_cast<double>(gamma),
        static_cast<T*>(new_bias));
    return cudaGetLastError();
  });
}

}  // namespace lmo::gpu
