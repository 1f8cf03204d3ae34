// The judge on certified balls (JudgeReference's Ball constructor, what `check` and `verify` use
// at real shapes) gives the very Verdict the judge gives on the balls' midpoints made mp values
// (to_mp), field by field, the metrics' mp maxima and the NMSE included: on outputs that are the
// correctly rounded reference, a few ulps off, truncated, far off or NaN; under ulp policies (with
// the midpoint rule, with arg_error) and naive-relative ones (one group, row groups, a block of a
// larger tensor); on balls whose low words are normalized, far below (to_mp rounds them), zero,
// and on zero midpoints; judged once and twice (the cache of elements equal to their reference).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "oracle/judge/judge.h"
#include "oracle/rules/policy.h"
#include "reference/ball.h"
#include "reference/formats.h"
#include "reference/tensor.h"
#include "tests/support/same_verdict.h"
#include "tests/support/splitmix.h"

namespace lmo::oracle {
namespace {

using ref::Ball;
using ref::Format;

constexpr int64_t kN = 3000;

double random_double(testing::SplitMix64& g, int e) {
  const double m = 1 + g.unit();
  return std::ldexp(g.next() % 2 ? m : -m, e);
}

std::vector<Ball> random_balls(testing::SplitMix64& g) {
  std::vector<Ball> b;
  for (int64_t i = 0; i < kN; ++i) {
    const int e = static_cast<int>(g.next() % 16) - 8;
    const double hi = random_double(g, e);
    switch (g.next() % 8) {
      case 0:
        b.push_back(Ball::from_parts(hi, 0, 0));
        break;
      case 1:
        b.push_back(
            Ball::from_parts(hi, random_double(g, e - 60 - static_cast<int>(g.next() % 100)), 0));
        break;
      case 2:
        b.push_back(Ball::from_parts(i % 3 == 0 ? -0.0 : 0.0, 0, 0));
        break;
      default:
        b.push_back(Ball::from_parts(hi, random_double(g, e - 53), 0));
        break;
    }
  }
  return b;
}

// A kernel's output for each ball: its correctly rounded reference, moved by a few ulps,
// truncated toward zero, far off, or NaN.
ref::Tensor outputs(Format f, const std::vector<mp>& x, testing::SplitMix64& g) {
  ref::Tensor t(ref::format_dtype(f), {kN});
  for (int64_t i = 0; i < kN; ++i) {
    const mp& v = x[static_cast<size_t>(i)];
    const uint64_t r = ref::encode(f, v);
    const int64_t o = ordinal(f, r);
    uint64_t y = r;
    switch (g.next() % 10) {
      case 0:
        y = from_ordinal(f, o + 1);
        break;
      case 1:
        y = from_ordinal(f, o - 3);
        break;
      case 2: {  // truncation: the value of f next to x toward zero
        const double d = ref::decode<double>(f, r);
        if (abs(mp(d)) > abs(v)) y = from_ordinal(f, o > 0 ? o - 1 : o + 1);
        break;
      }
      case 3:
        y = ref::encode(f, mp(random_double(g, static_cast<int>(g.next() % 10) - 5)));
        break;
      case 4:
        if (g.next() % 50 == 0) y = ref::encode(f, mp(NAN));
        break;
      default:
        break;
    }
    t.set_bits(i, y);
  }
  return t;
}

TEST(JudgeOnBalls, SameVerdictAsOnTheMidpointsInMp) {
  testing::SplitMix64 g{21};
  const Format formats[] = {Format::bf16, Format::f16, Format::f32, Format::e4m3, Format::f64};
  int failing = 0, passing = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const Format f = formats[trial % 5];
    const std::vector<Ball> balls = random_balls(g);
    std::vector<mp> x;
    for (const Ball& b : balls) x.push_back(ref::to_mp(b));
    // Every fourth trial a kernel that is the reference itself, which must pass.
    const bool exact_kernel = trial % 4 == 3;
    ref::Tensor y = outputs(f, x, g);
    if (exact_kernel) {
      for (int64_t i = 0; i < kN; ++i) y.set_bits(i, ref::encode(f, x[static_cast<size_t>(i)]));
    }
    std::vector<double> naive, condition;
    for (const mp& v : x) {
      naive.push_back(static_cast<double>(static_cast<float>(static_cast<double>(v))) *
                      (1 + std::ldexp(g.unit() - 0.5, -20)));
      condition.push_back(g.unit() * 8);
    }
    struct Setup {
      std::string name;
      Policy policy;
      JudgeOptions options;
    };
    std::vector<Setup> setups;
    setups.push_back({"ulp", ulp_policy(1, 1), {}});
    setups.push_back({"ulp+midpoint", ulp_policy(0, 0, 0.25), {}});
    JudgeOptions with_kappa;
    with_kappa.condition = condition;
    setups.push_back({"ulp+arg_error", ulp_policy(1, 0, 0.25, 2), with_kappa});
    JudgeOptions naive_one;
    naive_one.naive = naive;
    setups.push_back({"naive", naive_policy(), naive_one});
    JudgeOptions naive_rows = naive_one;
    naive_rows.group = 100;
    setups.push_back({"naive rows", naive_policy(), naive_rows});
    JudgeOptions block = naive_one;
    block.whole_elements = 2 * kN;
    block.offset = kN;
    block.whole_naive_max = mp(0.01);
    block.whole_naive_excluded = 3;
    setups.push_back({"naive block", naive_policy(), block});
    for (const Setup& s : setups) {
      const std::string at =
          std::string(ref::format_name(f)) + " " + s.name + " trial " + std::to_string(trial);
      ref::Tensor whole = y;
      if (s.options.whole_elements > 0) {
        whole = ref::Tensor(y.dtype(), {2 * kN});
        for (int64_t i = 0; i < kN; ++i) whole.set_bits(kN + i, y.bits(i));
      }
      JudgeReference on_mp(s.policy, x, f, s.options);
      JudgeReference on_balls(s.policy, balls, f, s.options);
      for (int use = 0; use < 2; ++use) {
        const Verdict a = on_mp.judge(whole), b = on_balls.judge(whole);
        testing::expect_same_verdict(a, b, at + " use " + std::to_string(use));
        (a.pass ? passing : failing) += use == 0;
      }
    }
  }
  // Both verdicts occur: the comparison covers failures and their messages.
  EXPECT_GT(failing, 50);
  EXPECT_GT(passing, 10);
}

}  // namespace
}  // namespace lmo::oracle
