// A certified ball's midpoint as the judge reads it in doubles. Where the balls decided every
// rounding (oracle/core/certified.h) the exact value of an element is x = to_mp(ball), the
// double-double midpoint hi + lo rounded once to mp's 167 bits; the judge's metrics need x and
// |y − x| each rounded to double. Made as mp values they cost an MPFR allocation, conversion and
// subtraction per element: at real shapes (5·10^8 elements) most of what `check` spent beyond
// the exact values themselves (docs/certified.md). These give the very doubles MPFR gives from
// the mp values, or nullopt where the doubles cannot be sure of it (the caller makes the mp
// values then).
#pragma once

#include <optional>

#include "reference/ball.h"

namespace lmo::oracle {

// static_cast<double>(to_mp(b)): x rounded to double. nullopt where hi + lo spans more than 167
// bits (to_mp rounds, and a second rounding to double could differ from one), or a word is not
// finite.
std::optional<double> midpoint_double(const ref::Ball& b);

// static_cast<double>(|y − to_mp(b)|) for a finite double y: the exact difference correctly
// rounded to double (a three-term sum, rounded once through a rounding to odd). nullopt where
// x or y − x does not fit in 167 bits (MPFR would round before the double does), where a nonzero
// term lies outside [2^-900, 2^1000] (underflow would void the exact transformations), or a word
// is not finite.
std::optional<double> midpoint_abs_error(const ref::Ball& b, double y);

}  // namespace lmo::oracle
