// The naive-relative policy's bounds (policy.h, rule (2)): the largest error of the naive run
// over a group, the op's error scale as a bound, and the interval of stored values it allows
// at an exact value, with the sentence that explains a failure.
#pragma once

#include <cstdint>
#include <string>

#include "oracle/judge/judge.h"
#include "oracle/judge/reference_bits.h"
#include "oracle/rules/policy.h"
#include "reference/formats.h"
#include "reference/number_types.h"

namespace lmo::oracle {

// The stored value must be the rounding of some value within B of the exact x: a kernel whose
// pre-rounding value v is within B of x stores round(v), and rounding is monotone, so
// round(x − B) ≤ y ≤ round(x + B). With output_ulps = ½ this is "B plus half an ulp of the
// output" made exact: it also fails a wrong rounding direction (truncation) wherever x is not
// within B of a midpoint, which |y − x| ≤ B + ½ ulp would let through.
struct NaiveInterval {
  mp bound;
  uint64_t lo = 0, hi = 0;  // round(x − B), round(x + B)
};

// error_scale · u_c · S, the op's error scale S as a bound (policy.h, rule (2)); u_c is the
// compute format's unit roundoff, half its ulp of 1. An S that is not finite (inputs near the
// double range, or infinite ones whose terms cancel to a finite exact value) says nothing: 0.
mp scale_bound(const Policy& p, ref::Format compute, double s);
// The same terms in doubles for reference_bits.h (naive_ends_of_nearest_double).
NaiveTerms naive_terms(const Policy& p, ref::Format compute, double group_bound, double s);
// The interval at exact x in format f: B = max(naive_bound, scale_bound) + the policy's output
// and compute ulps; its ends saturate at the largest finite value.
NaiveInterval naive_interval(const Policy& p, ref::Format f, const mp& x, const mp& naive_bound,
                             ref::Format compute, double scale);
// Why y (outside iv) fails at x.
std::string naive_failure(const Policy& p, ref::Format f, const mp& x, uint64_t y,
                          const ElementError& m, const NaiveInterval& iv, double scale);

}  // namespace lmo::oracle
