#include "reference/sim_float.h"

#include <mpfr.h>

#include <cmath>
#include <limits>
#include <optional>

#include "reference/ball.h"
#include "reference/ball_rounding.h"
#include "reference/dd_exp.h"

namespace lmo::ref::odd {
namespace {

// One MPFR variable at double's precision, reused per thread (mpfr_init is not free).
struct Scratch {
  mpfr_t a, b, c, r;
  Scratch() {
    mpfr_inits2(53, a, b, c, r, static_cast<mpfr_ptr>(nullptr));
  }
  ~Scratch() { mpfr_clears(a, b, c, r, static_cast<mpfr_ptr>(nullptr)); }
};

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

// r holds the result rounded toward zero and `ternary` says whether it was inexact: make the
// last bit odd in that case, which is the round-to-odd of the exact value.
double finish_odd(mpfr_t r, int ternary) {
  if (ternary != 0 && mpfr_regular_p(r)) {
    // Rounded toward zero: the exact value lies strictly between r and the next value away
    // from zero. Pick whichever of the two has an odd last bit.
    // The significand as a 53-bit integer tells the parity of the last place.
    mpz_t m;
    mpz_init(m);
    (void)mpfr_get_z_2exp(m, r);
    const bool odd_last = mpz_odd_p(m);
    mpz_clear(m);
    if (!odd_last) {
      if (mpfr_sgn(r) > 0) {
        mpfr_nextabove(r);
      } else {
        mpfr_nextbelow(r);
      }
    }
  } else if (ternary != 0 && mpfr_zero_p(r)) {
    // Underflow below MPFR's exponent range (e.g. exp(-3e38)): the exact value is a nonzero
    // number smaller than any double. The smallest subnormal double with the same sign stands
    // for it: every simulated format rounds both to the same signed zero.
    return mpfr_signbit(r) ? -std::numeric_limits<double>::denorm_min()
                           : std::numeric_limits<double>::denorm_min();
  }
  // Exact: r has 53 bits. Values beyond double's range become ±inf or ±0, which every simulated
  // format (range far inside double's) rounds identically.
  return mpfr_get_d(r, MPFR_RNDN);
}

}  // namespace

double unary(Fn fn, double x) {
  Scratch& s = scratch();
  mpfr_set_d(s.a, x, MPFR_RNDN);  // exact
  int t = 0;
  switch (fn) {
    case Fn::exp: t = mpfr_exp(s.r, s.a, MPFR_RNDZ); break;
    case Fn::expm1: t = mpfr_expm1(s.r, s.a, MPFR_RNDZ); break;
    case Fn::log: t = mpfr_log(s.r, s.a, MPFR_RNDZ); break;
    case Fn::log1p: t = mpfr_log1p(s.r, s.a, MPFR_RNDZ); break;
    case Fn::tanh: t = mpfr_tanh(s.r, s.a, MPFR_RNDZ); break;
    case Fn::erf: t = mpfr_erf(s.r, s.a, MPFR_RNDZ); break;
    case Fn::erfc: t = mpfr_erfc(s.r, s.a, MPFR_RNDZ); break;
    case Fn::sin: t = mpfr_sin(s.r, s.a, MPFR_RNDZ); break;
    case Fn::cos: t = mpfr_cos(s.r, s.a, MPFR_RNDZ); break;
    case Fn::sqrt: t = mpfr_sqrt(s.r, s.a, MPFR_RNDZ); break;
    case Fn::atan: t = mpfr_atan(s.r, s.a, MPFR_RNDZ); break;
  }
  return finish_odd(s.r, t);
}

double fma(double a, double b, double c) {
  Scratch& s = scratch();
  mpfr_set_d(s.a, a, MPFR_RNDN);
  mpfr_set_d(s.b, b, MPFR_RNDN);
  mpfr_set_d(s.c, c, MPFR_RNDN);
  return finish_odd(s.r, mpfr_fma(s.r, s.a, s.b, s.c, MPFR_RNDZ));
}

double pow(double a, double b) {
  Scratch& s = scratch();
  mpfr_set_d(s.a, a, MPFR_RNDN);
  mpfr_set_d(s.b, b, MPFR_RNDN);
  return finish_odd(s.r, mpfr_pow(s.r, s.a, s.b, MPFR_RNDZ));
}

namespace {

// An enclosure of fn(x) from the certified evaluation's balls (ball.h) where it is cheap
// (double-double operations with written bounds, no MPFR) and where its preconditions hold, so that
// it never counts an undecided comparison (which would make a concurrent certified evaluation fall
// back to MPFR for nothing). Elsewhere: none, and MPFR decides.
std::optional<Ball> cheap_enclosure(Fn fn, double x) {
  if (!std::isfinite(x)) return std::nullopt;
  switch (fn) {
    case Fn::exp:
      if (x > dd::kExpMax) return std::nullopt;
      return exp(Ball(x));
    case Fn::tanh:  // (1 − e^(−2|x|))/(1 + e^(−2|x|)); near 0 ball.h itself goes to MPFR
      if (!(std::fabs(x) >= 0x1p-30)) return std::nullopt;
      return tanh(Ball(x));
    case Fn::log:  // y0 + log1p(x·e^(−y0) − 1) by its series (ball.h's log_by_exp)
      if (!(x > 0x1p-1000 && x < 0x1p1000)) return std::nullopt;
      return log(Ball(x));
    case Fn::erf:  // series or continued fraction (ball.cc), up to where MPFR takes over
      if (!(std::fabs(x) <= 26)) return std::nullopt;
      return erf(Ball(x));
    case Fn::erfc:
      if (!(std::fabs(x) <= 26)) return std::nullopt;
      return erfc(Ball(x));
    case Fn::sin:  // reduction by π/2 in three parts and Taylor series (ball.cc)
      if (!(std::fabs(x) <= 0x1p21)) return std::nullopt;
      return sin(Ball(x));
    case Fn::cos:
      if (!(std::fabs(x) <= 0x1p21)) return std::nullopt;
      return cos(Ball(x));
    default:
      return std::nullopt;
  }
}

}  // namespace

// An interval that rounds to one value of f holds the exact result, so that value is its correct
// rounding; an interval that does not decide leaves it to the round-to-odd MPFR path.
uint64_t rounded(Format f, Fn fn, double x) {
  // The narrow formats' exponential (every naive run's softmax) from a double evaluation with
  // a written bound first: a fifth of the ball's cost, the same bits where it decides.
  if (fn == Fn::exp && std::fabs(x) <= dd::kExpSplitMax) {
    if (const auto b = narrow_rounding(f, dd::exp_split(x), dd::kExpSplitErr)) return *b;
  }
  if (const std::optional<Ball> b = cheap_enclosure(fn, x);
      b && decides_rounding(*b, std::span<const Format>(&f, 1))) {
    return decided_bits(*b, f);
  }
  return encode(f, unary(fn, x));
}

}  // namespace lmo::ref::odd
