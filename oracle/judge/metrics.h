// Error metrics of one backend output element against the exact value, in a storage format, and
// their aggregates over a tensor. The exact value is an `mp`; the backend's output is a bit
// pattern of the output format; the reference is the exact value correctly rounded to that
// format (ref::encode, round to nearest-even).
//
// The monotone integer line. Every non-NaN pattern p of a format has an ordinal: its magnitude
// bits (sign cleared) as an unsigned integer, negated when the sign is set. The magnitude bits of
// a binary format increase with the value (subnormals, normals and the infinity follow each
// other), so ordinal(a) < ordinal(b) ⇔ value(a) < value(b), +0 and −0 both have ordinal 0, and
// consecutive ordinals are neighbouring representable values: the smallest subnormal is 1, the
// largest finite value is M, +inf is M + 1 (formats with an infinity; e4m3 has none).
//
// ULP distance from a to b: ordinal(b) − ordinal(a), signed, the number of steps between
// neighbouring representable values that lead from a to b. Across zero it counts the values on
// both sides (−min subnormal to +min subnormal: 2; ±0 to either: 1); from the largest finite
// value to the infinity: 1. tf32 lives in the high 19 bits of a 32-bit word: only those count.
#pragma once

#include <cstdint>
#include <span>

#include "reference/ball.h"
#include "reference/formats.h"
#include "reference/number_types.h"
#include "reference/tensor.h"

namespace lmo::oracle {

using ref::mp;

// Ordinal of a non-NaN pattern of f (see above); throws std::invalid_argument for a NaN.
int64_t ordinal(ref::Format f, uint64_t bits);
// The pattern (container position) with ordinal n; ordinal 0 gives +0. Throws
// std::out_of_range beyond ±inf (or ±max finite for e4m3).
uint64_t from_ordinal(ref::Format f, int64_t n);
// ordinal(to) − ordinal(from), saturated to the int64 range (only f64 can exceed it). Throws
// std::invalid_argument when either pattern is NaN.
int64_t ulp_distance(ref::Format f, uint64_t from, uint64_t to);

// The spacing of f's representable values in the binade of |x|: 2^(max(e, emin) − frac_bits)
// with 2^e ≤ |x| < 2^(e+1); for x = 0 the smallest subnormal; for |x| ≥ the largest finite
// value (and ±inf) the spacing at the largest finite value. NaN for NaN.
mp ulp_at(ref::Format f, const mp& x);
// Unit roundoff u = 2^−p, p the precision (significand bits, hidden bit included).
mp unit_roundoff(ref::Format f);

// |y − x| with y = value of `got`; 0 when both are the same infinity, +inf when only one is
// infinite or they are opposite infinities, NaN when either is NaN.
mp abs_error(ref::Format f, const mp& exact, uint64_t got);
// |y − x| / |x|. For x = 0: 0 when y = ±0, +inf otherwise. For x = ±inf: 0 when y is the same
// infinity, +inf otherwise. NaN when either is NaN.
mp rel_error(ref::Format f, const mp& exact, uint64_t got);
// rel_error / unit_roundoff(f), as a double (+inf, NaN pass through). A correctly rounded normal
// result has at most 1.
double error_in_u(ref::Format f, const mp& rel_error);
// −log2(rel_error) clamped to [0, p]: p when exact or when the error is below one unit roundoff
// (the format holds no more), 0 when the relative error is ≥ 1 (including +inf); NaN for NaN.
double significant_bits(ref::Format f, const mp& rel_error);

// All metrics of one element.
struct ElementMetrics {
  uint64_t reference = 0;  // encode(f, exact, overflow): the correctly rounded reference
  bool has_ulps = false;   // false when the reference or got is NaN (no ordinal)
  int64_t ulps = 0;        // ulp_distance(f, reference, got): signed, + when got is above
  mp abs_error;
  mp rel_error;
  double error_in_u = 0;
  double significant_bits = 0;
};
ElementMetrics element_metrics(ref::Format f, const mp& exact, uint64_t got,
                               ref::Overflow overflow = ref::Overflow::kIeee);
// The same given the correctly rounded reference encode(f, exact, overflow), when the caller
// already has it (the judge rounds each exact value once for all the backends it judges).
ElementMetrics element_metrics_rounded(ref::Format f, const mp& exact, uint64_t reference,
                                       uint64_t got);
// One element's exact value as the judge holds it: an mp value, or a certified ball whose
// midpoint is the exact value (x = to_mp(ball), oracle/core/certified.h), which spares making
// an mp value per element where doubles answer (midpoint_doubles.h). Exactly one is set.
struct ExactRef {
  const mp* value = nullptr;
  const ref::Ball* ball = nullptr;

  bool finite() const;
  // x rounded to double.
  double nearest() const;
  // x: the held mp value, or `scratch` set to the ball's.
  const mp& get(mp& scratch) const;
};

// The part of an element's metrics the judge and MetricsAccumulator::add use: the reference,
// the ulps, and x and |y − x| rounded to double (bit for bit abs_error's mp value rounded; add
// makes the mp values only where an element may hold the largest absolute or relative error).
struct ElementError {
  uint64_t reference = 0;
  bool has_ulps = false;
  int64_t ulps = 0;
  double exact = 0;      // x rounded to double
  double abs_error = 0;  // |y − x| rounded to double (NaN, inf as abs_error gives them)
};
ElementError element_error(ref::Format f, ExactRef x, uint64_t reference, uint64_t got);
// The same given x rounded to double (x.nearest()), which the judge holds.
ElementError element_error(ref::Format f, ExactRef x, double nearest, uint64_t reference,
                           uint64_t got);

// Distance of x from the midpoint of the values of patterns a and b (non-NaN, a ≠ b in value),
// in units of |value(b) − value(a)|. An infinity stands for the value one step beyond the
// largest finite value (max + ulp), whose midpoint with max is the overflow threshold.
double distance_to_midpoint(ref::Format f, const mp& x, uint64_t a, uint64_t b);
// Distance of x from the nearest rounding midpoint of f, in ulps of the gap between the two
// representable values that bracket x: in [0, 1/2] for |x| ≤ the largest finite value (0 exactly
// at a midpoint, 1/2 at a representable value); beyond it, the distance to the overflow
// threshold max + ulp/2 (can exceed 1/2). +inf for ±inf, NaN for NaN.
double midpoint_distance(ref::Format f, const mp& x);

// Aggregates over the elements where the reference and got are both finite (NaN and infinity
// are judged by parity, not measured).
struct TensorMetrics {
  int64_t compared = 0;         // elements measured
  int64_t max_ulps = 0;         // max |ulps|
  int64_t max_ulps_index = -1;  // first element attaining it (-1: none measured)
  mp max_abs = 0;
  mp max_rel = 0;
  double min_significant_bits = 0;  // p when nothing was measured
  // Normalized mean squared error Σ(y − x)² / Σx² (0/0 = 0, c/0 = +inf). Reported only: no
  // policy judges on it (DESIGN.md: never an all-tensor mean).
  double nmse = 0;
};

class MetricsAccumulator {
 public:
  explicit MetricsAccumulator(ref::Format f) : format_(f) {}
  // Adds element `index` (used for max_ulps_index) when both are finite; ignores it otherwise.
  // e is element_error(format, x, reference, got).
  void add(int64_t index, ExactRef x, const ElementError& e, uint64_t got);
  // Adds what `later` accumulated, as if its elements had been added after this one's (the
  // judge merges its blocks in index order). The sums are added as wholes: the same to within
  // the rounding of mp, not bit for bit a single element-by-element sum.
  void merge(const MetricsAccumulator& later);
  TensorMetrics result() const;

 private:
  ref::Format format_;
  TensorMetrics t_;
  bool any_ = false;
  // The NMSE's sums in long double, of the values rounded to double (its 15-bit exponent holds
  // any double's square): it is reported, never judged, and a 167-bit MPFR fma per element cost
  // a tenth of `verify`.
  long double sum_sq_err_ = 0;
  long double sum_sq_exact_ = 0;
  double max_abs_double_ = 0;  // t_.max_abs rounded to double
  double max_rel_double_ = 0;  // t_.max_rel rounded to double
  // Whether an element of these errors (rounded to double) may exceed t_.max_rel.
  bool may_raise_max_rel(double abs_error, double exact) const;
};

// Metrics of a whole floating tensor against exact values (same length; throws
// std::invalid_argument otherwise or for an integer dtype).
TensorMetrics tensor_metrics(std::span<const mp> exact, const ref::Tensor& got,
                             ref::Overflow overflow = ref::Overflow::kIeee);

}  // namespace lmo::oracle
