// Ball arithmetic (reference/ball.h) and its double-double layer against MPFR at 333 bits: every
// operation's error stays inside the bound its radius claims, on random operands and on
// perturbed inputs anywhere inside the input balls.
#include "reference/ball.h"

#include <gtest/gtest.h>

#include <bit>
#include <boost/math/constants/constants.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "reference/dd_exp.h"
#include "reference/double_double.h"
#include "reference/erfcx_taylor.h"
#include "reference/sigmoid_balls.h"
#include "reference/sinusoidal_balls.h"
#include "reference/softcap_balls.h"
#include "tests/support/splitmix.h"

namespace lmo::ref {
namespace {

using wide = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<100>,
                                           boost::multiprecision::et_off>;

// Seeded operands (tests/support/splitmix.h).
struct Stream : testing::SplitMix64 {
  double in(double lo, double hi) { return lo + (hi - lo) * unit(); }
  // A double-double with a random low word.
  dd::DD dd_in(double lo, double hi) {
    const double h = in(lo, hi);
    return dd::fast_two_sum(h, std::ldexp(in(-0.5, 0.5), std::ilogb(h) - 52));
  }
};

wide w(dd::DD x) { return wide(x.hi) + wide(x.lo); }
wide w(const Ball& b) { return wide(b.hi()) + wide(b.lo()); }

double rel(const wide& approx, const wide& exact) {
  return exact == 0 ? static_cast<double>(abs(approx))
                    : static_cast<double>(abs(approx / exact - 1));
}

TEST(DoubleDouble, OperationsStayWithinTheirProvenBounds) {
  Stream s{1};
  double worst_add = 0, worst_mul = 0, worst_div = 0, worst_sqrt = 0;
  for (int i = 0; i < 200000; ++i) {
    const dd::DD a = s.dd_in(-4, 4), b = s.dd_in(-4, 4);
    worst_add = std::max(worst_add, rel(w(dd::add(a, b)), w(a) + w(b)));
    worst_mul = std::max(worst_mul, rel(w(dd::mul(a, b)), w(a) * w(b)));
    worst_div = std::max(worst_div, rel(w(dd::div(a, b)), w(a) / w(b)));
    const dd::DD p = s.dd_in(0.001, 1000);
    worst_sqrt = std::max(worst_sqrt, rel(w(dd::sqrt(p)), sqrt(w(p))));
  }
  EXPECT_LT(worst_add, 3 * 0x1p-106);
  EXPECT_LT(worst_mul, 4 * 0x1p-106);
  EXPECT_LT(worst_div, 15.01 * 0x1p-106);
  EXPECT_LT(worst_sqrt, 3.5 * 0x1p-106);
  EXPECT_GT(worst_mul, 0) << "the comparison must see the double-double rounding";
}

TEST(DdExp, RelativeErrorBelowItsWrittenBound) {
  Stream s{2};
  double worst = 0;
  for (int i = 0; i < 100000; ++i) {
    const dd::DD x = i % 4 == 0 ? s.dd_in(-700, 700) : s.dd_in(-20, 5);
    const wide exact = exp(w(x));
    const wide err = abs(w(dd::exp(x)) - exact);
    ASSERT_LE(err, exact * dd::kExpErr + dd::kExpAbsErr) << x.hi;
    // Relative accuracy holds while the low word is normal (results above 2^-969).
    if (exact > wide(0x1p-960)) worst = std::max(worst, static_cast<double>(err / exact));
  }
  // Reduction edges: r = ±L/2 and k's binade changes.
  for (double x : {0.0, 1e-300, -1e-300, 0.00135, -0.00135, 0.6931471805599453, -660.0, 709.0}) {
    worst = std::max(worst, rel(w(dd::exp({x, 0})), exp(wide(x))));
  }
  EXPECT_LT(worst, dd::kExpErr);
  EXPECT_LT(worst, 0x1p-101) << "the derivation in dd_exp.cc gives < 2^-101.5";
  // Below the normal range the absolute bound takes over; far below, 0.
  for (double x : {-708.0, -730.0, -744.0, -745.5}) {
    EXPECT_LT(static_cast<double>(abs(w(dd::exp({x, 0})) - exp(wide(x)))), dd::kExpAbsErr) << x;
  }
  EXPECT_EQ(dd::exp({-800.0, 0}).hi, 0);
}

// exp_many (four lanes at a time where the CPU has AVX2 and FMA) gives exp's bits on every
// argument: ordinary ones, the edges of its vector range (±700) and of exp's branches, below
// kExpMin, NaN and ±inf, lanes in and out of range in one group of four, lengths that are not a
// multiple of four, and in place.
TEST(DdExpMany, SameBitsAsExp) {
  Stream s{4};
  std::vector<double> xh, xl;
  for (int i = 0; i < 400000; ++i) {
    const dd::DD x = i % 3 == 0 ? s.dd_in(-760, 720) : s.dd_in(-30, 5);
    xh.push_back(x.hi);
    xl.push_back(x.lo);
  }
  const double inf = std::numeric_limits<double>::infinity();
  for (double x : {700.0, std::nextafter(700.0, 800.0), -700.0, std::nextafter(-700.0, -800.0),
                   -745.5, -746.0, -800.0, 709.7, 0.0, -0.0, 0.00135, -0.00135,
                   std::numeric_limits<double>::quiet_NaN(), inf, -inf, 1e-300, -1e-300}) {
    xh.push_back(x);
    xl.push_back(0);
    xh.push_back(x);
    xl.push_back(std::isfinite(x) ? std::ldexp(x, -60) : 0.0);
  }
  for (const int64_t n :
       {int64_t{0}, int64_t{1}, int64_t{3}, int64_t{5}, static_cast<int64_t>(xh.size())}) {
    std::vector<double> yh(static_cast<size_t>(n)), yl(static_cast<size_t>(n));
    dd::exp_many(xh.data(), xl.data(), n, yh.data(), yl.data());
    for (int64_t i = 0; i < n; ++i) {
      const dd::DD e = dd::exp({xh[static_cast<size_t>(i)], xl[static_cast<size_t>(i)]});
      ASSERT_EQ(std::bit_cast<uint64_t>(yh[static_cast<size_t>(i)]), std::bit_cast<uint64_t>(e.hi))
          << xh[static_cast<size_t>(i)];
      ASSERT_EQ(std::bit_cast<uint64_t>(yl[static_cast<size_t>(i)]), std::bit_cast<uint64_t>(e.lo))
          << xh[static_cast<size_t>(i)];
    }
  }
  std::vector<double> in_h = xh, in_l = xl;
  dd::exp_many(in_h.data(), in_l.data(), static_cast<int64_t>(in_h.size()), in_h.data(),
               in_l.data());
  for (size_t i = 0; i < xh.size(); ++i) {
    ASSERT_EQ(std::bit_cast<uint64_t>(in_h[i]),
              std::bit_cast<uint64_t>(dd::exp({xh[i], xl[i]}).hi));
  }
}

// exp_split (the narrow formats' exponential in double arithmetic): within its written bound
// everywhere, and within the derivation's 2^-59.9 on these samples, reduction edges included.
TEST(DdExpSplit, RelativeErrorBelowItsWrittenBound) {
  Stream s{3};
  double worst = 0;
  std::vector<double> xs;
  for (int i = 0; i < 200000; ++i) {
    xs.push_back(i % 4 == 0 ? s.in(-dd::kExpSplitMax, dd::kExpSplitMax) : s.in(-104, 89));
  }
  for (double x : {0.0, 1e-300, -1e-300, 0.00135, -0.00135, 0.6931471805599453, -600.0, 600.0,
                   88.72283935546875, -87.33654022216797, -103.97208404541016}) {
    xs.push_back(x);
  }
  for (double x : xs) {
    const dd::DD y = dd::exp_split(x);
    ASSERT_LE(std::fabs(y.lo), std::fabs(y.hi) * 0x1p-53) << x;
    worst = std::max(worst, rel(w(y), exp(wide(x))));
  }
  EXPECT_LT(worst, dd::kExpSplitErr);
  EXPECT_LT(worst, std::exp2(-59.9)) << "the derivation in dd_exp.cc";
  EXPECT_GT(worst, 0x1p-66) << "the comparison must see the double rounding";
}

// An input ball of radius r around a random midpoint, and a point inside it.
struct Sample {
  Ball ball;
  wide point;
};
Sample sample(Stream& s, double lo, double hi, double rel_rad) {
  const dd::DD m = s.dd_in(lo, hi);
  const double r = std::fabs(m.hi) * rel_rad;
  const wide point = w(m) + wide(r) * wide(s.in(-1, 1));
  return {Ball::from_parts(m.hi, m.lo, r), point};
}

void expect_contains(const Ball& b, const wide& exact, const char* what) {
  ASSERT_TRUE(std::isfinite(b.rad())) << what;
  ASSERT_LE(abs(w(b) - exact), wide(b.rad()))
      << what << ": midpoint " << b.hi() << " radius " << b.rad();
}

TEST(Ball, EveryOperationEnclosesAnyPointOfItsInputs) {
  Stream s{3};
  for (int i = 0; i < 20000; ++i) {
    const double rr = i % 3 == 0 ? 0 : std::ldexp(1.0, -20 - static_cast<int>(s.next() % 80));
    const Sample a = sample(s, -3, 3, rr), b = sample(s, -3, 3, rr), p = sample(s, 0.01, 30, rr);
    expect_contains(a.ball + b.ball, a.point + b.point, "add");
    expect_contains(a.ball - b.ball, a.point - b.point, "sub");
    expect_contains(a.ball * b.ball, a.point * b.point, "mul");
    expect_contains(a.ball / p.ball, a.point / p.point, "div");
    expect_contains(sqrt(p.ball), sqrt(p.point), "sqrt");
    expect_contains(exp(a.ball), exp(a.point), "exp");
    expect_contains(log(p.ball), log(p.point), "log");
    expect_contains(tanh(a.ball), tanh(a.point), "tanh");
    expect_contains(tanh(-p.ball), tanh(-p.point), "tanh of a wide range");
    expect_contains(erf(a.ball), erf(a.point), "erf");
    expect_contains(erfc(a.ball), erfc(a.point), "erfc");
    if (i % 20 == 0) {  // MPFR's erf and erfc far from 0 (the truth here) take a millisecond
      expect_contains(erf(p.ball), erf(p.point), "erf far from 0");
      expect_contains(erfc(p.ball), erfc(p.point), "erfc of a tiny value");
      expect_contains(erfc(-p.ball), erfc(-p.point), "erfc near 2");
    }
    expect_contains(sin(p.ball), sin(p.point), "sin");
    expect_contains(cos(p.ball), cos(p.point), "cos");
    const Sample angle = sample(s, -2e6, 2e6, rr * 0x1p-30);  // RoPE and sinusoidal angles
    expect_contains(sin(angle.ball), sin(angle.point), "sin of a large angle");
    expect_contains(cos(angle.ball), cos(angle.point), "cos of a large angle");
    for (const Sample& x : {p, angle, sample(s, -1e9, 1e9, rr)}) {  // the last: MPFR's range
      const BallSinCos sc = sin_cos(x.ball);
      expect_contains(sc.sin, sin(x.point), "sin_cos's sine");
      expect_contains(sc.cos, cos(x.point), "sin_cos's cosine");
    }
    expect_contains(pow(p.ball, a.ball), pow(p.point, a.point), "pow");
  }
}

// erfc far out (GELU's erfc(−x/√2) for x ≪ 0): tiny values keep a radius tiny relative to
// themselves, so the rounding is decided there without MPFR's whole-op fallback.
TEST(Ball, ErfcFarOutKeepsARelativeRadius) {
  Stream s{5};
  for (int i = 0; i < 300; ++i) {
    const Sample t = sample(s, 2, 26, 0x1p-100);
    const Ball e = erfc(t.ball);
    expect_contains(e, erfc(t.point), "erfc");
    EXPECT_LT(e.rad(), std::fabs(e.hi()) * 0x1p-80) << "erfc(" << t.ball.hi() << ")";
  }
}

TEST(Ball, LongChainsStayEnclosedAndNarrow) {
  // A softmax-weighted sum over 4096 terms, the shape of attention's inner loop.
  Stream s{4};
  Ball num, den;
  wide num_w = 0, den_w = 0;
  for (int i = 0; i < 4096; ++i) {
    const Sample z = sample(s, -8, 0, 0), v = sample(s, -2, 2, 0);
    const Ball e = exp(z.ball);
    num = num + e * v.ball;
    den = den + e;
    num_w += exp(z.point) * v.point;
    den_w += exp(z.point);
  }
  const Ball o = num / den;
  expect_contains(o, num_w / den_w, "softmax-weighted sum");
  EXPECT_LT(o.rad(), std::fabs(o.hi()) * 0x1p-80) << "far below a double's half-ulp";
}

// erf and erfc by series and erfcx's Taylor table (ball_erf.cc) on exact arguments, both sides
// of the switch at 0.5 and up to where MPFR takes over (26.5): enclosing MPFR's value at 333 bits
// and narrow enough to decide a double's rounding with room: 2^-95 of the value, up to 25.5
// (beyond, erfc nears 2^-1000 and double-double's absolute 2^-1070 takes over).
TEST(Ball, ErfAndErfcAreEnclosedAndNarrowWithoutMpfr) {
  Stream s{6};
  for (int i = 0; i < 3000; ++i) {
    const double x = i < 20 ? 0.5 + (i - 10) * 0x1p-40 : s.in(-26.5, 26.5);
    const Ball e = erf(Ball(x)), c = erfc(Ball(x));
    expect_contains(e, erf(wide(x)), "erf");
    expect_contains(c, erfc(wide(x)), "erfc");
    if (std::fabs(x) > 25.5) continue;
    EXPECT_LT(e.rad(), std::fabs(e.hi()) * 0x1p-95) << "erf(" << x << ")";
    EXPECT_LT(c.rad(), std::fabs(c.hi()) * 0x1p-95) << "erfc(" << x << ")";
  }
  for (const double x : {0.0, -0.0, 1e-300, -1e-300, 0x1p-1000}) {
    expect_contains(erf(Ball(x)), erf(wide(x)), "erf near 0");
    expect_contains(erfc(Ball(x)), erfc(wide(x)), "erfc near 0");
  }
  EXPECT_TRUE(std::signbit(erf(Ball(-0.0)).hi()));
}

// exp_many gives, element for element, the very ball exp gives (the batched midpoints have exp's
// bits): ordinary arguments with and without radius, the special cases (0, ±inf, NaN, a radius
// above 1/2, past kExpMax), and lengths around the four-lane blocks.
TEST(Ball, ExpManyIsExpElementByElement) {
  Stream s{9};
  for (const int n : {0, 1, 3, 4, 5, 17, 1000}) {
    std::vector<Ball> x;
    for (int i = 0; i < n; ++i) {
      const double rr = i % 3 == 0 ? 0 : std::ldexp(1.0, -30 - static_cast<int>(s.next() % 60));
      x.push_back(sample(s, -700, 700, rr).ball);
    }
    if (n >= 5) {
      x[0] = Ball(0.0);
      x[1] = Ball(-std::numeric_limits<double>::infinity());
      x[2] = Ball::from_parts(1, 0, 0.75);
      x[3] = Ball(710.0);
      x[4] = Ball(std::numeric_limits<double>::quiet_NaN());
    }
    std::vector<Ball> y = x;
    exp_many(y);
    for (int i = 0; i < n; ++i) {
      const Ball e = exp(x[static_cast<size_t>(i)]);
      const Ball& b = y[static_cast<size_t>(i)];
      EXPECT_EQ(std::bit_cast<uint64_t>(b.hi()), std::bit_cast<uint64_t>(e.hi())) << i;
      EXPECT_EQ(std::bit_cast<uint64_t>(b.lo()), std::bit_cast<uint64_t>(e.lo())) << i;
      EXPECT_EQ(std::bit_cast<uint64_t>(b.rad()), std::bit_cast<uint64_t>(e.rad())) << i;
    }
  }
}

// softcap_balls (reference/softcap_balls.h): every capped value and derivative encloses MPFR's
// cap·tanh(z/cap) and 1 − tanh²(z/cap) at 333 bits, with radii below 2^-95 of the cap, for 0,
// tiny, ordinary and saturated logits of either sign; without the derivative asked, the same
// capped balls.
TEST(Ball, SoftcapBallsEncloseTanhAndItsDerivative) {
  Stream s{10};
  std::vector<double> z = {0.0, -0.0, 1e-300, -3e-9, 29.9, -31.0, 1e4, -7e5};
  for (int i = 0; i < 2000; ++i) z.push_back(s.in(-120, 120));
  for (const double cap : {30.0, 5.0}) {
    std::vector<Ball> capped(z.size()), grad(z.size()), alone(z.size());
    softcap_balls(z, cap, capped, grad);
    softcap_balls(z, cap, alone, {});
    for (size_t j = 0; j < z.size(); ++j) {
      const wide t = wide(z[j]) / wide(cap), th = tanh(t);
      // 1 − tanh² as 4e/(1 + e)², e = e^(−2|t|): the printed form cancels to 0 in 333 bits
      // once |t| passes about 115.
      const wide e = exp(-2 * abs(t));
      expect_contains(capped[j], wide(cap) * th, "cap·tanh(z/cap)");
      expect_contains(grad[j], 4 * e / ((1 + e) * (1 + e)), "1 − tanh²");
      EXPECT_LT(capped[j].rad(), cap * 0x1p-95) << z[j];
      EXPECT_EQ(std::bit_cast<uint64_t>(alone[j].hi()), std::bit_cast<uint64_t>(capped[j].hi()));
      EXPECT_EQ(alone[j].rad(), capped[j].rad());
    }
  }
}

// sinusoidal_divisor_balls (reference/sinusoidal_balls.h): every divisor encloses MPFR's
// base^(2i/d) at 333 bits and stays within 2^-92 of it, for widths whose exponents 2i/d are and
// are not exact in binary, one- and many-block chains, and bases above and below 1; a base that is
// not an exact positive double is declined.
TEST(Ball, SinusoidalDivisorsEncloseEveryPower) {
  for (const int64_t d : {2, 6, 64, 512, 768, 4096}) {
    for (const double base : {10000.0, 500000.0, 1e6, 2.5, 0.75}) {
      const std::vector<Ball> div = sinusoidal_divisor_balls(d, Ball(base));
      ASSERT_EQ(div.size(), static_cast<size_t>(d / 2));
      for (int64_t i = 0; i < d / 2; ++i) {
        const wide want = pow(wide(base), wide(2 * i) / wide(d));
        const Ball& b = div[static_cast<size_t>(i)];
        expect_contains(b, want, "base^(2i/d)");
        EXPECT_LE(b.rad(), b.hi() * 0x1p-92) << "d " << d << ", base " << base << ", i " << i;
      }
    }
  }
  EXPECT_TRUE(sinusoidal_divisor_balls(8, Ball::from_parts(10000, 0, 1e-20)).empty());
  EXPECT_TRUE(sinusoidal_divisor_balls(8, Ball(-2.0)).empty());
  EXPECT_TRUE(sinusoidal_divisor_balls(7, Ball(10000.0)).empty());
}

// sigmoid_balls (reference/sigmoid_balls.h): every result encloses MPFR's 1/(1 + e^(−s)) at any
// point of its input ball, on both sides of 0, at 0, and far out where one form would overflow.
TEST(Ball, SigmoidBallsEncloseTheSigmoidAnywhereInTheirInputs) {
  Stream s{11};
  std::vector<Sample> in;
  for (const double v : {0.0, -0.0, 1e-300, -2e-9, 700.0, -700.0, 745.0, -745.0}) {
    in.push_back({Ball(v), wide(v)});
  }
  for (int i = 0; i < 4000; ++i) {
    const double rr = i % 3 == 0 ? 0 : std::ldexp(1.0, -30 - static_cast<int>(s.next() % 60));
    in.push_back(sample(s, -60, 60, rr));
  }
  std::vector<Ball> y;
  for (const Sample& x : in) y.push_back(x.ball);
  sigmoid_balls(y);
  for (size_t j = 0; j < in.size(); ++j) {
    expect_contains(y[j], 1 / (1 + exp(-in[j].point)), "sigmoid");
    // Narrow: the propagated input radius (σ' ≤ 1/4, the exponential's bound 1.65·r) and 2^-90.
    EXPECT_LE(y[j].rad(), std::fabs(y[j].hi()) * 0x1p-90 + 2 * in[j].ball.rad() + 0x1p-1000)
        << in[j].ball.hi();
  }
}

// erfc_many gives, element for element, the very ball erfc gives: balls with and without radius
// on both sides of 0, 0 itself, past the table's 26.5 and non-finite values.
TEST(Ball, ErfcManyIsErfcElementByElement) {
  Stream s{12};
  std::vector<Ball> x = {Ball(0.0),
                         Ball(-0.0),
                         Ball(27.0),
                         Ball(-30.0),
                         Ball(std::numeric_limits<double>::infinity()),
                         Ball(1e-300)};
  for (int i = 0; i < 3000; ++i) {
    const double rr = i % 3 == 0 ? 0 : std::ldexp(1.0, -30 - static_cast<int>(s.next() % 60));
    x.push_back(sample(s, -8, 8, rr).ball);
  }
  std::vector<Ball> y = x;
  erfc_many(y);
  for (size_t j = 0; j < x.size(); ++j) {
    const Ball e = erfc(x[j]);
    EXPECT_EQ(std::bit_cast<uint64_t>(y[j].hi()), std::bit_cast<uint64_t>(e.hi())) << j;
    EXPECT_EQ(std::bit_cast<uint64_t>(y[j].lo()), std::bit_cast<uint64_t>(e.lo())) << j;
    EXPECT_EQ(std::bit_cast<uint64_t>(y[j].rad()), std::bit_cast<uint64_t>(e.rad())) << j;
  }
}

// erfcx's Taylor table (erfcx_taylor.cc) at both ends of every point's interval, where the
// truncation bound is largest, and at the point, with a low word: each ball encloses MPFR's
// e^(a²)·erfc(a) at 333 bits and stays within 2^-100 of it. The grid's four steps and the
// ends of the range are all crossed.
TEST(Ball, ErfcxTableEnclosesAcrossEveryInterval) {
  Stream s{8};
  const double starts[] = {0, 4, 8, 16}, steps[] = {1.0 / 32, 1.0 / 16, 1.0 / 8, 0.25};
  const double ends[] = {4, 8, 16, 26.5};
  int checked = 0;
  for (int g = 0; g < 4; ++g) {
    for (double x = starts[g]; x <= ends[g]; x += steps[g]) {
      for (const double off : {-0.5, 0.0, 0.5}) {
        const double hi = x + off * steps[g] * (1 - 0x1p-30);
        if (hi < kErfcxMin || hi > kErfcxMax) continue;
        const dd::DD a{hi, hi * 0x1p-54 * s.in(-1, 1)};
        const Ball b = erfcx_ball(a);
        const wide t = w(a);
        const wide exact = exp(t * t) * erfc(t);
        expect_contains(b, exact, "erfcx");
        EXPECT_LT(b.rad(), b.hi() * 0x1p-100) << "erfcx(" << hi << ")";
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 850);
  EXPECT_THROW(erfcx_ball({-0x1p-30, 0}), std::invalid_argument);
  EXPECT_THROW(erfcx_ball({26.6, 0}), std::invalid_argument);
}

// sin and cos by ball_trig.cc's table: at both ends of every table point's interval (where the
// short series' truncation is largest) and at the point, in all four quadrants and after a
// large reduction, each ball encloses MPFR's value at 333 bits within 2^-98.
TEST(Ball, SineAndCosineEncloseAcrossEveryTableInterval) {
  const wide half_pi = boost::math::constants::half_pi<wide>();
  int checked = 0;
  for (const int k : {0, 1, 2, 3, -1, 1000003}) {
    for (int j = -51; j <= 51; ++j) {
      for (const double off : {-0.5, 0.0, 0.5}) {
        const wide r = (wide(j) + wide(off) * (1 - wide(0x1p-30))) / 64;
        if (abs(r) > wide(0.78)) continue;
        const double x = static_cast<double>(wide(k) * half_pi + r);
        const BallSinCos sc = sin_cos(Ball(x));
        expect_contains(sc.sin, sin(wide(x)), "sin");
        expect_contains(sc.cos, cos(wide(x)), "cos");
        EXPECT_LT(sc.sin.rad(), 0x1p-98) << x;
        EXPECT_LT(sc.cos.rad(), 0x1p-98) << x;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1700);
}

// sin_cos_many gives, element for element, the very balls sin_cos gives, and counts the same
// undecided results: batches of every length around the four lanes and the 64-element chunks,
// with points near multiples of π/2 and 0 (table index 0), reduced arguments up to 2^21, wide
// radii, and values off the table path (non-finite, beyond 2^21) between them.
TEST(Ball, SinCosManyIsSinCosElementByElement) {
  Stream s{12};
  const auto same = [](const Ball& a, const Ball& b) {
    return std::bit_cast<uint64_t>(a.hi()) == std::bit_cast<uint64_t>(b.hi()) &&
           std::bit_cast<uint64_t>(a.lo()) == std::bit_cast<uint64_t>(b.lo()) &&
           std::bit_cast<uint64_t>(a.rad()) == std::bit_cast<uint64_t>(b.rad());
  };
  for (const int n : {0, 1, 3, 4, 5, 17, 63, 64, 65, 130, 1000}) {
    std::vector<Ball> x;
    for (int i = 0; i < n; ++i) {
      const double rr = i % 3 == 0 ? 0 : std::ldexp(1.0, -25 - static_cast<int>(s.next() % 70));
      switch (i % 4) {
        case 0:
          x.push_back(sample(s, -0x1p21, 0x1p21, rr).ball);
          break;
        case 1:
          x.push_back(sample(s, -8, 8, rr).ball);
          break;
        case 2:  // near k·π/2: index 0 of the table, either side
          x.push_back(Ball::from_parts(
              static_cast<double>(s.next() % 2000) * 1.5707963267948966 + s.in(-1e-3, 1e-3), 0,
              rr));
          break;
        default:
          x.push_back(sample(s, -1e5, 1e5, rr).ball);
      }
    }
    const std::vector<Ball> specials = {Ball(0.0),
                                        Ball(-0.0),
                                        Ball(std::numeric_limits<double>::quiet_NaN()),
                                        Ball(-std::numeric_limits<double>::infinity()),
                                        Ball(3e6),
                                        Ball::from_parts(1, 0, 1e-3),
                                        Ball::from_parts(0x1p21, 0, 1e-7)};
    for (size_t k = 0; k < specials.size() && 7 * k < x.size(); ++k) x[7 * k] = specials[k];
    const uint64_t before_many = ball_undecided();
    std::vector<BallSinCos> y(x.size());
    sin_cos_many(x, y);
    const uint64_t by_many = ball_undecided() - before_many;
    const uint64_t before_one = ball_undecided();
    for (size_t i = 0; i < x.size(); ++i) {
      const BallSinCos e = sin_cos(x[i]);
      EXPECT_TRUE(same(y[i].sin, e.sin)) << i << ": sin of " << x[i].hi();
      EXPECT_TRUE(same(y[i].cos, e.cos)) << i << ": cos of " << x[i].hi();
    }
    EXPECT_EQ(by_many, ball_undecided() - before_one) << n;
  }
}

TEST(Ball, SineAndCosineAreTightEnoughToDecideDoubles) {
  Stream s{5};
  for (int i = 0; i < 2000; ++i) {
    const double x = s.in(-131072, 131072);
    const Ball sb = sin(Ball(x)), cb = cos(Ball(x));
    EXPECT_LT(sb.rad(), 0x1p-80) << x;
    EXPECT_LT(cb.rad(), 0x1p-80) << x;
  }
}

TEST(Ball, OperationsOnDoublesThatAreExactKeepRadiusZero) {
  const Ball a(1.5), b(0x1p-60), c(3.0);
  EXPECT_TRUE((a + b).exact());          // 2Sum
  EXPECT_TRUE((a * b).exact());          // 2Prod
  EXPECT_TRUE((a / Ball(4.0)).exact());  // a power of two
  EXPECT_TRUE((Ball(6.0) / c).exact());  // an exact quotient
  EXPECT_TRUE(sqrt(Ball(2.25)).exact());
  EXPECT_TRUE(exp(Ball(0.0)).exact());
  EXPECT_FALSE((Ball(1.0) / c).exact());
}

TEST(Ball, ComparisonsAreDecidedOrCounted) {
  const Ball one(1.0);
  const Ball near = Ball::from_parts(1.0, 0, 0x1p-60);
  const uint64_t before = ball_undecided();
  EXPECT_TRUE(one < Ball(2.0));
  EXPECT_TRUE(near == near);  // identical balls: equal, not counted
  EXPECT_FALSE(near > Ball(3.0));
  EXPECT_EQ(ball_undecided(), before);
  (void)(near < one);  // overlapping, distinct: undecided
  EXPECT_EQ(ball_undecided(), before + 1);
}

TEST(Ball, NonFiniteValuesAreExactOrCounted) {
  const Ball ninf = -std::numeric_limits<Ball>::infinity();
  const uint64_t before = ball_undecided();
  EXPECT_EQ(exp(ninf).hi(), 0);
  EXPECT_TRUE(exp(ninf).exact());
  EXPECT_TRUE(std::isinf((ninf + Ball(2.0)).hi()));
  EXPECT_EQ(ball_undecided(), before);
  (void)exp(Ball(800.0));  // overflows double, not MPFR
  EXPECT_EQ(ball_undecided(), before + 1);
  (void)(Ball(1.0) / Ball::from_parts(0, 0, 0x1p-70));  // divisor's interval holds 0
  EXPECT_EQ(ball_undecided(), before + 2);
}

}  // namespace
}  // namespace lmo::ref
