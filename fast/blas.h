// The fast kernels' matrix products: OpenBLAS sgemm/sgemv (row-major), always single-threaded
// inside OpenBLAS. The kernels parallelize over tiles themselves (fast/threads.h, a tiling that
// depends on the shapes only); an OpenBLAS that split a product over its own threads could
// change the summation order with the thread count and break bitwise determinism.
#pragma once

#include <cstdint>

namespace lmo::fast {

// Sets OpenBLAS to one thread, once per process; every fast entry point that multiplies
// matrices calls it first. Idempotent and cheap after the first call.
void blas_single_threaded();

// C[m×n] = alpha · A[m×k] · op(B) + beta · C, row-major with leading dimensions; op(B) = Bᵀ
// (B stored n×k) when b_transposed, else B (stored k×n).
void sgemm(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, bool b_transposed, float beta, float* c, int64_t ldc);

// y[m] = A[m×n] · x[n], row-major A with leading dimension lda.
void sgemv(int64_t m, int64_t n, const float* a, int64_t lda, const float* x, float* y);

}  // namespace lmo::fast
