// The helpers ball.cc and ball_erf.cc share: a result the balls cannot certify, and a value MPFR
// computed widened to a ball. Internal to the Ball implementation (ball.h states the rules).
#pragma once

#include <cmath>
#include <span>

#include "reference/ball.h"
#include "reference/double_double.h"

namespace lmo::ref::ball_detail {

// A result the midpoints give but the balls cannot certify: counted, radius infinite.
Ball undecided(double hi, double lo = 0);

inline bool finite(const Ball& x) { return std::isfinite(x.hi()); }

// The interval around a value MPFR computed: its double-double rounding, widened by 2^-160·|y|
// (MPFR's correct rounding to 167 bits) and by `spread`, how far the function moves over the
// argument's ball.
Ball around_mpfr(const mp& y, double spread);

// f evaluated by MPFR on the midpoint (the reference's own function), widened by
// lipschitz·(x's radius). 2^-160·|x| covers the midpoint's conversion to mp (exact unless the
// two words span more than 167 bits).
template <class F>
Ball via_mp(const Ball& x, F f, double lipschitz) {
  if (!finite(x)) {
    if (!x.exact()) return undecided(x.hi());
    return Ball(f(to_mp(x)));
  }
  return around_mpfr(f(to_mp(x)), lipschitz * (x.rad() + std::fabs(x.hi()) * 0x1p-160));
}

// A double-double value v with a running bound e ≥ |v − exact|, for chains of finite operations
// inside one function (the series and table combination of ball_trig.cc, Horner below): the
// rules of the ball operations (ball.cc), inlined and without their special cases, so that a
// caller compiled with FMA (fma_clones.h) gets each 2Prod as one instruction. mag(v) ≥ |v|:
// |lo| ≤ 2^-52·|hi| for normalized words. up() adds the absolute 2^-1070 a result near underflow
// loses. Non-finite results are the caller's to check (checked_run).
struct Run {
  dd::DD v;
  double e = 0;
};
[[gnu::always_inline]] inline double mag(dd::DD v) { return std::fabs(v.hi) * (1 + 0x1p-50); }
[[gnu::always_inline]] inline Run run_of(const Ball& b) { return {b.mid(), b.rad()}; }
// |x̂ŷ − xy| ≤ |x̂|·e_y + |ŷ|·e_x + e_x·e_y, plus the product's own rounding.
[[gnu::always_inline]] inline Run operator*(Run a, Run b) {
  const dd::DD p = dd::mul(a.v, b.v);
  return {p, up(mag(a.v) * b.e + mag(b.v) * a.e + a.e * b.e + dd::kMulErr * mag(p))};
}
[[gnu::always_inline]] inline Run operator+(Run a, Run b) {
  const dd::DD s = dd::add(a.v, b.v);
  return {s, up(a.e + b.e + dd::kAddErr * mag(s))};
}
[[gnu::always_inline]] inline Run operator-(Run a) { return {dd::neg(a.v), a.e}; }
[[gnu::always_inline]] inline Run operator-(Run a, Run b) { return a + -b; }
// The largest |value| the run admits.
[[gnu::always_inline]] inline double run_max(Run a) {
  return up((std::fabs(a.v.hi) + std::fabs(a.v.lo) + a.e) * (1 + 0x1p-52));
}
// The ball of a run: undecided where a word or the bound overflowed.
Ball checked_run(Run r);

// Σ_k c_k·x^k by Horner, v ← c_k + x·v, on runs (above). For the short series of ball_trig.cc
// and erfcx_taylor.cc: finite coefficients and |x| < 1 (a non-finite result is undecided).
Ball horner(std::span<const Ball> c, const Ball& x);

}  // namespace lmo::ref::ball_detail
