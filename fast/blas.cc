#include "fast/blas.h"

#include <cblas.h>

#include <mutex>

namespace lmo::fast {

void blas_single_threaded() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

void sgemm(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, bool b_transposed, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, b_transposed ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
              static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
              static_cast<blasint>(ldc));
}

void sgemv(int64_t m, int64_t n, const float* a, int64_t lda, const float* x, float* y) {
  cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<blasint>(m), static_cast<blasint>(n), 1.0f,
              a, static_cast<blasint>(lda), x, 1, 0.0f, y, 1);
}

}  // namespace lmo::fast
