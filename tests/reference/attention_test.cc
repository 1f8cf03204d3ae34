// F15 attention against mpmath (tests/data/make_attention.py), its masks, fully masked rows, the
// literal softmax flag and argument validation.
#include "reference/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "reference/parallel.h"
#include "tests/support/attention_cases.h"

namespace lmo::ref {
namespace {

using testdata::attention_config;
using testdata::expected_matrix;
using testdata::hex_matrix;

const nlohmann::json& data() {
  static const nlohmann::json d = testdata::load("attention.json");
  return d;
}

TEST(Attention, MatchesMpmathInMp) {
  for (const auto& c : data()["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const AttentionConfig cfg = attention_config(c);
    const Mat<mp> o =
        attention(hex_matrix<mp>(c["q"]), hex_matrix<mp>(c["k"]), hex_matrix<mp>(c["v"]), cfg);
    const Mat<mp> want = expected_matrix(c["expected"]);
    ASSERT_EQ(o.rows, want.rows);
    ASSERT_EQ(o.cols, want.cols);
    for (size_t i = 0; i < o.data.size(); ++i) {
      EXPECT_LT(testdata::relative_error(o.data[i], want.data[i]), mp("1e-40")) << i;
    }
  }
}

// Errors are measured against max|V| rather than per element: an output component is a convex
// combination of values and may cancel to near 0, where a per-element relative error says nothing
// about the arithmetic.
TEST(Attention, Float128AndDoubleNearMp) {
  for (const auto& c : data()["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const AttentionConfig cfg = attention_config(c);
    const Mat<mp> want = expected_matrix(c["expected"]);
    const Mat<double> qd = hex_matrix<double>(c["q"]), kd = hex_matrix<double>(c["k"]),
                      vd = hex_matrix<double>(c["v"]);
    const mp scale = testdata::max_abs(vd);
    const Mat<float128> o128 = attention(hex_matrix<float128>(c["q"]), hex_matrix<float128>(c["k"]),
                                         hex_matrix<float128>(c["v"]), cfg);
    EXPECT_LT(testdata::max_abs_diff(o128, want), mp("1e-30") * scale);
    const Mat<double> od = attention(qd, kd, vd, cfg);
    const mp u = ldexp(mp(1), -53);
    const mp bound = testdata::attention_error_bound(u, qd, kd, vd, cfg);
    EXPECT_LT(bound,
              mp("1e-13"));  // the bound is itself small: a meaningful check
    EXPECT_LE(testdata::max_abs_diff(od, want), bound);
  }
}

TEST(Attention, ProbabilitiesSumToOneAndGiveTheOutput) {
  const auto& c = data()["cases"][1];  // GQA, causal
  const AttentionConfig cfg = attention_config(c);
  const Mat<mp> q = hex_matrix<mp>(c["q"]), k = hex_matrix<mp>(c["k"]), v = hex_matrix<mp>(c["v"]);
  const std::vector<Mat<mp>> p = attention_probs(q, k, cfg);
  const Mat<mp> want = expected_matrix(c["expected"]);
  ASSERT_EQ(static_cast<int64_t>(p.size()), cfg.heads);
  for (int64_t head = 0; head < cfg.heads; ++head) {
    const int64_t kv = kv_head_of(head, cfg);
    for (int64_t i = 0; i < q.rows; ++i) {
      mp total = 0;
      for (int64_t j = 0; j < k.rows; ++j) {
        if (j > i) {
          EXPECT_EQ(p[head](i, j), 0);  // causal: future keys get exactly 0
        }
        total += p[head](i, j);
      }
      EXPECT_LT(abs(total - 1), mp("1e-48"));
      for (int64_t col = 0; col < cfg.head_dim; ++col) {
        mp o = 0;
        for (int64_t j = 0; j < k.rows; ++j) o += p[head](i, j) * v(j, kv * cfg.head_dim + col);
        EXPECT_LT(testdata::relative_error(o, want(i, head * cfg.head_dim + col)), mp("1e-40"));
      }
    }
  }
}

// With more queries than keys under a causal mask, the first queries sit at negative positions and
// see no key: the formula's softmax is 0/0 there, so those rows are NaN, and only those.
TEST(Attention, FullyMaskedRowsAreNaN) {
  AttentionConfig cfg;
  cfg.heads = 2;
  cfg.kv_heads = 1;
  cfg.head_dim = 2;
  cfg.mask = MaskKind::kCausal;
  const Mat<double> q(
      4, 4, {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, -0.1, -0.2, -0.3, -0.4, 0.9, -0.9, 0.5, -0.5});
  const Mat<double> k(2, 2, {1.0, -1.0, 0.5, 0.25});
  const Mat<double> v(2, 2, {2.0, 3.0, -1.0, 4.0});
  const Mat<double> o = attention(q, k, v, cfg);
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t c = 0; c < 4; ++c) EXPECT_EQ(std::isnan(o(i, c)), i < 2) << i << "," << c;
  }
  const Mat<bfloat16> ob = attention(Mat<bfloat16>(1, 4, std::vector<bfloat16>(4, bfloat16(1.0))),
                                     Mat<bfloat16>(0, 2), Mat<bfloat16>(0, 2), cfg);
  for (const bfloat16& x : ob.data) EXPECT_TRUE(isnan(x));
  const std::vector<Mat<double>> p = attention_probs(q, k, cfg);
  EXPECT_TRUE(std::isnan(p[0](0, 0)));
  EXPECT_FALSE(std::isnan(p[0](2, 0)));
}

// Logits near 12 overflow e^s in float16 (e^12 > 65504): the literal softmax breaks, the default
// (max-subtracted) one does not, and in mp the two agree.
TEST(Attention, LiteralSoftmaxIsAvailableAndOverflowsInFloat16) {
  AttentionConfig cfg;
  cfg.heads = 1;
  cfg.kv_heads = 1;
  cfg.head_dim = 1;
  cfg.scale = mp(1);
  auto run = [&](auto zero, bool subtract_max) {
    using T = decltype(zero);
    cfg.subtract_max = subtract_max;
    return attention(Mat<T>(1, 1, {T(4.0)}), Mat<T>(3, 1, {T(3.0), T(2.5), T(2.0)}),
                     Mat<T>(3, 1, {T(1.0), T(2.0), T(3.0)}), cfg);
  };
  const Mat<float16> stable = run(float16(0.0), true), literal = run(float16(0.0), false);
  EXPECT_TRUE(isfinite(stable(0, 0)));
  EXPECT_FALSE(isfinite(literal(0, 0)));
  const Mat<mp> a = run(mp(0), true), b = run(mp(0), false);
  EXPECT_LT(testdata::relative_error(a(0, 0), b(0, 0)), mp("1e-48"));
}

TEST(Attention, ResultDoesNotDependOnThreadCount) {
  const auto& c = data()["cases"][6];  // soft-capped
  const AttentionConfig cfg = attention_config(c);
  const Mat<bfloat16> q = hex_matrix<bfloat16>(c["q"]), k = hex_matrix<bfloat16>(c["k"]),
                      v = hex_matrix<bfloat16>(c["v"]);
  set_reference_threads(1);
  const Mat<bfloat16> one = attention(q, k, v, cfg);
  for (int threads : {2, 3, 7}) {
    set_reference_threads(threads);
    const Mat<bfloat16> many = attention(q, k, v, cfg);
    for (size_t i = 0; i < one.data.size(); ++i) {
      EXPECT_EQ(one.data[i].bits(), many.data[i].bits()) << threads;
    }
  }
  set_reference_threads(0);
}

TEST(Attention, RejectsBadArguments) {
  AttentionConfig cfg;
  cfg.heads = 4;
  cfg.kv_heads = 3;
  cfg.head_dim = 2;
  const Mat<double> q(2, 8), k(2, 6), v(2, 6);
  EXPECT_THROW(attention(q, k, v, cfg),
               std::invalid_argument);  // g does not divide h
  cfg.kv_heads = 2;
  EXPECT_THROW(attention(q, k, v, cfg),
               std::invalid_argument);  // K, V need g·d = 4 columns
  EXPECT_THROW(attention(Mat<double>(2, 6), Mat<double>(2, 4), Mat<double>(2, 4), cfg),
               std::invalid_argument);
  EXPECT_THROW(attention(q, Mat<double>(2, 4), Mat<double>(3, 4), cfg), std::invalid_argument);
  EXPECT_NO_THROW(attention(q, Mat<double>(2, 4), Mat<double>(2, 4), cfg));
  cfg.mask = MaskKind::kSlidingWindow;
  EXPECT_THROW(attention(q, Mat<double>(2, 4), Mat<double>(2, 4), cfg), std::invalid_argument);
  cfg.mask = MaskKind::kDocument;
  cfg.document_ids = {0};
  EXPECT_THROW(attention(q, Mat<double>(2, 4), Mat<double>(2, 4), cfg), std::invalid_argument);
  cfg.mask = MaskKind::kNone;
  cfg.soft_cap = mp(0);
  EXPECT_THROW(attention(q, Mat<double>(2, 4), Mat<double>(2, 4), cfg), std::invalid_argument);
  cfg.soft_cap.reset();
  cfg.heads = 0;
  try {
    attention(q, Mat<double>(2, 4), Mat<double>(2, 4), cfg);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("heads"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lmo::ref
