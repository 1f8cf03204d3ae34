// F07 sinusoidal, F08 learned absolute, F09 Shaw relative logits and T5 relative position
// buckets and bias, against mpmath (tests/data/make_positional.py → positional.json).
#include "reference/positional.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/support/test_data.h"

namespace lmo::ref {
namespace {

using testdata::exact_double;
using testdata::exact_doubles;
using testdata::expected;
using testdata::expected_vector;
using testdata::relative_error;

template <class T>
Mat<T> mat_of(const nlohmann::json& rows) {
  Mat<T> m(static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size()));
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t c = 0; c < m.cols; ++c) m(r, c) = convert<T>(exact_double(rows[r][c]));
  }
  return m;
}

// Error bound of sinusoidal_pe in a type with unit roundoff u, absolute (|PE| ≤ 1): the angle
// p / base^(2i/d) carries the roundings of the exponent (amplified by ln(base)·2i/d ≤ ln base
// through pow), of pow and of the quotient, so |Δangle| ≤ (ln(base) + 3)·u·|angle|; sin and cos
// move by at most that, plus their own rounding u. Factor 2 for second-order terms and libm's
// last ulp. At p = 10^6 this is the angle's conditioning: double is right to ~1e-10 there.
double sinusoidal_bound(double u, double base, double angle) {
  return 2.0 * ((std::log(base) + 3.0) * std::fabs(angle) + 1.0) * u;
}

template <class T>
void check_sinusoidal(const nlohmann::json& c, double u) {
  const int64_t d = c["d"];
  const double base = exact_double(c["base"]), p = exact_double(c["position"]);
  const std::vector<mp> want = expected_vector(c["pe"]);
  const std::vector<T> pe = sinusoidal_pe<T>(convert<T>(p), d, convert<T>(base));
  ASSERT_EQ(pe.size(), want.size());
  for (int64_t i = 0; i < d; ++i) {
    const size_t s = static_cast<size_t>(i);
    if constexpr (std::is_same_v<T, mp>) {
      // 1e-40 relative, except where the value itself is tiny: sin of p = 0 is exactly 0.
      if (want[s] == 0) {
        EXPECT_EQ(pe[s], 0) << "p=" << p << " i=" << i;
      } else {
        EXPECT_LT(relative_error(pe[s], want[s]), mp("1e-40")) << "p=" << p << " i=" << i;
      }
    } else {
      const double angle = p / std::pow(base, static_cast<double>(2 * (i / 2)) / d);
      EXPECT_LE(static_cast<double>(abs(to_mp(pe[s]) - want[s])), sinusoidal_bound(u, base, angle))
          << "p=" << p << " i=" << i;
    }
  }
}

TEST(Sinusoidal, MatchesMpmathIncludingPosition1e6) {
  const auto data = testdata::load("positional.json");
  for (const auto& c : data["sinusoidal"]) {
    check_sinusoidal<mp>(c, 0);
    check_sinusoidal<float128>(c, std::ldexp(1.0, -113));
    check_sinusoidal<double>(c, std::ldexp(1.0, -53));
  }
  EXPECT_EQ(data["sinusoidal"].size(), 9u);
}

TEST(Sinusoidal, TableRowsEqualSinglePositions) {
  const Mat<mp> table = sinusoidal_pe_table<mp>(40, 12);
  for (int64_t p = 0; p < 40; ++p) {
    const std::vector<mp> row = sinusoidal_pe<mp>(mp(p), 12);
    for (int64_t c = 0; c < 12; ++c) EXPECT_EQ(table(p, c), row[static_cast<size_t>(c)]);
  }
  EXPECT_THROW(sinusoidal_pe<double>(1.0, 7), std::invalid_argument);
  EXPECT_THROW(sinusoidal_pe_table<double>(-1, 8), std::invalid_argument);
}

TEST(LearnedAbsolute, IsAnExactTableLookupPlusAdd) {
  const auto data = testdata::load("positional.json");
  const auto& c = data["learned"];
  const std::vector<int64_t> ids = c["ids"].get<std::vector<int64_t>>();
  const std::vector<int64_t> pos = c["positions"].get<std::vector<int64_t>>();
  const Mat<mp> out = learned_position_embed<mp>(mat_of<mp>(c["token_table"]),
                                                 mat_of<mp>(c["position_table"]), ids, pos);
  const Mat<double> dbl = learned_position_embed<double>(
      mat_of<double>(c["token_table"]), mat_of<double>(c["position_table"]), ids, pos);
  ASSERT_EQ(out.rows, 5);
  for (int64_t t = 0; t < out.rows; ++t) {
    for (int64_t k = 0; k < out.cols; ++k) {
      const mp want = expected(c["embed"][t][k]);  // dyadic with few bits: exact in decimal
      EXPECT_EQ(out(t, k), want);
      EXPECT_EQ(mp(dbl(t, k)), want);
    }
  }
  const Mat<double> v = mat_of<double>(c["token_table"]), u = mat_of<double>(c["position_table"]);
  const std::vector<int64_t> bad_id{5}, bad_pos{6}, zero{0}, neg{-1};
  EXPECT_THROW(learned_position_embed<double>(v, u, bad_id, zero), std::invalid_argument);
  EXPECT_THROW(learned_position_embed<double>(v, u, neg, zero), std::invalid_argument);
  EXPECT_THROW(learned_position_embed<double>(v, u, zero, bad_pos), std::invalid_argument);
  EXPECT_THROW(learned_position_embed<double>(v, u, zero, std::vector<int64_t>{0, 1}),
               std::invalid_argument);
  EXPECT_THROW(learned_position_embed<double>(v, Mat<double>(6, 3), zero, zero),
               std::invalid_argument);
}

// Shaw logits. The bound for float128 and double is relative to the sum of magnitudes
// Σ_c |q_ic| |k_jc + a_ijc| / sqrt(d_k) (the dot product's condition): the projections, the
// sum k + a, the products, the sum and the quotient each round once (d_model = 3, d_k = 2:
// at most 8 roundings on any path), so 16u of that sum is a safe bound.
TEST(ShawRelative, LogitsMatchMpmath) {
  const auto data = testdata::load("positional.json");
  const auto& c = data["shaw"];
  const int64_t k = c["max_relative_position"];
  const Mat<mp> e = shaw_relative_logits<mp>(mat_of<mp>(c["x"]), mat_of<mp>(c["w_q"]),
                                             mat_of<mp>(c["w_k"]), mat_of<mp>(c["rel_k"]), k);
  const Mat<float128> eq =
      shaw_relative_logits<float128>(mat_of<float128>(c["x"]), mat_of<float128>(c["w_q"]),
                                     mat_of<float128>(c["w_k"]), mat_of<float128>(c["rel_k"]), k);
  const Mat<double> ed =
      shaw_relative_logits<double>(mat_of<double>(c["x"]), mat_of<double>(c["w_q"]),
                                   mat_of<double>(c["w_k"]), mat_of<double>(c["rel_k"]), k);
  const Mat<mp> q = matmul(mat_of<mp>(c["x"]), mat_of<mp>(c["w_q"]));
  const Mat<mp> kk = matmul(mat_of<mp>(c["x"]), mat_of<mp>(c["w_k"]));
  const Mat<mp> rel = mat_of<mp>(c["rel_k"]);
  ASSERT_EQ(e.rows, 6);
  for (int64_t i = 0; i < e.rows; ++i) {
    for (int64_t j = 0; j < e.cols; ++j) {
      const mp want = expected(c["logits"][i][j]);
      EXPECT_LT(relative_error(e(i, j), want), mp("1e-40")) << i << "," << j;
      mp mag = 0;
      const int64_t r = shaw_relative_index(i, j, k);
      for (int64_t t = 0; t < q.cols; ++t) mag += abs(q(i, t)) * abs(kk(j, t) + rel(r, t));
      mag /= sqrt(mp(2));
      EXPECT_LE(abs(to_mp(eq(i, j)) - want), 16 * mag * boost::multiprecision::ldexp(mp(1), -113));
      EXPECT_LE(abs(mp(ed(i, j)) - want), 16 * mag * boost::multiprecision::ldexp(mp(1), -53));
    }
  }
  // The clip: beyond distance k the table's end rows are reused.
  EXPECT_EQ(shaw_relative_index(0, 5, 2), 4);
  EXPECT_EQ(shaw_relative_index(5, 0, 2), 0);
  EXPECT_EQ(shaw_relative_index(3, 3, 2), 2);
  const Mat<double> x(2, 2), w(2, 2);
  EXPECT_THROW(shaw_relative_logits<double>(x, w, w, Mat<double>(4, 2), 2), std::invalid_argument);
  EXPECT_THROW(shaw_relative_logits<double>(x, w, w, Mat<double>(5, 3), 2), std::invalid_argument);
}

TEST(T5Buckets, MatchThePublishedRuleExactly) {
  const auto data = testdata::load("positional.json");
  int checked = 0;
  for (const auto& c : data["t5_buckets"]) {
    const bool bidirectional = c["bidirectional"];
    const int64_t nb = c["num_buckets"], md = c["max_distance"];
    const auto rel = c["relative_positions"].get<std::vector<int64_t>>();
    const auto want = c["buckets"].get<std::vector<int64_t>>();
    for (size_t i = 0; i < rel.size(); ++i) {
      EXPECT_EQ(t5_relative_position_bucket(rel[i], bidirectional, nb, md), want[i])
          << (bidirectional ? "bidirectional " : "causal ") << nb << "/" << md << " at " << rel[i];
      ++checked;
    }
  }
  EXPECT_EQ(checked, 6 * 407);
}

// Where the log quotient is exactly an integer, float32 evaluation of the published code can
// land one bucket low. Causal, 36 buckets, max_distance 50, n = 30: max_exact 18, E = 18, and
// (30/18)^18 = (5/3)^18 = (25/9)^9 = (50/18)^9, so the quotient is exactly 9 and the bucket 27;
// float32 (make_positional.py's emulation, every step correctly rounded) gives 8.99…, 26.
TEST(T5Buckets, ExactAtALogBoundaryWhereFloat32IsOneLow) {
  EXPECT_EQ(boost::multiprecision::pow(boost::multiprecision::cpp_int(30), 18) *
                boost::multiprecision::pow(boost::multiprecision::cpp_int(18), 9),
            boost::multiprecision::pow(boost::multiprecision::cpp_int(50), 9) *
                boost::multiprecision::pow(boost::multiprecision::cpp_int(18), 18));
  EXPECT_EQ(t5_relative_position_bucket(-30, false, 36, 50), 27);
  EXPECT_EQ(t5_relative_position_bucket(-29, false, 36, 50), 26);
  EXPECT_EQ(t5_relative_position_bucket(30, true, 72, 50), 36 + 27);
  EXPECT_EQ(t5_relative_position_bucket(-54, false, 48, 81), 40);  // 2.25^24 = 3.375^16
  const auto data = testdata::load("positional.json");
  int boundary_cases = 0;
  for (const auto& c : data["t5_buckets"]) {
    const auto at = c["float32_differs_at"].get<std::vector<int64_t>>();
    const auto f32 = c["float32_buckets_there"].get<std::vector<int64_t>>();
    for (size_t i = 0; i < at.size(); ++i) {
      const int64_t exact = t5_relative_position_bucket(at[i], c["bidirectional"], c["num_buckets"],
                                                        c["max_distance"]);
      EXPECT_EQ(exact, f32[i] + 1) << at[i];  // one bucket low, every case found
      ++boundary_cases;
    }
  }
  EXPECT_EQ(boundary_cases, 5);
  // T5's own configurations (32 buckets, max_distance 128) have no such case in −200 … 200.
  for (const auto& c : data["t5_buckets"]) {
    if (c["num_buckets"] == 32) {
      EXPECT_TRUE(c["float32_differs_at"].empty());
    }
  }
}

TEST(T5Buckets, StructureAndValidation) {
  // Bidirectional: keys after the query in the upper half; causal: future keys share bucket 0.
  EXPECT_EQ(t5_relative_position_bucket(0, true), 0);
  EXPECT_EQ(t5_relative_position_bucket(1, true), 17);
  EXPECT_EQ(t5_relative_position_bucket(-1, true), 1);
  EXPECT_EQ(t5_relative_position_bucket(5, false), 0);
  EXPECT_EQ(t5_relative_position_bucket(-15, false), 15);
  EXPECT_EQ(t5_relative_position_bucket(INT64_MIN, true), 15);
  EXPECT_EQ(t5_relative_position_bucket(INT64_MAX, true), 31);
  EXPECT_EQ(t5_relative_position_bucket(INT64_MIN, false), 31);
  EXPECT_THROW(t5_relative_position_bucket(1, true, 3, 128), std::invalid_argument);
  EXPECT_THROW(t5_relative_position_bucket(1, false, 1, 128), std::invalid_argument);
  EXPECT_THROW(t5_relative_position_bucket(1, true, 32, 8), std::invalid_argument);
  EXPECT_NO_THROW(t5_relative_position_bucket(1, true, 32, 9));
}

TEST(T5Bias, LooksUpTheBucketOfEveryQueryKeyPair) {
  const auto data = testdata::load("positional.json");
  const auto& b = data["t5_bias"];
  const Mat<mp> table = mat_of<mp>(b["table"]);
  const Mat<bfloat16> table_bf16 = mat_of<bfloat16>(b["table"]);  // dyadic: exact in bf16
  for (const auto& c : b["cases"]) {
    const auto bias =
        t5_relative_position_bias<mp>(table, c["query_len"], c["key_len"], c["bidirectional"],
                                      b["max_distance"], c["query_offset"]);
    const auto bias_bf16 = t5_relative_position_bias<bfloat16>(
        table_bf16, c["query_len"], c["key_len"], c["bidirectional"], b["max_distance"],
        c["query_offset"]);
    ASSERT_EQ(bias.size(), 2u);
    for (size_t h = 0; h < 2; ++h) {
      for (int64_t i = 0; i < bias[h].rows; ++i) {
        for (int64_t j = 0; j < bias[h].cols; ++j) {
          const double want = exact_double(c["bias"][h][i][j]);
          EXPECT_EQ(bias[h](i, j), mp(want));
          EXPECT_EQ(bias_bf16[h](i, j).value(), want);
        }
      }
    }
  }
  EXPECT_THROW(t5_relative_position_bias<mp>(table, -1, 3, true), std::invalid_argument);
  EXPECT_THROW(t5_relative_position_bias<mp>(Mat<mp>(3, 2), 2, 2, true), std::invalid_argument);
}

}  // namespace
}  // namespace lmo::ref
