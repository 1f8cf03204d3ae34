// The steps of the ball sine and cosine (ball_trig.cc, where the method and its bounds are
// written) for double and for the four-lane vector of sin_cos_many's AVX2 path
// (ball_trig_avx2.cc): the same operations in the same order on runs (run.h), so that both give
// the very same balls. Internal to the Ball implementation; it includes neither ball.h nor MPFR,
// so that the AVX2 file compiles no code a baseline caller could pick up.
#pragma once

#include <array>
#include <cstdint>

#include "reference/run.h"

namespace lmo::ref::trig_core {

inline constexpr int kTerms = 6;   // terms of each short series
inline constexpr int kTable = 51;  // j = −kTable … kTable

struct Constants {
  double two_over_pi = 0, p1 = 0, p2 = 0;
  Run rest;
  // (−1)^k/(2k+1)! and (−1)^k/(2k)!, k < kTerms, as enclosures of the exact rationals.
  std::array<Run, kTerms> sin_c, cos_c;
  // sin(j/64) and cos(j/64) at index j + kTable, word by word (the vector path gathers them).
  std::array<double, 2 * kTable + 1> s_hi, s_lo, s_e, c_hi, c_lo, c_e;
};
const Constants& constants();

// r = x − k·π/2 on runs.
template <class T>
[[gnu::always_inline]] inline RunOf<T> reduce(RunOf<T> x, T kd, const Constants& t) {
  const RunOf<T> k = exact_run(kd);
  return ((x - exact_run(kd * T(t.p1))) - exact_run(kd * T(t.p2))) -
         k * RunOf<T>{{T(t.rest.v.hi), T(t.rest.v.lo)}, T(t.rest.e)};
}

// Σ_k c_k·h2^k by Horner on runs, widened by the first omitted term's bound.
template <class T>
[[gnu::always_inline]] inline RunOf<T> short_series(const std::array<Run, kTerms>& c, RunOf<T> h2,
                                                    T tail) {
  const auto at = [&](size_t k) { return RunOf<T>{{T(c[k].v.hi), T(c[k].v.lo)}, T(c[k].e)}; };
  RunOf<T> v = run_horner<T>(kTerms, at, h2);
  v.e = up_of(v.e + tail);
  return v;
}

// sin h and cos h of h = r − j/64, and sin r, cos r from the table's S_j, C_j.
template <class T>
struct Series {
  RunOf<T> sh, ch, sr, cr;
};
template <class T>
[[gnu::always_inline]] inline Series<T> series(RunOf<T> r, T jd, RunOf<T> sj, RunOf<T> cj,
                                               const Constants& t) {
  const RunOf<T> h = r - exact_run(jd * T(1.0 / 64));  // j/64 exact
  const T h_max = run_max(h);
  // |h|^12/12! and |h|^13/13! rounded up (12! = 479001600; up_of covers the roundings).
  const T h4 = up_of(up_of(h_max * h_max) * up_of(h_max * h_max));
  const T h12 = up_of(up_of(h4 * h4) * h4);
  const T tail_c = up_of(h12 / T(479001600.0)),
          tail_s = up_of(up_of(h12 * h_max) / T(6227020800.0));
  const RunOf<T> h2 = h * h;
  Series<T> s;
  s.ch = short_series(t.cos_c, h2, tail_c);
  s.sh = h * short_series(t.sin_c, h2, T(0));
  s.sh.e = up_of(s.sh.e + tail_s);
  s.sr = sj * s.ch + cj * s.sh;
  s.cr = cj * s.ch - sj * s.sh;
  return s;
}

// Four lanes of the vector path: each run as its words and bound (hi ×4, lo ×4, e ×4), and bit
// l of ok set where lane l's reduced argument lay within 0.8 (the scalar path's test).
struct Lanes {
  double kd[4], jd[4];
  double sh[12], ch[12], sr[12], cr[12];
  int ok = 0;
  // Lane l's series, as the scalar path computes it.
  Series<double> lane(int l) const {
    const auto run = [&](const double* w) { return Run{{w[l], w[4 + l]}, w[8 + l]}; };
    return {run(sh), run(ch), run(sr), run(cr)};
  }
};
// The lanes of x_i = {xh[i], xl[i]} ± xr[i], i < n rounded down to a multiple of 4, every x_i
// satisfying by_table; out[i/4] for each group. Defined in ball_trig_avx2.cc.
void lanes_avx2(const double* xh, const double* xl, const double* xr, int64_t n, Lanes* out);

}  // namespace lmo::ref::trig_core
