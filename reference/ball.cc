// Ball arithmetic (ball.h): the operations and their radius bounds.
#include "reference/ball.h"

#include <algorithm>
#include <boost/math/constants/constants.hpp>
#include <boost/multiprecision/mpfr.hpp>
#include <cmath>
#include <optional>
#include <span>
#include <vector>

#include "reference/ball_detail.h"
#include "reference/dd_exp.h"
#include "reference/fma_clones.h"

namespace lmo::ref {
namespace {

using namespace ball_detail;  // the helpers ball.cc, ball_erf.cc and ball_trig.cc share

std::atomic<uint64_t> g_undecided{0};

constexpr double kInf = std::numeric_limits<double>::infinity();

// The sign of every value in x is known (x exact, or its interval avoids 0).
bool sign_known(const Ball& x) { return x.exact() || x.lower() > 0 || x.upper() < 0; }

// An operation with a non-finite operand: exact when the operands are exact, or when the
// infinite one is exact and the finite one's sign cannot change the result's.
Ball nonfinite(double v, const Ball& a, const Ball& b, bool sign_matters) {
  const Ball& finite_one = finite(a) ? a : b;
  const Ball& other = finite(a) ? b : a;
  if (!other.exact() || (finite(finite_one) && sign_matters && !sign_known(finite_one))) {
    return undecided(v);
  }
  return Ball(v);
}

// A finite computation that overflowed double: MPFR would have stayed finite.
Ball checked(dd::DD m, double rad) {
  if (!std::isfinite(m.hi) || !std::isfinite(rad)) return undecided(m.hi);
  return Ball::from_parts(m.hi, m.lo, rad);
}

bool is_power_of_two(double x) {
  int e = 0;
  return x != 0 && std::isfinite(x) && std::fabs(std::frexp(x, &e)) == 0.5;
}

}  // namespace

namespace ball_detail {

Ball undecided(double hi, double lo) {
  count_ball_undecided();
  return Ball::from_parts(hi, lo, kInf);
}

Ball around_mpfr(const mp& y, double spread) {
  const Ball b(y);
  if (!finite(b)) return undecided(b.hi());
  return Ball::from_parts(b.hi(), b.lo(), up(b.rad() + std::fabs(b.hi()) * 0x1p-160 + spread));
}

Ball checked_run(Run r) { return checked(r.v, r.e); }

LMO_FMA_CLONES Ball horner(std::span<const Ball> c, const Ball& x) {
  return checked_run(run_horner<double>(
      c.size(), [&](size_t k) { return run_of(c[k]); }, run_of(x)));
}

}  // namespace ball_detail

uint64_t ball_undecided() { return g_undecided.load(std::memory_order_relaxed); }
void count_ball_undecided() { g_undecided.fetch_add(1, std::memory_order_relaxed); }

Ball::Ball(long long v) : hi_(static_cast<double>(v)) {
  lo_ = static_cast<double>(static_cast<long double>(v) - static_cast<long double>(hi_));
}

Ball::Ball(unsigned long v) : hi_(static_cast<double>(v)) {
  lo_ = static_cast<double>(static_cast<long double>(v) - static_cast<long double>(hi_));
}

Ball::Ball(const mp& x) {
  hi_ = static_cast<double>(x);
  if (!std::isfinite(hi_)) {
    if (!boost::multiprecision::isfinite(x)) return;  // ±inf or NaN: exact
    *this = undecided(hi_);                           // beyond double's range
    return;
  }
  const mp rem = x - hi_;  // exact: at most 114 significant bits
  lo_ = static_cast<double>(rem);
  const mp err = rem - lo_;
  if (err != 0) rad_ = up(std::fabs(static_cast<double>(err)));
}

double Ball::lower() const {
  const double t = (std::fabs(lo_) + rad_) * (1 + 0x1p-51);
  return std::nextafter(hi_ - t, -kInf);
}

double Ball::upper() const {
  const double t = (std::fabs(lo_) + rad_) * (1 + 0x1p-51);
  return std::nextafter(hi_ + t, kInf);
}

mp to_mp(const Ball& x) { return static_cast<mp>(x); }

LMO_FMA_CLONES Ball operator+(const Ball& a, const Ball& b) {
  if (!finite(a) || !finite(b)) return nonfinite(a.hi() + b.hi(), a, b, false);
  if (a.is_double() && b.is_double()) return checked(dd::two_sum(a.hi(), b.hi()), 0);
  const dd::DD s = dd::add(a.mid(), b.mid());
  return checked(s, up(a.rad() + b.rad() + dd::kAddErr * std::fabs(s.hi)));
}

LMO_FMA_CLONES Ball operator*(const Ball& a, const Ball& b) {
  if (!finite(a) || !finite(b)) return nonfinite(a.hi() * b.hi(), a, b, true);
  const bool a_zero = a.exact() && a.hi() == 0, b_zero = b.exact() && b.hi() == 0;
  if (a_zero || b_zero) {
    // An exact 0 times anything finite is 0; its sign is the product of the signs.
    const Ball& other = a_zero ? b : a;
    if (!sign_known(other)) return undecided(a.hi() * b.hi());
    return Ball(a.hi() * b.hi());
  }
  if (a.is_double() && b.is_double()) {
    const dd::DD p = dd::two_prod(a.hi(), b.hi());
    // 2Prod is exact while the error term stays above the subnormal range.
    return checked(p, std::fabs(p.hi) >= 0x1p-969 ? 0 : up(0));
  }
  const dd::DD p = dd::mul(a.mid(), b.mid());
  const double first = (std::fabs(a.hi()) * b.rad() + std::fabs(b.hi()) * a.rad()) * (1 + 0x1p-52);
  return checked(p, up(first + a.rad() * b.rad() + dd::kMulErr * std::fabs(p.hi)));
}

LMO_FMA_CLONES Ball operator/(const Ball& a, const Ball& b) {
  if (!finite(a) || !finite(b)) {
    if (!finite(b) && finite(a)) {
      // finite / ±inf = ±0: exact when b is and a's sign is known.
      if (!b.exact() || !sign_known(a)) return undecided(a.hi() / b.hi());
      return Ball(a.hi() / b.hi());
    }
    return nonfinite(a.hi() / b.hi(), a, b, true);
  }
  if (b.exact() && b.hi() == 0) {
    if (a.exact()) return Ball(a.hi() / b.hi());  // ±inf or NaN, as MPFR says
    return undecided(a.hi() / b.hi());
  }
  if (a.exact() && a.hi() == 0) {
    // 0 / b = ±0 exactly, its sign the product of the signs.
    if (!sign_known(b)) return undecided(a.hi() / b.hi());
    return Ball(a.hi() / b.hi());
  }
  if (b.is_double() && is_power_of_two(b.hi())) {
    int e = 0;
    const double m = std::frexp(b.hi(), &e);  // b = ±0.5·2^e
    const Ball q = ldexp(a, 1 - e);
    return m < 0 ? -q : q;
  }
  if (a.is_double() && b.is_double()) {
    const double q = a.hi() / b.hi();
    if (std::isfinite(q) && std::fabs(q) >= 0x1p-969 && std::fma(q, b.hi(), -a.hi()) == 0) {
      return Ball(q);
    }
  }
  const double b_min =
      (std::fabs(b.hi()) * (1 - 0x1p-51) - b.rad() * (1 + 0x1p-52)) * (1 - 0x1p-50);
  const dd::DD q = dd::div(a.mid(), b.mid());
  if (!(b_min > 0)) return undecided(q.hi, q.lo);  // b's interval reaches 0
  const double prop = (a.rad() + std::fabs(q.hi) * (1 + 0x1p-50) * b.rad()) / b_min;
  return checked(q, up(prop + dd::kDivErr * std::fabs(q.hi)));
}

int compare(const Ball& a, const Ball& b) {
  if (std::isnan(a.hi()) || std::isnan(b.hi())) return 2;
  const auto by_mid = [&] {
    if (a.hi() != b.hi()) return a.hi() < b.hi() ? -1 : 1;
    if (a.lo() != b.lo()) return a.lo() < b.lo() ? -1 : 1;
    return 0;
  };
  // Exact values compare exactly (normalized words: hi = RN(hi + lo)); identical balls compare
  // equal (ball.h says why).
  if ((a.exact() && b.exact()) || (a.hi() == b.hi() && a.lo() == b.lo() && a.rad() == b.rad())) {
    return by_mid();
  }
  if (a.upper() < b.lower()) return -1;
  if (a.lower() > b.upper()) return 1;
  count_ball_undecided();
  return by_mid();
}

Ball max(const Ball& a, const Ball& b) { return a < b ? b : a; }
Ball min(const Ball& a, const Ball& b) { return b < a ? b : a; }

Ball ldexp(const Ball& x, int e) {
  const double h = std::ldexp(x.hi(), e), l = std::ldexp(x.lo(), e), r = std::ldexp(x.rad(), e);
  if (!std::isfinite(h) && std::isfinite(x.hi())) return undecided(h);
  // Exact unless a word falls below the normal range; up() covers the bits it loses.
  const bool lossless =
      std::ldexp(h, -e) == x.hi() && std::ldexp(l, -e) == x.lo() && std::ldexp(r, -e) == x.rad();
  return Ball::from_parts(h, l, lossless ? r : up(r));
}

Ball sqrt(const Ball& x) {
  if (!finite(x) || (x.exact() && x.hi() <= 0)) {
    if (!x.exact()) return undecided(std::sqrt(x.hi()));
    return Ball(std::sqrt(x.hi() + x.lo()));  // ±0, +inf, NaN: exact
  }
  if (!(x.lower() > 0)) return undecided(std::sqrt(std::fabs(x.hi())));
  if (x.is_double()) {
    const double s = std::sqrt(x.hi());
    const dd::DD p = dd::two_prod(s, s);
    if (p.hi == x.hi() && p.lo == 0) return Ball(s);
  }
  const dd::DD s = dd::sqrt(x.mid());
  // |√X − √m| = |X − m|/(√X + √m) ≤ r/√m over the ball; m ≥ hi·(1 − 2^-52).
  const double prop = x.rad() / std::sqrt(x.hi() * (1 - 0x1p-51));
  return checked(s, up(prop + dd::kSqrtErr * s.hi));
}

namespace {

// exp's special cases: the result where x's midpoint is not dd::exp's to take, else nullopt.
std::optional<Ball> exp_special(const Ball& x) {
  if (!finite(x)) {
    if (!x.exact()) return undecided(std::exp(x.hi()));
    return Ball(std::exp(x.hi()));  // e^−inf = 0, e^inf = inf, NaN: exact
  }
  if (x.exact() && x.hi() == 0) return Ball(1.0);
  if (x.rad() > 0.5 || x.hi() > dd::kExpMax) return undecided(std::exp(x.hi()));
  return std::nullopt;
}

// The ball around e = dd::exp(m) for x = m ± r. Over [m − r, m + r]: |e^X − e^m| ≤
// e^m·(e^r − 1) ≤ e^m·1.65·r for r ≤ 1/2.
Ball exp_ball(dd::DD e, double r) {
  const double em = std::fabs(e.hi) * (1 + 0x1p-51) + 0x1p-1068;  // ≥ e^m
  return checked(e, up(em * (dd::kExpErr + 1.65 * r) + dd::kExpAbsErr));
}

}  // namespace

Ball exp(const Ball& x) {
  if (const std::optional<Ball> s = exp_special(x)) return *s;
  return exp_ball(dd::exp(x.mid()), x.rad());
}

void exp_many(std::span<Ball> x) {
  thread_local std::vector<double> h, l;
  thread_local std::vector<size_t> at;
  h.clear();
  l.clear();
  at.clear();
  for (size_t i = 0; i < x.size(); ++i) {
    if (const std::optional<Ball> s = exp_special(x[i])) {
      x[i] = *s;
    } else {
      h.push_back(x[i].hi());
      l.push_back(x[i].lo());
      at.push_back(i);
    }
  }
  dd::exp_many(h.data(), l.data(), static_cast<int64_t>(h.size()), h.data(), l.data());
  for (size_t k = 0; k < at.size(); ++k) x[at[k]] = exp_ball({h[k], l[k]}, x[at[k]].rad());
}

Ball expm1(const Ball& x) {
  // d/dx (e^x − 1) = e^x ≤ e^upper.
  if (finite(x) && x.upper() > dd::kExpMax) return undecided(std::expm1(x.hi()));
  const double lip = finite(x) ? dd::exp({x.upper(), 0}).hi * (1 + 0x1p-40) : 0;
  return via_mp(
      x, [](const mp& v) { return mp(boost::multiprecision::expm1(v)); }, lip);
}

// log X = y0 + log1p(t), t = X·e^(−y0) − 1, for any double y0: with y0 = log(hi) from libm (a
// guess only; its error moves t, never the bound), t is of order 2^-52, and
//   |log1p(t) − (t − t²/2)| ≤ |t|³/(3(1 − |t|)) ≤ |t|³/2   for |t| ≤ 2^-20,
// so the ball y0 + (t − t²/2) widened by max|t|³/2 encloses log X, e^(−y0) coming from the
// double-double exp with its bound (dd_exp.h). Its radius is about 2^-98 absolute (the exp's
// bound): MPFR's log, ten times slower, where X is out of the exp's range or t is not small.
namespace {
std::optional<Ball> log_by_exp(const Ball& x) {
  if (!finite(x) || !(x.lower() > 0x1p-1000) || !(x.hi() < 0x1p1000)) return std::nullopt;
  const double y0 = std::log(x.hi());
  const Ball t = x * exp(Ball(-y0)) - Ball(1.0);
  const double tm = std::max(std::fabs(t.lower()), std::fabs(t.upper()));
  if (!(tm <= 0x1p-20)) return std::nullopt;
  const Ball r = Ball(y0) + (t - t * t * Ball(0.5));
  return Ball::from_parts(r.hi(), r.lo(), up(r.rad() + tm * tm * tm * 0.5));
}
}  // namespace

Ball log(const Ball& x) {
  if (finite(x) && !x.exact() && !(x.lower() > 0)) return undecided(std::log(x.hi()));
  if (x.exact() && x.hi() == 1 && x.lo() == 0) return Ball(0.0);
  if (const std::optional<Ball> fast = log_by_exp(x)) return *fast;
  const double lip = finite(x) && !x.exact() ? (1 + 0x1p-40) / x.lower() : 0;
  return via_mp(
      x, [](const mp& v) { return mp(boost::multiprecision::log(v)); }, lip);
}

Ball log1p(const Ball& x) {
  if (finite(x) && !x.exact() && !(x.lower() > -1)) return undecided(std::log1p(x.hi()));
  const double lip = finite(x) && !x.exact() ? (1 + 0x1p-40) / (1 + x.lower()) : 0;
  return via_mp(
      x, [](const mp& v) { return mp(boost::multiprecision::log1p(v)); }, lip);
}

// Lipschitz constants: |tanh'|, |sin'|, |cos'|, |atan'| ≤ 1; |erf'| = |erfc'| ≤ 2/√π < 1.1284
// (less away from 0: erf_lipschitz in ball_erf.cc).
Ball tanh(const Ball& x) {
  // tanh|x| = (1 − e)/(1 + e), e = e^(−2|x|), in ball arithmetic (its radius is the bound). Near
  // 0 the subtraction cancels (relative radius ≈ 2^-98/|x|): MPFR there, and for non-finite x.
  if (!finite(x) || !(std::fabs(x.hi()) >= 0x1p-30) || x.rad() > std::fabs(x.hi()) * 0x1p-40) {
    return via_mp(
        x, [](const mp& v) { return mp(boost::multiprecision::tanh(v)); }, 1);
  }
  const Ball e = exp(ldexp(abs(x), 1) * Ball(-1.0));
  const Ball one(1.0);
  const Ball t = (one - e) / (one + e);
  return std::signbit(x.hi()) ? -t : t;
}
Ball atan(const Ball& x) {
  return via_mp(
      x, [](const mp& v) { return mp(boost::multiprecision::atan(v)); }, 1);
}

Ball pow(const Ball& a, const Ball& b) {
  if (a.exact() && b.exact()) {
    // MPFR's pow of the exact operands (RoPE's θ^(−2i/d)), as the reference computes it.
    return around_mpfr(boost::multiprecision::pow(to_mp(a), to_mp(b)), 0);
  }
  if (!(a.lower() > 0)) return undecided(std::pow(a.hi(), b.hi()));
  return exp(b * log(a));
}

Ball fma(const Ball& a, const Ball& b, const Ball& c) { return a * b + c; }

Ball floor(const Ball& x) {
  if (x.exact()) {
    const double f = std::floor(x.hi());
    // hi is an integer and lo < 0: the value lies just below it.
    return Ball(f == x.hi() && x.lo() < 0 ? f - 1 : f);
  }
  const double fl = std::floor(x.lower()), fu = std::floor(x.upper());
  if (fl != fu) return undecided(std::floor(x.hi()));
  return Ball(fl);
}

}  // namespace lmo::ref
