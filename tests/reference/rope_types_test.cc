// F10 and F11 on all nine number types: every function runs and gives finite values on small,
// well-scaled inputs, within a stated bound of the mp result computed on the same (T-rounded)
// inputs; the table, sequence and backward forms equal rope() value for value in every type.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tests/support/typed_numbers.h"
#include "reference/rope_scaling.h"

namespace lmo::ref {
namespace {

using testdata::compound;
using testdata::is_finite;
using testdata::unit_roundoff;

template <class T>
class RopeTypes : public ::testing::Test {};
TYPED_TEST_SUITE(RopeTypes, testdata::AllNumberTypes);



template <class T>
std::vector<mp> up(const std::vector<T>& v) {
  std::vector<mp> r;
  for (const T& x : v) r.push_back(to_mp(x));
  return r;
}

template <class T>
std::vector<T> test_vector() {
  const double xs[] = {0.5, -0.75, 0.25, 1.0, -0.375, 0.625, -1.0, 0.125};
  std::vector<T> x;
  for (double v : xs) x.push_back(T(v));
  return x;
}

// rope at p ∈ {0, 1, 3}, d = r = 8, base 100 (E4M3's largest value is 448), both layouts.
// θ_k carries ~ln(base) + 3 ≈ 8 roundings' worth of relative error, the angle one more, so
// |Δφ| ≤ compound(9, u)·|φ| with |φ| ≤ 3; the rotation moves with its angle, and cos, sin, two
// products and a sum add compound(3, u)·2 relative to ‖pair‖ (each term ≤ ‖pair‖).
TYPED_TEST(RopeTypes, RopeRunsFiniteAndNearMp) {
  using T = TypeParam;
  const double u = static_cast<double>(unit_roundoff<T>());
  const T base = T(100);
  const std::vector<T> inv = rope_inv_freq<T>(8, base);
  const std::vector<mp> inv_mp = rope_inv_freq<mp>(8, to_mp(base));
  const std::vector<T> x = test_vector<T>();
  for (RopeLayout layout : {RopeLayout::kInterleaved, RopeLayout::kHalfSplit}) {
    for (int p : {0, 1, 3}) {
      const std::vector<T> y = rope<T>(x, T(p), inv, layout);
      const std::vector<mp> ref = rope<mp>(up(x), mp(p), inv_mp, layout);
      for (int64_t k = 0; k < 4; ++k) {
        const size_t a = layout == RopeLayout::kInterleaved ? 2 * k : k;
        const size_t b = layout == RopeLayout::kInterleaved ? 2 * k + 1 : k + 4;
        const double norm =
            std::hypot(static_cast<double>(to_mp(x[a])), static_cast<double>(to_mp(x[b])));
        const double angle = p * static_cast<double>(inv_mp[static_cast<size_t>(k)]);
        const double bound = (compound(9, u) * angle + 2 * compound(3, u)) * norm;
        for (size_t i : {a, b}) {
          EXPECT_TRUE(is_finite(y[i]));
          EXPECT_LE(static_cast<double>(abs(to_mp(y[i]) - ref[i])), bound)
              << "p=" << p << " i=" << i;
        }
      }
    }
  }
}

// The other forms of F10 compute the same operations on the same values: bitwise equal.
TYPED_TEST(RopeTypes, TableSequenceAndBackwardAgreeWithRopeExactly) {
  using T = TypeParam;
  const std::vector<T> inv = rope_inv_freq<T>(6, T(100));  // partial rotary: r = 6 < d = 8
  const std::vector<T> x = test_vector<T>();
  const std::vector<T> positions{T(0), T(1), T(2), T(5)};
  const RopeTable<T> table = rope_table<T>(positions, inv);
  Mat<T> seq(4, 16);
  for (int64_t t = 0; t < 4; ++t) {
    for (int64_t i = 0; i < 8; ++i) {
      seq(t, i) = x[static_cast<size_t>(i)];
      seq(t, 8 + i) = x[static_cast<size_t>(7 - i)];
    }
  }
  for (RopeLayout layout : {RopeLayout::kInterleaved, RopeLayout::kHalfSplit}) {
    const Mat<T> ys = rope_sequence<T>(seq, 2, positions, inv, layout);
    for (int64_t t = 0; t < 4; ++t) {
      const T& p = positions[static_cast<size_t>(t)];
      const std::vector<T> y = rope<T>(x, p, inv, layout);
      const std::vector<T> yt = rope_from_table<T>(x, table.cos.row(t), table.sin.row(t), layout);
      const std::vector<T> dx = rope_backward<T>(x, p, inv, layout);
      const std::vector<T> dxt =
          rope_from_table_backward<T>(x, table.cos.row(t), table.sin.row(t), layout);
      const std::vector<T> back = rope<T>(x, T(-p), inv, layout);
      for (size_t i = 0; i < 8; ++i) {
        EXPECT_TRUE(is_finite(y[i]));
        EXPECT_EQ(to_mp(yt[i]), to_mp(y[i]));
        EXPECT_EQ(to_mp(ys(t, static_cast<int64_t>(i))), to_mp(y[i]));
        EXPECT_EQ(to_mp(dx[i]), to_mp(back[i]));
        EXPECT_EQ(to_mp(dxt[i]), to_mp(back[i]));
      }
    }
  }
}

// A position is a T the caller chooses: rounding an integer to T happens once, visibly, and a
// narrow T may not hold it at all (E4M3 above 464 has no finite value: NaN; float16 above 65519:
// inf; bfloat16 keeps 8 significant bits). A long-context kernel that carries positions in such
// a type rotates by the wrong angle; the reference shows it rather than hiding it in a double.
TYPED_TEST(RopeTypes, PositionRoundsOnceToTheCallersType) {
  using T = TypeParam;
  for (int64_t p : {int64_t{3}, int64_t{300}, int64_t{1000001}, (int64_t{1} << 53) + 3}) {
    const T tp = rope_position<T>(p);
    const T once = from_mp<T>(mp(p));
    using std::isnan;
    if (isnan(once)) {
      EXPECT_TRUE(isnan(tp)) << p;
    } else {
      EXPECT_EQ(to_mp(tp), to_mp(once)) << p;
    }
    if (is_finite(tp)) {
      EXPECT_LE(abs(to_mp(tp) - mp(p)), mp(p) * static_cast<double>(unit_roundoff<T>())) << p;
    }
  }
}

// F11 frequencies on r = 8, base 100, scale 2, original context 48 (small enough for E4M3: the
// NTK base 100·2^(4/3) ≈ 252 stays below its 448; scale 4 would take it to 635, NaN).
// Each rule adds at most 8 roundings to θ_k's ~8 (see RopeRunsFiniteAndNearMp), and every rule
// used here is continuous in its inputs (YaRN without truncation, Llama 3.1's smooth blend is
// continuous at both ends), so the relative error is at most compound(16, u). YaRN with
// truncation has floor/ceil ends: a low-precision evaluation may move an end by one (a
// discontinuity), so it is checked for finiteness only.
TYPED_TEST(RopeTypes, ScalingRulesRunFiniteAndNearMp) {
  using T = TypeParam;
  const double u = static_cast<double>(unit_roundoff<T>());
  const T base = T(100), scale = T(2);
  const mp base_mp = to_mp(base), scale_mp = to_mp(scale);
  struct Rule {
    std::vector<T> got;
    std::vector<mp> want;
    const char* name;
  };
  const std::vector<Rule> rules = {
      {rope_inv_freq_linear<T>(8, base, scale), rope_inv_freq_linear<mp>(8, base_mp, scale_mp),
       "linear"},
      {rope_inv_freq_ntk<T>(8, base, scale), rope_inv_freq_ntk<mp>(8, base_mp, scale_mp), "ntk"},
      {rope_inv_freq_yarn<T>(8, base, scale, 48, T(32), T(1), false),
       rope_inv_freq_yarn<mp>(8, base_mp, scale_mp, 48, mp(32), mp(1), false), "yarn"},
      {rope_inv_freq_yarn_paper<T>(8, base, scale, 48),
       rope_inv_freq_yarn_paper<mp>(8, base_mp, scale_mp, 48), "yarn_paper"},
      {rope_inv_freq_llama3<T>(8, base, scale, T(1), T(4), 48),
       rope_inv_freq_llama3<mp>(8, base_mp, scale_mp, mp(1), mp(4), 48), "llama3"},
  };
  for (const Rule& r : rules) {
    ASSERT_EQ(r.got.size(), 4u) << r.name;
    for (size_t k = 0; k < 4; ++k) {
      EXPECT_TRUE(is_finite(r.got[k]) && r.got[k] > T(0)) << r.name << " " << k;
      EXPECT_LE(static_cast<double>(abs(to_mp(r.got[k]) - r.want[k]) / r.want[k]), compound(16, u))
          << r.name << " " << k;
    }
  }
  for (const T& v : rope_inv_freq_yarn<T>(8, base, scale, 48)) {
    EXPECT_TRUE(is_finite(v) && v > T(0));
  }
  // ln, a product, a product and a sum: compound(4, u) relative, plus ln's input rounding.
  const T m = yarn_mscale<T>(scale);
  EXPECT_TRUE(is_finite(m));
  EXPECT_LE(
      static_cast<double>(abs(to_mp(m) - yarn_mscale<mp>(scale_mp)) / yarn_mscale<mp>(scale_mp)),
      compound(6, u));
  const RopeTable<T> t =
      rope_table<T>(std::vector<T>{T(1), T(2)}, rope_inv_freq_yarn<T>(8, base, scale, 48), m);
  for (const T& v : t.cos.data) EXPECT_TRUE(is_finite(v));
  for (const T& v : t.sin.data) EXPECT_TRUE(is_finite(v));
}

}  // namespace
}  // namespace lmo::ref
