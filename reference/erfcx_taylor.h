// erfcx(a) = e^(a²)·erfc(a) for a double-double a in [kErfcxMin, kErfcxMax], as a ball: a Taylor
// polynomial around the nearest of a table of points, its coefficients computed by MPFR with a
// running error bound, its truncation bound added (erfcx_taylor.cc has the derivation). Ball erf
// and erfc (ball_erf.cc) take erfc(a) = e^(−a²)·erfcx(a) from it away from 0: a dozen ball
// operations instead of a series or continued fraction of a hundred. erfc has no cancellation
// anywhere on [0, 26.5], so the table covers all of it; erf near 0 takes its own series.
#pragma once

#include "reference/ball.h"
#include "reference/double_double.h"

namespace lmo::ref {

inline constexpr double kErfcxMin = 0;
inline constexpr double kErfcxMax = 26.5;

// erfcx(a) enclosed; a.hi must lie in [kErfcxMin, kErfcxMax] (throws std::invalid_argument
// otherwise), a ≥ 0. The first call near a table point computes that point's coefficients (about a
// millisecond of MPFR at a few hundred bits); later calls reuse them, from any thread.
Ball erfcx_ball(const dd::DD& a);

}  // namespace lmo::ref
