// Launchers of gpu/softmax.cuh for the three storage formats.
#include "gpu/launch.h"
#include "gpu/softmax.cuh"

namespace lmo::gpu {

cudaError_t launch_softmax(Storage s, const void* z, void* p, int64_t rows, int64_t n,
                           cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    softmax_kernel<T><<<row_grid(rows), kThreads, 0, stream>>>(static_cast<const T*>(z),
                                                               static_cast<T*>(p), rows, n);
    return cudaGetLastError();
  });
}

cudaError_t launch_logsumexp(Storage s, const void* z, float* logz, int64_t rows, int64_t n,
                             cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    logsumexp_kernel<T>
        <<<row_grid(rows), kThreads, 0, stream>>>(static_cast<const T*>(z), logz, rows, n);
    return cudaGetLastError();
  });
}

cudaError_t launch_cross_entropy(Storage s, const void* z, const int64_t* target, int64_t rows,
                                 int64_t vocab, float lambda, float cap, float* loss, float* logz,
                                 void* grad, float* scratch, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  const int64_t parts = softmax_math::row_parts(vocab);
  const CrossEntropyParts p{parts, scratch, scratch + rows * parts, scratch + 2 * rows * parts};
  const unsigned int grid = row_grid(rows * parts);
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    const T* zt = static_cast<const T*>(z);
    cross_entropy_part_max_kernel<T><<<grid, kThreads, 0, stream>>>(zt, rows, vocab, cap, p);
    cross_entropy_part_sum_kernel<T><<<grid, kThreads, 0, stream>>>(zt, rows, vocab, cap, p);
    cross_entropy_finish_kernel<T>
        <<<grid, kThreads, 0, stream>>>(zt, target, rows, vocab, static_cast<double>(lambda), cap,
                                        p, loss, logz, static_cast<T*>(grad));
    return cudaGetLastError();
  });
}

}  // namespace lmo::gpu
