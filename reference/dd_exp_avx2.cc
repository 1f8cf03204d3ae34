// exp_many four lanes at a time (dd_exp.h), compiled with AVX2 and FMA and called only where the
// CPU has both (dd_exp.cc checks). Each lane runs exp_core's steps, the operations of dd::exp in
// the same order, on a vector type: the bits are exp's. This file holds only that vector code, so
// that no function compiled here for AVX2 can stand in for a baseline one elsewhere.
#include <immintrin.h>

#include <cstdint>

#include "reference/dd_exp.h"
#include "reference/dd_exp_core.h"
#include "reference/v4.h"

namespace lmo::ref::dd {
namespace {

using v4::to_int;
using v4::V4;

}  // namespace

void exp_many_avx2(const double* xh, const double* xl, int64_t n, double* yh, double* yl) {
  const exp_core::Constants& c = exp_core::constants();
  const __m256d lowest = _mm256_set1_pd(-700), highest = _mm256_set1_pd(700);
  const V4 inv_l(c.inv_l);
  const double* table = &c.table[0].hi;  // hi, lo pairs
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const Word2<V4> x{V4(_mm256_loadu_pd(xh + i)), V4(_mm256_loadu_pd(xl + i))};
    // Within ±700 (NaN fails both) the scale 2^m is a normal double, exp's direct branch.
    const __m256d inside = _mm256_and_pd(_mm256_cmp_pd(x.hi.v, lowest, _CMP_GE_OQ),
                                         _mm256_cmp_pd(x.hi.v, highest, _CMP_LE_OQ));
    if (_mm256_movemask_pd(inside) != 0xf) {
      exp_core::exp_each(xh, xl, i, i + 4, yh, yl);
      continue;
    }
    // nearbyint: the current rounding mode, no exception (vroundsd's 0xc, as the scalar code).
    const V4 kd = _mm256_round_pd((x.hi * inv_l).v, _MM_FROUND_CUR_DIRECTION | _MM_FROUND_NO_EXC);
    const Word2<V4> p = exp_core::expm1_poly(exp_core::reduce(x, kd, c));
    // j = k & 255 (two's complement, as exp's long), its pair at 2j; m = floor(k/256) exactly.
    const __m256i k = to_int(kd);
    const __m256i at = _mm256_slli_epi64(_mm256_and_si256(k, _mm256_set1_epi64x(255)), 1);
    const Word2<V4> tj{V4(_mm256_i64gather_pd(table, at, 8)),
                       V4(_mm256_i64gather_pd(table + 1, at, 8))};
    const Word2<V4> y = exp_core::times_table(tj, p);
    const V4 m = _mm256_floor_pd(_mm256_mul_pd(kd.v, _mm256_set1_pd(1.0 / 256)));
    const V4 scale(_mm256_castsi256_pd(
        _mm256_slli_epi64(_mm256_add_epi64(to_int(m), _mm256_set1_epi64x(1023)), 52)));
    _mm256_storeu_pd(yh + i, (y.hi * scale).v);
    _mm256_storeu_pd(yl + i, (y.lo * scale).v);
  }
  exp_core::exp_each(xh, xl, i, n, yh, yl);
}

}  // namespace lmo::ref::dd
