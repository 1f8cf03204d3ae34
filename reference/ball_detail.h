// The helpers ball.cc and ball_erf.cc share: a result the balls cannot certify, and a value MPFR
// computed widened to a ball. Internal to the Ball implementation (ball.h states the rules).
#pragma once

#include <cmath>
#include <span>

#include "reference/ball.h"
#include "reference/double_double.h"
#include "reference/run.h"

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

// Runs (run.h) from and to balls.
[[gnu::always_inline]] inline Run run_of(const Ball& b) { return {b.mid(), b.rad()}; }
// The ball of a run: undecided where a word or the bound overflowed.
Ball checked_run(Run r);

// Σ_k c_k·x^k on balls by run_horner (run.h), for erfcx_taylor.cc's polynomial: finite
// coefficients and |x| < 1 (a non-finite result is undecided).
Ball horner(std::span<const Ball> c, const Ball& x);

}  // namespace lmo::ref::ball_detail
