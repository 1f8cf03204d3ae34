#include "oracle/judge/reference_bits.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "reference/ball_rounding.h"

namespace lmo::oracle {

using ref::Format;

std::optional<uint64_t> rounding_within(Format f, double c, double abs_err) {
  if (!(c != 0) || !std::isfinite(c) || !(abs_err >= 0) || !std::isfinite(abs_err)) {
    return std::nullopt;
  }
  // Rounding to nearest is symmetric: −c's bits are c's with the sign bit set (which sits at the
  // top of the container, tf32 included). The relative error is overstated by the factor
  // 1 + 2^-40, which covers the division's rounding.
  const double m = std::fabs(c);
  const std::optional<uint64_t> b =
      ref::narrow_rounding(f, ref::dd::DD{m, 0}, abs_err / m * (1 + 0x1p-40));
  if (!b) return std::nullopt;
  const uint64_t sign = uint64_t{1} << (ref::spec(f).container_bits - 1);
  return c < 0 ? *b | sign : *b;
}

std::optional<uint64_t> rounding_of_nearest_double(Format f, double xd) {
  // x lies within half an ulp of xd, at most 2^-53·|xd| while xd is normal.
  if (!(std::fabs(xd) >= 0x1p-1000)) return std::nullopt;
  return rounding_within(f, xd, std::fabs(xd) * 0x1p-53);
}

namespace {

// ulp_at(f, x) (metrics.h) for x in the binade [2^e, 2^(e+1)) with e ≤ f's emax.
double ulp_in_binade(Format f, int e) {
  const ref::FormatSpec& s = ref::spec(f);
  return std::ldexp(1.0, std::max(e, s.emin()) - s.frac_bits);
}

}  // namespace

std::optional<NaiveEnds> naive_ends_of_nearest_double(Format f, double xd, const NaiveTerms& t) {
  const double ax = std::fabs(xd);
  if (!(ax >= 0x1p-900 && ax <= 0x1p900) || !(t.output_ulps >= 0 && t.compute_ulps >= 0) ||
      !(t.group_bound >= 0 && t.scale_bound >= 0) || !std::isfinite(t.group_bound) ||
      !std::isfinite(t.scale_bound) || (t.scale_bound > 0 && t.scale_bound < 0x1p-1000)) {
    return std::nullopt;
  }
  // x's binade is xd's unless xd is a power of two (x may lie just below it).
  if ((std::bit_cast<uint64_t>(ax) & ((uint64_t{1} << 52) - 1)) == 0) return std::nullopt;
  const int e = std::ilogb(ax);
  // Beyond a format's top binade ulp_at is the spacing at its largest finite value.
  if (e > ref::spec(f).emax() || e > ref::spec(t.compute).emax()) return std::nullopt;
  // B, with |B − bd| ≤ 2^-50·bd: N and the scale term (normal doubles or 0) each within 2^-53 of
  // theirs, the ulp terms
  // exact (a power of two times a or b, themselves exact), two roundings of the sum.
  const double bd = std::max(t.group_bound, t.scale_bound) + t.output_ulps * ulp_in_binade(f, e) +
                    t.compute_ulps * ulp_in_binade(t.compute, e);
  NaiveEnds ends;
  for (int side = -1; side <= 1; side += 2) {
    // c = xd ± bd rounded once; its distance from x ± B: x's rounding, B's, c's.
    const double c = side < 0 ? xd - bd : xd + bd;
    const double err = ax * 0x1p-52 + bd * 0x1p-49 + std::fabs(c) * 0x1p-51;
    const std::optional<uint64_t> b = rounding_within(f, c, err);
    if (!b) return std::nullopt;
    (side < 0 ? ends.lo : ends.hi) = *b;
  }
  return ends;
}

}  // namespace lmo::oracle
