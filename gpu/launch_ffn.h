// Launchers of gpu/ffn.cuh on device pointers (gpu/launch.h's conventions: enqueue on `stream`,
// return the launch's cudaError_t, cudaSuccess for an empty problem; no validation:
// gpu/api_ffn.cc and gpu/api_decoder_block.cc do that).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/api.h"

namespace lmo::gpu {

// Both FFN forms (gpu/api_ffn.h): x [tokens, d], up (w1 or w) and v (glu_ffn's, else null)
// [d, d_ff], b1 [d_ff] and b2 [d] (or null), w2 [d_ff, d], y [tokens, d], all in s; h is the
// f32 hidden layer [tokens, d_ff], scratch the caller allocates.
cudaError_t launch_ffn(Activation act, Storage s, const void* x, const void* up, const void* v,
                       const void* b1, const void* w2, const void* b2, float* h, void* y,
                       int64_t tokens, int64_t d, int64_t d_ff, cudaStream_t stream);

// out [rows, cols] = a [rows, n] · w [n, cols], all f32, each element rounded once to f32.
cudaError_t launch_project_f32(const float* a, const float* w, float* out, int64_t rows, int64_t n,
                               int64_t cols, cudaStream_t stream);

// out = a + b, n f32 values (IEEE f32 additions).
cudaError_t launch_add_f32(const float* a, const float* b, float* out, int64_t n,
                           cudaStream_t stream);

// n values from storage `from` to storage `to` (exact widening, nearest-even narrowing).
cudaError_t launch_convert(Storage from, const void* in, Storage to, void* out, int64_t n,
                           cudaStream_t stream);

}  // namespace lmo::gpu
