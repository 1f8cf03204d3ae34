// Project generators for rapidcheck. rapidcheck's own `double` generator never produces
// subnormals, signed zeros or values near the edges of the low-precision formats, which is
// where rounding code breaks; these do.
#pragma once

#include <rapidcheck.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "reference/formats.h"

namespace lmo::rcgen {

// Any finite double, drawn from a mix of: arbitrary bit patterns, ±0, double subnormals,
// values around each format's subnormal range, smallest normal and largest finite value, and
// ordinary magnitudes.
inline rc::Gen<double> finite_double() {
  using rc::gen::arbitrary;
  using rc::gen::element;
  using rc::gen::inRange;
  using rc::gen::map;
  return rc::gen::oneOf(
      rc::gen::suchThat(map(arbitrary<uint64_t>(), [](uint64_t b) { return std::bit_cast<double>(b); }),
                        [](double d) { return std::isfinite(d); }),
      element(0.0, -0.0, std::numeric_limits<double>::denorm_min(),
              -std::numeric_limits<double>::max(), std::numeric_limits<double>::min()),
      map(rc::gen::pair(arbitrary<uint64_t>(), inRange(0, 1)),
          [](std::pair<uint64_t, int> p) {  // double subnormals
            const double d = std::bit_cast<double>(p.first & 0x000FFFFFFFFFFFFFull);
            return p.second ? -d : d;
          }),
      map(rc::gen::tuple(element(ref::Format::bf16, ref::Format::f16, ref::Format::tf32,
                                 ref::Format::e4m3, ref::Format::e5m2, ref::Format::f32),
                         inRange(-4, 5), arbitrary<uint32_t>(), inRange(0, 1)),
          [](std::tuple<ref::Format, int, uint32_t, int> t) {
            // A significand of up to 32 bits around a format's subnormal, normal or max edge.
            const auto& s = ref::spec(std::get<0>(t));
            const int edge = std::get<1>(t) < 0 ? s.emin() - s.frac_bits : s.emax();
            const double m = 1.0 + std::get<2>(t) / 0x1p32;
            const double v = std::ldexp(m, edge + std::get<1>(t));
            return std::get<3>(t) ? -v : v;
          }),
      map(rc::gen::pair(inRange(-60, 61), arbitrary<uint32_t>()), [](std::pair<int, uint32_t> p) {
        return std::ldexp(1.0 + p.second / 0x1p32, p.first) * ((p.second & 1) ? -1 : 1);
      }));
}

}  // namespace lmo::rcgen
