// The decoding of fp8 patterns (fast/fp8.h): OCP E4M3FN (bias 7, no infinity, S.1111.111 NaN) and
// E5M2 (bias 15, IEEE-like), each pattern's value computed once from its fields.
#include <array>
#include <cmath>
#include <limits>

#include "fast/fp8.h"

namespace lmo::fast {
namespace {

std::array<float, 256> table(int exp_bits, int bias, bool has_inf) {
  std::array<float, 256> t{};
  const int man_bits = 7 - exp_bits;
  for (int p = 0; p < 256; ++p) {
    const int e = (p >> man_bits) & ((1 << exp_bits) - 1);
    const int mant = p & ((1 << man_bits) - 1);
    const bool top = e == (1 << exp_bits) - 1;
    float v;
    if (has_inf && top) {
      v = mant == 0 ? std::numeric_limits<float>::infinity()
                    : std::numeric_limits<float>::quiet_NaN();
    } else if (!has_inf && top && mant == (1 << man_bits) - 1) {
      v = std::numeric_limits<float>::quiet_NaN();
    } else if (e == 0) {
      v = std::ldexp(static_cast<float>(mant), 1 - bias - man_bits);
    } else {
      v = std::ldexp(static_cast<float>(mant | (1 << man_bits)), e - bias - man_bits);
    }
    t[static_cast<size_t>(p)] = (p & 0x80) ? -v : v;
  }
  return t;
}

}  // namespace

const float* fp8_values(Fp8Format f) {
  static const std::array<float, 256> e4m3 = table(4, 7, false);
  static const std::array<float, 256> e5m2 = table(5, 15, true);
  return f == Fp8Format::e4m3 ? e4m3.data() : e5m2.data();
}

float fp8_max(Fp8Format f) { return f == Fp8Format::e4m3 ? 448.0f : 57344.0f; }

}  // namespace lmo::fast
