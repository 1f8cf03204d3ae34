// Launcher of gpu/sinusoidal_pe.cuh for the three storage formats.
#include <cstdint>

#include "gpu/launch_positional.h"
#include "gpu/sinusoidal_pe.cuh"

namespace lmo::gpu {
namespace {

// Grid dimensions beyond which the kernel's loops stride (CUDA's y limit is 65535).
constexpr int64_t kMaxGridX = int64_t{1} << 20;
constexpr int64_t kMaxGridY = 65535;

}  // namespace

cudaError_t launch_sinusoidal_pe(Storage s, const int64_t* positions, const double* turns_hi,
                                 const double* turns_lo, void* pe, int64_t tokens, int64_t d,
                                 cudaStream_t stream) {
  if (tokens == 0) return cudaSuccess;
  const int64_t half = d / 2;
  // Threads along a row: the narrowest of 32, 64, 128, 256 that covers its pairs.
  int64_t pairs_x = 32;
  while (pairs_x < kThreads && pairs_x < half) pairs_x *= 2;
  const int64_t tokens_y = kThreads / pairs_x;
  const dim3 block(static_cast<unsigned int>(pairs_x), static_cast<unsigned int>(tokens_y));
  const int64_t gx = (half + pairs_x - 1) / pairs_x, gy = (tokens + tokens_y - 1) / tokens_y;
  const dim3 grid(static_cast<unsigned int>(gx < kMaxGridX ? gx : kMaxGridX),
                  static_cast<unsigned int>(gy < kMaxGridY ? gy : kMaxGridY));
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    T* out = static_cast<T*>(pe);
    // One store per pair needs the array aligned to two elements (cudaMalloc's always is).
    if (reinterpret_cast<uintptr_t>(pe) % (2 * sizeof(T)) == 0) {
      sinusoidal_pe_kernel<T, true>
          <<<grid, block, 0, stream>>>(positions, turns_hi, turns_lo, out, tokens, half);
    } else {
      sinusoidal_pe_kernel<T, false>
          <<<grid, block, 0, stream>>>(positions, turns_hi, turns_lo, out, tokens, half);
    }
    return cudaGetLastError();
  });
}

}  // namespace lmo::gpu
