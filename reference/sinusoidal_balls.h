// F07's divisors base^(2i/d) on balls, for sinusoidal_divisors (positional.h) ([certified]).
// Taken one by one, each is an MPFR pow of the exact operands: 256 of them made the one-time cost
// of a 512-wide table about 1.3 ms, a hundred times the plain double table of 4096 values.
#pragma once

#include <cstdint>
#include <vector>

#include "reference/ball.h"

namespace lmo::ref {

// base^(2i/d) for i = 0 … d/2 − 1, d even and positive, base an exact positive finite ball:
// base^(2i/d) = R^k·r^j with i = k·B + j, j < B = ⌈√(d/2)⌉, r = base^(2/d) and R = base^(2B/d)
// (two MPFR pows, the only roundings of exact operands) and the powers r^j, R^k by successive
// ball products. Each ball encloses the exact power: the radius carries the products' roundings,
// at most 2B of them, about 2^-98 relative for d = 512. Returns an empty vector where base does
// not qualify (the caller then takes the pows one by one).
std::vector<Ball> sinusoidal_divisor_balls(int64_t d, const Ball& base);

}  // namespace lmo::ref
