// sin_cos_many four lanes at a time (ball.h), compiled with AVX2 and FMA and called only where the
// CPU has both (ball_trig.cc checks). Each lane runs trig_core's steps, the operations of the
// scalar sin_and_cos in the same order, on a vector type: the words and bounds are the scalar
// ones. Raw arrays in and out, so that no function compiled here for AVX2 can stand in for a
// baseline one elsewhere; ball_trig.cc makes the balls.
#include <immintrin.h>

#include <cstdint>

#include "reference/trig_core.h"
#include "reference/v4.h"

namespace lmo::ref::trig_core {
namespace {

using v4::V4;

V4 load(const double* p) { return _mm256_loadu_pd(p); }
void store(double* p, V4 x) { _mm256_storeu_pd(p, x.v); }
void store(double* p, const RunOf<V4>& r) {
  store(p, r.v.hi);
  store(p + 4, r.v.lo);
  store(p + 8, r.e);
}
RunOf<V4> gather(const double* hi, const double* lo, const double* e, __m256i at) {
  return {{V4(_mm256_i64gather_pd(hi, at, 8)), V4(_mm256_i64gather_pd(lo, at, 8))},
          V4(_mm256_i64gather_pd(e, at, 8))};
}

}  // namespace

void lanes_avx2(const double* xh, const double* xl, const double* xr, int64_t n, Lanes* out) {
  const Constants& t = constants();
  const V4 two_over_pi(t.two_over_pi), sixty_four(64.0), limit(0.8);
  const V4 lowest(-kTable), highest(kTable), offset(kTable);
  for (int64_t i = 0; i + 4 <= n; i += 4) {
    Lanes& o = out[i / 4];
    const RunOf<V4> x{{load(xh + i), load(xl + i)}, load(xr + i)};
    const V4 kd = v4::nearbyint(x.v.hi * two_over_pi);
    const RunOf<V4> r = reduce(x, kd, t);
    o.ok = _mm256_movemask_pd(_mm256_cmp_pd(run_max(r).v, limit.v, _CMP_LT_OQ));
    // j within the table in every lane (lanes with r out of range are discarded by the caller).
    const V4 jd(
        _mm256_min_pd(_mm256_max_pd(v4::nearbyint(r.v.hi * sixty_four).v, lowest.v), highest.v));
    const __m256i at = v4::to_int(jd + offset);
    const RunOf<V4> sj = gather(t.s_hi.data(), t.s_lo.data(), t.s_e.data(), at);
    const RunOf<V4> cj = gather(t.c_hi.data(), t.c_lo.data(), t.c_e.data(), at);
    const Series<V4> s = series(r, jd, sj, cj, t);
    store(o.kd, kd);
    store(o.jd, jd);
    store(o.sh, s.sh);
    store(o.ch, s.ch);
    store(o.sr, s.sr);
    store(o.cr, s.cr);
  }
}

}  // namespace lmo::ref::trig_core
