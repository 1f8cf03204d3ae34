// Angular frequencies as turns per position, for the angle kernels (fast/angles-inl.h): the
// angle p·θ is evaluated as 2π·frac(p·f), f = θ / 2π, so that whole turns are dropped exactly
// before any radian is formed. f = θ / 2π is rounded once in long double (relative 2^-64 with
// x87's 64-bit significand) and held exactly as an unevaluated sum of two doubles, hi (53 bits)
// + lo (the rest), so that p·hi can be formed exactly as a two-term product. Where long double
// is double, lo is 0 and f carries double's 2^-53.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lmo::kernels {

inline constexpr long double kTwoPiL = 6.283185307179586476925286766559005768L;

// Padding of the arrays: whole f64 vectors of any target (256 bytes, the largest vector Highway
// allows: SVE's and RVV's).
inline constexpr size_t kTurnsPad = 256 / sizeof(double);

// base^(−2k/d) for k < n in long double: the frequencies of RoPE (d = r) and of the sinusoidal
// encoding (kernels/api/rope_frequencies.cc).
std::vector<long double> inverse_powers(long double base, int64_t n, int64_t d);

struct Turns {
  std::vector<double> hi, lo;  // f_k = hi[k] + lo[k]; zero-padded to a multiple of kTurnsPad
};

inline Turns turns_of(const std::vector<long double>& theta) {
  const size_t n = (theta.size() + kTurnsPad - 1) / kTurnsPad * kTurnsPad;
  Turns t{std::vector<double>(n, 0.0), std::vector<double>(n, 0.0)};
  for (size_t k = 0; k < theta.size(); ++k) {
    const long double f = theta[k] / kTwoPiL;
    t.hi[k] = static_cast<double>(f);
    t.lo[k] = static_cast<double>(f - static_cast<long double>(t.hi[k]));
  }
  return t;
}

}  // namespace lmo::kernels
