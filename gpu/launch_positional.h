// Launchers of the position kernels (gpu/sinusoidal_pe.cuh, gpu/position_tables.cuh,
// gpu/shaw_logits.cuh) on device pointers (gpu/launch.h's conventions: enqueue on
// `stream`, return the launch's cudaError_t, cudaSuccess for an empty problem; no validation:
// gpu/api_positional.cc does that).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/api.h"
#include "gpu/relative_position.h"

namespace lmo::gpu {

// positions: tokens int64 (|p| ≤ 2^53); turns_hi, turns_lo: d/2 doubles, the frequencies in turns
// of kernels/api/turns.h; pe: tokens × d in s. All on the device.
cudaError_t launch_sinusoidal_pe(Storage s, const int64_t* positions, const double* turns_hi,
                                 const double* turns_lo, void* pe, int64_t tokens, int64_t d,
                                 cudaStream_t stream);

// token_ids, positions: tokens int64 rows of the tables (checked); tables and h in s.
cudaError_t launch_learned_position(Storage s, const void* token_table, const void* position_table,
                                    const int64_t* token_ids, const int64_t* positions, void* h,
                                    int64_t tokens, int64_t d, cudaStream_t stream);

// q [n_q, d_k], k [n_k, d_k], rel_k [2K + 1, d_k], e [n_q, n_k], all in s.
cudaError_t launch_shaw_logits(Storage s, const void* q, const void* k, const void* rel_k, void* e,
                               int64_t n_q, int64_t n_k, int64_t d_k, int64_t max_relative_position,
                               cudaStream_t stream);

// table [num_buckets, heads] and bias [heads, n_q, n_k] in s; rule.thresholds on the device.
cudaError_t launch_t5_bias(Storage s, const void* table, void* bias, const relpos::T5Rule& rule,
                           int64_t heads, int64_t n_q, int64_t n_k, int64_t query_offset,
                           cudaStream_t stream);

}  // namespace lmo::gpu
