// Project generators for rapidcheck. rapidcheck's own `double` generator never produces
// subnormals, signed zeros or values near the edges of the low-precision formats, which is
// where rounding code breaks; these do.
#pragma once

#include <rapidcheck.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

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

// Finite doubles of moderate size (|x| < 2^40) for identities whose terms are multiplied
// together many times, with ±0 and double subnormals mixed in.
inline rc::Gen<double> moderate_double() {
  using rc::gen::element;
  using rc::gen::inRange;
  using rc::gen::map;
  return rc::gen::oneOf(
      element(0.0, -0.0, std::numeric_limits<double>::denorm_min(), -0x1p-1060, 0x1p-1022),
      map(rc::gen::tuple(inRange(-40, 41), rc::gen::arbitrary<uint32_t>(), inRange(0, 2)),
          [](std::tuple<int, uint32_t, int> t) {
            const double v = std::ldexp(1.0 + std::get<1>(t) / 0x1p32, std::get<0>(t));
            return std::get<2>(t) ? -v : v;
          }));
}

inline rc::Gen<std::vector<double>> moderate_vector(int n) {
  return rc::gen::container<std::vector<double>>(static_cast<size_t>(n), moderate_double());
}

// Positions up to 2^20: small ones, ones next to powers of two, and uniform ones.
inline rc::Gen<int64_t> position() {
  using rc::gen::inRange;
  return rc::gen::oneOf(
      inRange<int64_t>(0, 64),
      rc::gen::map(rc::gen::pair(inRange(1, 21), inRange(-2, 3)),
                   [](std::pair<int, int> p) {
                     return std::clamp<int64_t>((int64_t{1} << p.first) + p.second, 0,
                                                int64_t{1} << 20);
                   }),
      inRange<int64_t>(0, (int64_t{1} << 20) + 1));
}

// An even RoPE head dimension in [2, max_dim].
inline rc::Gen<int64_t> even_head_dim(int64_t max_dim = 16) {
  return rc::gen::map(rc::gen::inRange<int64_t>(1, max_dim / 2 + 1),
                      [](int64_t k) { return 2 * k; });
}

// Attention shape: h query heads, g KV heads with g dividing h, head dim d, T tokens.
struct AttentionShape {
  int64_t heads, kv_heads, head_dim, tokens;
};
inline rc::Gen<AttentionShape> attention_shape(int64_t max_tokens = 6) {
  using rc::gen::inRange;
  return rc::gen::mapcat(inRange<int64_t>(1, 7), [=](int64_t h) {
    std::vector<int64_t> divisors;
    for (int64_t g = 1; g <= h; ++g) {
      if (h % g == 0) divisors.push_back(g);
    }
    return rc::gen::map(rc::gen::tuple(rc::gen::elementOf(divisors), inRange<int64_t>(1, 5),
                                       inRange<int64_t>(1, max_tokens + 1)),
                        [=](std::tuple<int64_t, int64_t, int64_t> t) {
                          return AttentionShape{h, std::get<0>(t), std::get<1>(t), std::get<2>(t)};
                        });
  });
}

// A sliding window in [1, max_window].
inline rc::Gen<int64_t> window(int64_t max_window) {
  return rc::gen::inRange<int64_t>(1, max_window + 1);
}

// Document ids for `tokens` packed tokens: contiguous runs of random lengths, ids 0, 1, 2, …
inline rc::Gen<std::vector<int64_t>> documents(int64_t tokens) {
  return rc::gen::map(
      rc::gen::container<std::vector<int64_t>>(static_cast<size_t>(tokens),
                                               rc::gen::inRange<int64_t>(0, 3)),
      [=](const std::vector<int64_t>& cut) {
        std::vector<int64_t> ids(static_cast<size_t>(tokens));
        int64_t doc = 0;
        for (int64_t i = 0; i < tokens; ++i) {
          if (i > 0 && cut[static_cast<size_t>(i)] == 0) ++doc;  // a new document starts here
          ids[static_cast<size_t>(i)] = doc;
        }
        return ids;
      });
}

}  // namespace lmo::rcgen
