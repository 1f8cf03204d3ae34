// Launchers of gpu/position_tables.cuh for the three storage formats.
#include <cstdint>

#include "gpu/launch_positional.h"
#include "gpu/position_tables.cuh"

namespace lmo::gpu {

cudaError_t launch_learned_position(Storage s, const void* token_table, const void* position_table,
                                    const int64_t* token_ids, const int64_t* positions, void* h,
                                    int64_t tokens, int64_t d, cudaStream_t stream) {
  if (tokens == 0) return cudaSuccess;
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    learned_position_kernel<T><<<element_grid(tokens * d), kThreads, 0, stream>>>(
        static_cast<const T*>(token_table), static_cast<const T*>(position_table), token_ids,
        positions, static_cast<T*>(h), tokens, d);
    return cudaGetLastError();
  });
}

cudaError_t launch_t5_bias(Storage s, const void* table, void* bias, const relpos::T5Rule& rule,
                           int64_t heads, int64_t n_q, int64_t n_k, int64_t query_offset,
                           cudaStream_t stream) {
  if (n_q == 0 || n_k == 0) return cudaSuccess;
  const unsigned int grid = element_grid(heads * n_q * n_k);
  // The values are copied as bits: the unsigned integer of the storage's width.
  if (s == Storage::f32) {
    t5_bias_kernel<uint32_t><<<grid, kThreads, 0, stream>>>(static_cast<const uint32_t*>(table),
                                                            static_cast<uint32_t*>(bias), rule,
                                                            heads, n_q, n_k, query_offset);
  } else {
    t5_bias_kernel<uint16_t><<<grid, kThreads, 0, stream>>>(static_cast<const uint16_t*>(table),
                                                            static_cast<uint16_t*>(bias), rule,
                                                            heads, n_q, n_k, query_offset);
  }
  return cudaGetLastError();
}

}  // namespace lmo::gpu
