// Launchers of gpu/softmax.cuh for the three storage formats.
#include "gpu/launch.h"
#include "gpu/softmax.cuh"

namespace lmo::gpu {

namespace {

RowParts row_parts_in(float* scratch, int64_t rows, int64_t n) {
  const int64_t parts = softmax_math::row_parts(n);
  return {parts, scratch, scratch + rows * parts, scratch + 2 * rows * parts};
}

// Launches 1 and 2: the parts' maxima (and, kBadToDouble, flags), then their sums.
template <class T, bool kBadToDouble>
void launch_part_stats(const T* z, int64_t rows, int64_t n, float cap, const RowParts& p,
                       cudaStream_t stream) {
  const unsigned int grid = row_grid(rows * p.parts);
  row_part_max_kernel<T, kBadToDouble><<<grid, kThreads, 0, stream>>>(z, rows, n, cap, p);
  row_part_sum_kernel<T, kBadToDouble><<<grid, kThreads, 0, stream>>>(z, rows, n, cap, p);
}

}  // namespace

cudaError_t launch_softmax(Storage s, const void* z, void* p, int64_t rows, int64_t n,
                           float* scratch, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  const RowParts parts = row_parts_in(scratch, rows, n);
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    const T* zt = static_cast<const T*>(z);
    launch_part_stats<T, false>(zt, rows, n, 0.0f, parts, stream);
    softmax_finish_kernel<T><<<row_grid(rows * parts.parts), kThreads, 0, stream>>>(
        zt, static_cast<T*>(p), rows, n, parts);
    return cudaGetLastError();
  });
}

cudaError_t launch_logsumexp(Storage s, const void* z, float* logz, int64_t rows, int64_t n,
                             float* scratch, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  const RowParts parts = row_parts_in(scratch, rows, n);
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    launch_part_stats<T, false>(static_cast<const T*>(z), rows, n, 0.0f, parts, stream);
    logsumexp_finish_kernel<<<element_grid(rows), kThreads, 0, stream>>>(logz, rows, parts);
    return cudaGetLastError();
  });
}

cudaError_t launch_cross_entropy(Storage s, const void* z, const int64_t* target, int64_t rows,
                                 int64_t vocab, float lambda, float cap, float* loss, float* logz,
                                 void* grad, float* scratch, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  const RowParts parts = row_parts_in(scratch, rows, vocab);
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    const T* zt = static_cast<const T*>(z);
    launch_part_stats<T, true>(zt, rows, vocab, cap, parts, stream);
    cross_entropy_finish_kernel<T><<<row_grid(rows * parts.parts), kThreads, 0, stream>>>(
        zt, target, rows, vocab, static_cast<double>(lambda), cap, parts, loss, logz,
        static_cast<T*>(grad));
    return cudaGetLastError();
  });
}

}  // namespace lmo::gpu
