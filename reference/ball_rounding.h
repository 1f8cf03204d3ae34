// Whether a ball's interval decides the rounding of its value: the test that lets the certified
// evaluation stand in for MPFR ([certified], oracle/core/certified.h).
#pragma once

#include "reference/ball.h"

namespace lmo::ref {

// True when every value of b's interval, widened by the margin that also covers the MPFR
// reference's own rounding (ball.h), rounds to the same bits in every format of formats.h (f64,
// f32, tf32, bf16, f16, e4m3, e5m2), so that rounding b's midpoint gives the reference's bits.
// An exact ball decides trivially when its midpoint converts to mp exactly.
bool decides_every_format(const Ball& b);

}  // namespace lmo::ref
