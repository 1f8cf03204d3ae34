// A value rounded to a storage format inside a formula, on any number type: the quantities a
// formula itself defines as stored (an fp8 scale is an f32 value; the quantized element is an
// e4m3 value computed from that stored scale, reference/fp8_scaling.h). Not a kernel's shortcut:
// the rounding is part of what is computed, so every number type rounds the same way.
#pragma once

#include <type_traits>

#include "reference/ball.h"
#include "reference/formats.h"
#include "reference/numeric.h"

namespace lmo::ref {

// x rounded to nearest-even in f (overflow as `o`), held in T. mp: exact; double and the
// simulated types: their value (a double) rounded, then held in T (a Sim<F> narrower than f
// rounds again, as a kernel computing in F would).
template <class T>
T round_to_format(Format f, const T& x, Overflow o = Overflow::kIeee) {
  if constexpr (std::is_same_v<T, mp>) {
    return decode<mp>(f, encode(f, x, o));
  } else {
    static_assert(is_double_exact_v<T>, "round_to_format: not a project number type");
    return T(decode<double>(f, encode(f, to_double(x), o)));
  }
}

// On a ball: the exact rounding when the interval decides it (ball_rounding.h), as an exact
// ball; otherwise the midpoint's rounding with the undecided branch counted (ball_undecided()),
// so that the certified driver recomputes the op in MPFR.
Ball round_to_format(Format f, const Ball& x, Overflow o = Overflow::kIeee);

}  // namespace lmo::ref
