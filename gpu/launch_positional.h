// Launcher of gpu/sinusoidal_pe.cuh on device pointers (gpu/launch.h's conventions: enqueue on
// `stream`, return the launch's cudaError_t, cudaSuccess for an empty problem; no validation:
// gpu/api_positional.cc does that).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/api.h"

namespace lmo::gpu {

// positions: tokens int64 (|p| ≤ 2^53); turns_hi, turns_lo: d/2 doubles, the frequencies in turns
// of fast/turns.h; pe: tokens × d in s. All on the device.
cudaError_t launch_sinusoidal_pe(Storage s, const int64_t* positions, const double* turns_hi,
                                 const double* turns_lo, void* pe, int64_t tokens, int64_t d,
                                 cudaStream_t stream);

}  // namespace lmo::gpu
