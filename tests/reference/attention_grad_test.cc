// The attention gradient (attention_grad.h) against central differences of
// L(Q, K, V) = Σ dO ⊙ attention(Q, K, V), whose gradient is exactly what attention_backward
// returns for that dO.
#include "reference/attention_grad.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "reference/attention.h"
#include "tests/support/attention_cases.h"
#include "tests/support/central_difference.h"

namespace lmo::ref {
namespace {

using testdata::attention_config;
using testdata::hex_matrix;

const nlohmann::json& data() {
  static const nlohmann::json d = testdata::load("attention.json");
  return d;
}

// dO in [−1, 1) from a fixed linear congruential sequence (exact doubles).
Mat<mp> upstream(int64_t rows, int64_t cols) {
  Mat<mp> m(rows, cols);
  uint32_t x = 2024;
  for (mp& e : m.data) {
    x = x * 1664525u + 1013904223u;
    e = mp(static_cast<double>(x >> 8) / 8388608.0 - 1.0);
  }
  return m;
}

using testdata::mp100;

Mat<mp100> widen(const Mat<mp>& m) {
  return Mat<mp100>(m.rows, m.cols, testdata::to_mp100(m.data));
}

mp100 loss(const Mat<mp100>& q, const Mat<mp100>& k, const Mat<mp100>& v, const Mat<mp100>& d_out,
           const AttentionConfig& cfg) {
  return testdata::dot100(d_out.data, attention(q, k, v, cfg).data);
}

// max over the entries of Q, K and V of |central difference − analytic| / max|analytic| of that
// tensor. The loss is evaluated by the same reference code at 100 digits
// (tests/support/central_difference.h explains why 50 are not enough for 1e-30: here the noise of
// 50-digit differences measured up to 2e-29 of the largest gradient entry); the scale, cap and
// bias constants are the mp values, widened exactly, so it is the same function the mp gradient
// differentiates.
mp worst_gradient_error(const Mat<mp>& q, const Mat<mp>& k, const Mat<mp>& v,
                        const AttentionConfig& cfg) {
  const Mat<mp> d_out = upstream(q.rows, cfg.heads * cfg.v_dim());
  const AttentionGrads<mp> g = attention_backward(q, k, v, d_out, cfg);
  const Mat<mp>* analytic[3] = {&g.dq, &g.dk, &g.dv};
  const Mat<mp>* inputs[3] = {&q, &k, &v};
  const Mat<mp100> d_out_wide = widen(d_out);
  mp worst = 0;
  for (int t = 0; t < 3; ++t) {
    EXPECT_EQ(analytic[t]->rows, inputs[t]->rows);
    EXPECT_EQ(analytic[t]->cols, inputs[t]->cols);
    const mp scale = testdata::max_abs(*analytic[t]);
    EXPECT_GT(scale, 0);
    Mat<mp100> in[3] = {widen(q), widen(k), widen(v)};
    const std::vector<mp> fd = testdata::central_gradient(
        [&](const std::vector<mp100>& x) {
          in[t].data = x;
          return loss(in[0], in[1], in[2], d_out_wide, cfg);
        },
        inputs[t]->data);
    for (size_t e = 0; e < fd.size(); ++e) {
      worst = std::max(worst, mp(abs(fd[e] - analytic[t]->data[e]) / scale));
    }
  }
  return worst;
}

// Central differences with step h = 1e-20, truncation error h²/6·|L'''| ~ 1e-41: measured
// ≤ 4e-41, so 1e-36 is asserted (tighter than the 1e-30 the project asks for, with room for
// |L'''| of other inputs). The analytic gradient is computed in mp.
TEST(AttentionBackward, MatchesCentralDifferencesInMp) {
  for (const auto& c : data()["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const mp worst = worst_gradient_error(hex_matrix<mp>(c["q"]), hex_matrix<mp>(c["k"]),
                                          hex_matrix<mp>(c["v"]), attention_config(c));
    EXPECT_LT(worst, mp("1e-36"));
    std::cout << c["name"].get<std::string>()
              << ": max |fd − analytic| / max|grad| = " << worst.str(3) << "\n";
  }
}

// A logit bias (T5's relative position bias) is added after the cap: it changes P, and through P
// the gradient, but not the chain rule through the cap. With soft-capping, GQA and a causal mask.
TEST(AttentionBackward, LogitBiasMatchesCentralDifferences) {
  const auto& c = data()["cases"][8];
  ASSERT_EQ(c["name"], "gqa_window_cap");  // 4 query heads over 2 KV heads, cap 1.5
  AttentionConfig cfg = attention_config(c);
  cfg.mask = MaskKind::kCausal;
  const Mat<mp> q = hex_matrix<mp>(c["q"]), k = hex_matrix<mp>(c["k"]), v = hex_matrix<mp>(c["v"]);
  for (int64_t h = 0; h < cfg.heads; ++h) {
    Mat<mp> b(q.rows, k.rows);
    for (int64_t i = 0; i < b.rows; ++i) {
      for (int64_t j = 0; j < b.cols; ++j) b(i, j) = mp((i + 2 * j + h) % 5) / 4;
    }
    cfg.logit_bias.push_back(b);
  }
  const mp worst = worst_gradient_error(q, k, v, cfg);
  EXPECT_LT(worst, mp("1e-36"));
  std::cout << "logit bias: max |fd − analytic| / max|grad| = " << worst.str(3) << "\n";
  // The bias moves the probabilities, so the output.
  AttentionConfig plain = cfg;
  plain.logit_bias.clear();
  EXPECT_GT(testdata::max_abs_diff(attention(q, k, v, plain), attention(q, k, v, cfg)), mp("0.01"));
  // One matrix per query head, each T_q × T_k.
  cfg.logit_bias.pop_back();
  EXPECT_THROW(attention(q, k, v, cfg), std::invalid_argument);
  cfg.logit_bias.push_back(Mat<mp>(q.rows, k.rows + 1));
  EXPECT_THROW(attention(q, k, v, cfg), std::invalid_argument);
}

// The cap's slope in its stable form equals sech²(s/cap) = 1 − tanh²(s/cap) to 1e-45 in mp for
// every s (the literal 1 − tanh² itself loses ~1e-33 at s/cap = 20, even in mp), and is still
// accurate in bfloat16 where the literal form has cancelled to 0 (s/cap = 5: tanh rounds to 1).
TEST(AttentionBackward, SoftCapSlopeIsStable) {
  for (const char* s : {"-7.5", "-1", "0", "0.3", "2", "40"}) {
    const mp z(s), cap(2);
    const mp sech2 = 1 / pow(cosh(z / cap), 2);
    EXPECT_LT(testdata::relative_error(soft_cap_slope(z, cap), sech2), mp("1e-45")) << s;
  }
  const bfloat16 z(10.0), cap(2.0);
  const bfloat16 t = tanh(bfloat16(z / cap));
  EXPECT_EQ((bfloat16(1.0) - t * t).value(), 0.0);
  const mp exact = 1 / pow(cosh(mp(5)), 2);
  // Five roundings of relative size ≤ 2^-8 (exp, 1 + e, its square, the division, s/cap).
  EXPECT_LT(testdata::relative_error(to_mp(soft_cap_slope(z, cap)), exact), mp("0.02"));
}

// A query row that sees no key has NaN output, and the formula carries the NaN into its dQ row
// and into dK, dV of its KV head; rows that see keys keep finite dQ.
TEST(AttentionBackward, FullyMaskedRowsGiveNaNAndBadShapesThrow) {
  AttentionConfig cfg;
  cfg.heads = 2;
  cfg.kv_heads = 1;
  cfg.head_dim = 2;
  cfg.mask = MaskKind::kCausal;
  const Mat<double> q(3, 4, {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, -0.1, -0.2, -0.3, -0.4});
  const Mat<double> k(2, 2, {1.0, -1.0, 0.5, 0.25}), v(2, 2, {2.0, 3.0, -1.0, 4.0});
  const Mat<double> d_out(3, 4, std::vector<double>(12, 0.5));
  const AttentionGrads<double> g = attention_backward(q, k, v, d_out, cfg);
  EXPECT_TRUE(std::isnan(g.dq(0, 0)));
  EXPECT_FALSE(std::isnan(g.dq(1, 0)));
  EXPECT_TRUE(std::isnan(g.dk(0, 0)));
  EXPECT_TRUE(std::isnan(g.dv(1, 1)));
  EXPECT_THROW(attention_backward(q, k, v, Mat<double>(3, 3), cfg), std::invalid_argument);
  cfg.kv_heads = 3;
  EXPECT_THROW(attention_backward(q, k, v, d_out, cfg), std::invalid_argument);
}

}  // namespace
}  // namespace lmo::ref
