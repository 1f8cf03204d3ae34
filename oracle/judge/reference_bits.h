// The judge's per-element roundings of an exact value (its correctly rounded reference, the ends
// of its naive-relative interval) read off the nearest double where that double decides them,
// so that MPFR runs only for the rare element near a rounding boundary. For the narrow output
// formats (precision ≤ 24: f32, tf32, bf16, f16, fp8), where a double carries 29 or more bits
// beyond the format's: at real shapes these roundings were most of `check`'s judging time, two
// to four MPFR encodes and half a dozen mp operations per element (docs/certified.md).
#pragma once

#include <cstdint>
#include <optional>

#include "reference/formats.h"

namespace lmo::oracle {

// The bits every value within abs_err of c rounds to in f (precision ≤ 24), under either overflow
// rule; nullopt where they differ, where c is 0, or where the rounding is f's largest finite
// value or beyond (the overflow rules differ there).
std::optional<uint64_t> rounding_within(ref::Format f, double c, double abs_err);

// encode(f, x, overflow) from xd, x rounded to the nearest double; nullopt where xd does not
// decide it (the caller encodes x itself).
std::optional<uint64_t> rounding_of_nearest_double(ref::Format f, double xd);

// What the judge's naive-relative interval needs (judge.cc, naive_interval): B = max(N, s·S·u_c)
// + a·ulp_f(x) + b·ulp_c(x), N the group's bound, S the element's error scale, and the ends
// round(x − B), round(x + B) saturated.
struct NaiveTerms {
  double group_bound = 0;   // N, rounded to the nearest double
  double scale_bound = 0;   // error_scale·S·2^-p_c (0: none), one rounding of each product
  double output_ulps = 0;   // a = output_ulps − ½ of the policy
  double compute_ulps = 0;  // b
  ref::Format compute = ref::Format::f32;
};
struct NaiveEnds {
  uint64_t lo = 0, hi = 0;
};
// The ends from xd (x rounded to the nearest double); nullopt where the doubles do not decide
// them: x near a binade boundary of ulp_f or ulp_c, near the formats' ranges' ends, a or b
// negative, or an end near a rounding boundary.
std::optional<NaiveEnds> naive_ends_of_nearest_double(ref::Format f, double xd,
                                                      const NaiveTerms& t);

}  // namespace lmo::oracle
