// Four doubles with the operations the shared double-double templates need (double_double.h,
// run.h), each one IEEE operation per lane: the vector type of the AVX2 paths (dd_exp_avx2.cc,
// ball_trig_avx2.cc). Include only from files compiled with -mavx2 -mfma, which the callers run
// only on a CPU that has both.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace lmo::ref::v4 {

struct V4 {
  __m256d v;
  V4() : v(_mm256_setzero_pd()) {}
  V4(__m256d x) : v(x) {}  // NOLINT(google-explicit-constructor): the intrinsics' results
  explicit V4(double d) : v(_mm256_set1_pd(d)) {}
};
[[gnu::always_inline]] inline V4 operator+(V4 a, V4 b) { return _mm256_add_pd(a.v, b.v); }
[[gnu::always_inline]] inline V4 operator-(V4 a, V4 b) { return _mm256_sub_pd(a.v, b.v); }
[[gnu::always_inline]] inline V4 operator*(V4 a, V4 b) { return _mm256_mul_pd(a.v, b.v); }
[[gnu::always_inline]] inline V4 operator/(V4 a, V4 b) { return _mm256_div_pd(a.v, b.v); }
// −x flips the sign bit, as the scalar negation does.
[[gnu::always_inline]] inline V4 operator-(V4 a) {
  return _mm256_xor_pd(a.v, _mm256_set1_pd(-0.0));
}
[[gnu::always_inline]] inline V4 fma(V4 a, V4 b, V4 c) { return _mm256_fmadd_pd(a.v, b.v, c.v); }
// |x| clears the sign bit, as std::fabs does.
[[gnu::always_inline]] inline V4 fabs(V4 a) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), a.v); }
// nearbyint in the current rounding mode without exceptions (vroundpd's 0xc, as std::nearbyint).
[[gnu::always_inline]] inline V4 nearbyint(V4 a) {
  return _mm256_round_pd(a.v, _MM_FROUND_CUR_DIRECTION | _MM_FROUND_NO_EXC);
}

// The integer held exactly by each lane of an integral double of magnitude below 2^51, as int64:
// adding 1.5·2^52 puts it in the low bits of the sum's pattern.
[[gnu::always_inline]] inline __m256i to_int(V4 k) {
  const __m256d magic = _mm256_set1_pd(0x1.8p52);
  return _mm256_sub_epi64(_mm256_castpd_si256(_mm256_add_pd(k.v, magic)),
                          _mm256_castpd_si256(magic));
}

}  // namespace lmo::ref::v4
