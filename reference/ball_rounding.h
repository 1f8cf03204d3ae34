// Whether a ball's interval decides the rounding of its value: the test that lets the certified
// evaluation stand in for MPFR ([certified], oracle/core/certified.h).
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "reference/ball.h"
#include "reference/double_double.h"
#include "reference/formats.h"

namespace lmo::ref {

// True when every value of b's interval, widened by the margin that also covers the MPFR
// reference's own rounding (ball.h), rounds to the same bits in f64 and in each of `formats`, so
// that rounding b's midpoint gives the reference's bits. An exact ball decides when its midpoint
// converts to mp exactly.
bool decides_rounding(const Ball& b, std::span<const Format> formats);
// The bits of b's value rounded to f, for a ball that decides_rounding(b, {f}) accepts: read off
// hi where f has no rounding boundary between hi's neighbours (no MPFR operation), else from b's
// midpoint in mp.
uint64_t decided_bits(const Ball& b, Format f);
// The rounding to a format f of precision ≤ 24 (f32, tf32, bf16, f16, the fp8 formats) shared by
// every value within rel_err·(v.hi + v.lo) of v.hi + v.lo, for a positive v whose rounding is
// finite and not zero: the cheap decision of Sim's narrow transcendental functions
// (sim_float.cc), which need no f64 rounding decided. kUndecided where those values do not all
// round to one pattern, or outside those conditions (no pattern of these formats' containers, of
// at most 32 bits, is all ones in 64).
inline constexpr uint64_t kUndecided = ~uint64_t{0};
uint64_t narrow_rounding_bits(Format f, dd::DD v, double rel_err);
// The same as an optional, inline: one built in the function itself came back through memory, a
// store-forwarding stall that took a third of the function's time.
inline std::optional<uint64_t> narrow_rounding(Format f, dd::DD v, double rel_err) {
  const uint64_t b = narrow_rounding_bits(f, v, rel_err);
  if (b == kUndecided) return std::nullopt;
  return b;
}
// The same for every format of formats.h (f64, f32, tf32, bf16, f16, e4m3, e5m2).
inline bool decides_every_format(const Ball& b) { return decides_rounding(b, kAllFormats); }

}  // namespace lmo::ref
