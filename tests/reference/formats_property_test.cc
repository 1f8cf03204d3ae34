// Properties of rounding that must hold for every input, checked by rapidcheck with the
// project's wide-range generator (subnormals, ±0, format edges).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

#include "reference/formats.h"
#include "reference/number_types.h"
#include "tests/support/rc_generators.h"

namespace lmo::ref {
namespace {

rc::Gen<Format> any_format() {
  return rc::gen::element(Format::f32, Format::tf32, Format::bf16, Format::f16, Format::e4m3,
                          Format::e5m2);
}

RC_GTEST_PROP(FormatsProperty, RoundingIsMonotone, ()) {
  const Format f = *any_format();
  const double x = *lmo::rcgen::finite_double();
  const double y = *lmo::rcgen::finite_double();
  const double rx = decode<double>(f, encode(f, x, Overflow::kSaturate));
  const double ry = decode<double>(f, encode(f, y, Overflow::kSaturate));
  if (x <= y) RC_ASSERT(rx <= ry);
  if (y <= x) RC_ASSERT(ry <= rx);
}

RC_GTEST_PROP(FormatsProperty, RoundingPicksANearestNeighbourAndIsIdempotent, ()) {
  const Format f = *any_format();
  const double x = *lmo::rcgen::finite_double();
  const uint64_t b = encode(f, x, Overflow::kSaturate);
  const double r = decode<double>(f, b);
  RC_ASSERT(encode(f, r) == b);  // idempotent
  RC_ASSERT(std::signbit(r) == std::signbit(x));
  // Neither neighbour of |r| (patterns of positive values are ordered like their values) lies
  // strictly closer to |x|, unless |x| is beyond the largest finite value (saturated).
  const double ax = std::fabs(x);
  if (ax > decode<double>(f, max_finite_bits(f))) return;
  const uint64_t m = encode(f, ax) >> spec(f).shift;
  const mp err = abs(mp(ax) - mp(std::fabs(r)));
  for (uint64_t n : {m - 1, m + 1}) {
    if (n == ~uint64_t{0}) continue;  // below zero
    const double v = decode<double>(f, n << spec(f).shift);
    if (!std::isfinite(v)) continue;  // above the largest finite value
    RC_ASSERT(abs(mp(ax) - mp(v)) >= err);
  }
}

RC_GTEST_PROP(FormatsProperty, NegationCommutesWithRounding, ()) {
  const Format f = *any_format();
  const double x = *lmo::rcgen::finite_double();
  const uint64_t sign = uint64_t{1} << (spec(f).exp_bits + spec(f).frac_bits + spec(f).shift);
  const uint64_t p = encode(f, x), n = encode(f, -x);
  if (!bits_is_nan(f, p)) RC_ASSERT((p ^ sign) == n);
}

}  // namespace
}  // namespace lmo::ref
