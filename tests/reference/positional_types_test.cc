// F07–F09 on all nine number types: every function runs and gives finite values on small,
// well-scaled inputs, within a stated bound of the mp result computed on the same (T-rounded)
// inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tests/support/typed_numbers.h"
#include "reference/positional.h"

namespace lmo::ref {
namespace {

using testdata::compound;
using testdata::is_finite;
using testdata::unit_roundoff;

template <class T>
class PositionalTypes : public ::testing::Test {};
TYPED_TEST_SUITE(PositionalTypes, testdata::AllNumberTypes);



// sinusoidal_pe(3, 8, base 100): base 100 rather than 10000 because E4M3's largest finite value
// is 448. The angle p / base^(2i/d) is ≤ 3 and carries the roundings of the exponent (amplified
// by ln(base) ≈ 4.6 through pow), of pow and of the quotient, ~8 roundings in all; sin/cos move
// by at most the angle's error times |angle| ≤ 3, plus one rounding: bound
// compound(8, u)·3 + compound(1, u) absolute (|PE| ≤ 1).
TYPED_TEST(PositionalTypes, SinusoidalRunsFiniteAndNearMp) {
  using T = TypeParam;
  const double u = static_cast<double>(unit_roundoff<T>());
  const T base = T(100);
  const std::vector<T> pe = sinusoidal_pe<T>(T(3), 8, base);
  const std::vector<mp> ref = sinusoidal_pe<mp>(mp(3), 8, to_mp(base));
  ASSERT_EQ(pe.size(), 8u);
  for (size_t i = 0; i < pe.size(); ++i) {
    EXPECT_TRUE(is_finite(pe[i])) << i;
    EXPECT_LE(static_cast<double>(abs(to_mp(pe[i]) - ref[i])), compound(8, u) * 3 + u) << i;
  }
  const Mat<T> table = sinusoidal_pe_table<T>(4, 4, base);
  for (const T& v : table.data) EXPECT_TRUE(is_finite(v));
}

// Sums of two table entries: one rounding, |Δ| ≤ u·|v + u|.
TYPED_TEST(PositionalTypes, LearnedAbsoluteRoundsEachSumOnce) {
  using T = TypeParam;
  const double u = static_cast<double>(unit_roundoff<T>());
  Mat<T> v(3, 2), p(4, 2);
  for (int64_t i = 0; i < 6; ++i) v.data[static_cast<size_t>(i)] = T(0.375 * (i - 2.5));
  for (int64_t i = 0; i < 8; ++i) p.data[static_cast<size_t>(i)] = T(0.1 * (i + 1));
  const std::vector<int64_t> ids{2, 0, 1}, pos{0, 3, 1};
  const Mat<T> e = learned_position_embed<T>(v, p, ids, pos);
  for (int64_t t = 0; t < 3; ++t) {
    for (int64_t c = 0; c < 2; ++c) {
      const mp exact = to_mp(v(ids[t], c)) + to_mp(p(pos[t], c));
      EXPECT_TRUE(is_finite(e(t, c)));
      EXPECT_LE(static_cast<double>(abs(to_mp(e(t, c)) - exact)),
                u * static_cast<double>(abs(exact)));
    }
  }
}

// Shaw logits on a 3-token example (d_model 2, d_k 2, k 1). Every path from an input to a logit
// passes at most 10 roundings (projection: 2 products and a sum; k + a; the dot product's 2
// products and sum; sqrt; the quotient), so |Δe| ≤ compound(12, u)·M with M = Σ_c |q_c||k_c +
// a_c| / sqrt(d_k) over exact magnitudes — 12 leaves room for the magnitudes' own rounding.
TYPED_TEST(PositionalTypes, ShawLogitsRunFiniteAndNearMp) {
  using T = TypeParam;
  const double u = static_cast<double>(unit_roundoff<T>());
  Mat<T> x(3, 2), wq(2, 2), wk(2, 2), rel(3, 2);
  const double xs[] = {0.5, -0.25, 1.0, 0.75, -0.5, 0.125};
  const double ws[] = {0.3, -0.7, 0.45, 0.2};
  const double ks[] = {-0.6, 0.35, 0.8, 0.15};
  const double rs[] = {0.1, -0.2, 0.0, 0.05, -0.3, 0.25};
  for (size_t i = 0; i < 6; ++i) x.data[i] = T(xs[i]);
  for (size_t i = 0; i < 4; ++i) wq.data[i] = T(ws[i]);
  for (size_t i = 0; i < 4; ++i) wk.data[i] = T(ks[i]);
  for (size_t i = 0; i < 6; ++i) rel.data[i] = T(rs[i]);
  auto up = [](const Mat<T>& m) {
    Mat<mp> r(m.rows, m.cols);
    for (size_t i = 0; i < m.data.size(); ++i) r.data[i] = to_mp(m.data[i]);
    return r;
  };
  const Mat<T> e = shaw_relative_logits<T>(x, wq, wk, rel, 1);
  const Mat<mp> ref = shaw_relative_logits<mp>(up(x), up(wq), up(wk), up(rel), 1);
  const Mat<mp> q = matmul(up(x), up(wq)), k = matmul(up(x), up(wk)), a = up(rel);
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      mp mag = 0;
      const int64_t r = shaw_relative_index(i, j, 1);
      for (int64_t c = 0; c < 2; ++c) mag += abs(q(i, c)) * (abs(k(j, c)) + abs(a(r, c)));
      mag /= sqrt(mp(2));
      EXPECT_TRUE(is_finite(e(i, j)));
      EXPECT_LE(static_cast<double>(abs(to_mp(e(i, j)) - ref(i, j))),
                compound(12, u) * static_cast<double>(mag))
          << i << "," << j;
    }
  }
}

// The T5 bias is a lookup: exact in every type (table values k/4, |k| ≤ 8: 4 significant bits).
TYPED_TEST(PositionalTypes, T5BiasIsAnExactLookup) {
  using T = TypeParam;
  Mat<T> table(32, 2);
  for (int64_t b = 0; b < 32; ++b) {
    for (int64_t h = 0; h < 2; ++h)
      table(b, h) = T(0.25 * static_cast<double>((b * 3 + h) % 17 - 8));
  }
  const auto bias = t5_relative_position_bias<T>(table, 4, 6, true);
  for (int64_t h = 0; h < 2; ++h) {
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t j = 0; j < 6; ++j) {
        const int64_t b = t5_relative_position_bucket(j - i, true);
        EXPECT_EQ(to_mp(bias[static_cast<size_t>(h)](i, j)), to_mp(table(b, h)));
      }
    }
  }
}

}  // namespace
}  // namespace lmo::ref
