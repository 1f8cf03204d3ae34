// F07's divisors by products of two short power chains (sinusoidal_balls.h).
#include "reference/sinusoidal_balls.h"

#include <boost/multiprecision/mpfr.hpp>
#include <cmath>

#include "reference/ball_detail.h"

namespace lmo::ref {

std::vector<Ball> sinusoidal_divisor_balls(int64_t d, const Ball& base) {
  if (d <= 0 || d % 2 != 0 || !base.exact() || !std::isfinite(base.hi()) || !(base.hi() > 0)) {
    return {};
  }
  const int64_t n = d / 2;
  const auto b = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(n))));
  const mp base_mp = to_mp(base);
  // base^(2m/d) in MPFR. The exponent 2m/d is rounded to mp's 167 bits unless d/2m is a power
  // of two: |Δe| ≤ 2^-166·e moves the power by at most y·|log base|·|Δe| (d/de base^e =
  // base^e·log base), widened here with margin as 2^-159·y·|log base|·e.
  const auto power = [&](int64_t m) {
    const mp e = mp(2 * m) / mp(d);
    const mp y = boost::multiprecision::pow(base_mp, e);
    const double spread = std::fabs(static_cast<double>(y)) *
                          std::fabs(static_cast<double>(log(base_mp))) * static_cast<double>(e) *
                          0x1p-159;
    return ball_detail::around_mpfr(y, spread);
  };
  const Ball r = power(1), big_r = power(b);
  std::vector<Ball> small(static_cast<size_t>(b));
  small[0] = Ball(1.0);
  for (int64_t j = 1; j < b; ++j)
    small[static_cast<size_t>(j)] = small[static_cast<size_t>(j - 1)] * r;
  std::vector<Ball> out(static_cast<size_t>(n));
  Ball big(1.0);
  for (int64_t k = 0; k * b < n; ++k) {
    if (k > 0) big = big * big_r;
    for (int64_t j = 0; j < b && k * b + j < n; ++j) {
      out[static_cast<size_t>(k * b + j)] = j == 0 ? big : big * small[static_cast<size_t>(j)];
    }
  }
  return out;
}

}  // namespace lmo::ref
