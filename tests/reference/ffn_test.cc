// F03 ReLU FFN with biases, F04 bias-free FFN, F05 GLU family against the mpmath values of
// tests/data/make_ffn.py; float128 and double within a forward-error bound; the GLU gate
// backward against central differences.
#include "reference/ffn.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "reference/ffn_grad.h"
#include "tests/support/central_difference.h"
#include "tests/support/test_data.h"

namespace lmo::ref {
namespace {

using testdata::relative_error;

constexpr Activation kActs[] = {Activation::kReLU, Activation::kGELU, Activation::kGELUTanh,
                                Activation::kSiLU};

template <class T>
Mat<T> read_mat(const nlohmann::json& m) {
  Mat<T> out(static_cast<int64_t>(m.size()), static_cast<int64_t>(m[0].size()));
  for (int64_t i = 0; i < out.rows; ++i) {
    for (int64_t j = 0; j < out.cols; ++j) {
      out(i, j) =
          convert<T>(testdata::exact_double(m[static_cast<size_t>(i)][static_cast<size_t>(j)]));
    }
  }
  return out;
}

template <class T>
std::vector<T> read_vec(const nlohmann::json& v) {
  std::vector<T> out;
  for (const auto& e : v) out.push_back(convert<T>(testdata::exact_double(e)));
  return out;
}

Mat<mp> read_expected(const nlohmann::json& m) {
  Mat<mp> out(static_cast<int64_t>(m.size()), static_cast<int64_t>(m[0].size()));
  for (int64_t i = 0; i < out.rows; ++i) {
    for (int64_t j = 0; j < out.cols; ++j) {
      out(i, j) = testdata::expected(m[static_cast<size_t>(i)][static_cast<size_t>(j)]);
    }
  }
  return out;
}

template <class T>
struct Inputs {
  Mat<T> x, w1, w2, v;
  std::vector<T> b1, b2;
};

template <class T>
Inputs<T> inputs(const nlohmann::json& c) {
  return {read_mat<T>(c.at("x")), read_mat<T>(c.at("w1")), read_mat<T>(c.at("w2")),
          read_mat<T>(c.at("v")), read_vec<T>(c.at("b1")), read_vec<T>(c.at("b2"))};
}

Mat<mp> abs_mat(const Mat<mp>& m) {
  Mat<mp> out = m;
  for (mp& v : out.data) v = abs(v);
  return out;
}

// What each case computes, on any T.
template <class T>
Mat<T> run(const std::string& key, const Inputs<T>& in) {
  if (key == "ffn_relu_bias") return ffn_relu_bias<T>(in.x, in.w1, in.b1, in.w2, in.b2);
  for (Activation a : kActs) {
    if (key == std::string("ffn_") + activation_name(a)) return ffn<T>(in.x, in.w1, in.w2, a);
    if (key == std::string("glu_") + activation_name(a)) {
      return glu_ffn<T>(in.x, in.w1, in.v, in.w2, a);
    }
  }
  throw std::runtime_error("unknown case " + key);
}

std::vector<std::string> keys() {
  std::vector<std::string> k{"ffn_relu_bias"};
  for (Activation a : kActs) {
    k.push_back(std::string("ffn_") + activation_name(a));
    k.push_back(std::string("glu_") + activation_name(a));
  }
  return k;
}

// First-order forward-error bound of a kernel with unit roundoff u, per output element:
//   pre-activations a = x W (+ b): |Δa_j| ≤ (d + 1)·u·Σ_i |x_i||W_ij| (+ |b_j|), same for b = xV;
//   h_j = act(a_j)·b_j: |Δh_j| ≤ L·|Δa_j|·|b_j| + |act(a_j)|·|Δb_j| + 8u·|h_j|, where L = 1.2
//   bounds |act'| for all four activations (GELU' ≤ 1.13, SiLU' ≤ 1.1, GELU-tanh' ≤ 1.13) and
//   8u covers the activation's own roundings and libm (non-GLU: b = 1, Δb = 0);
//   y_k = Σ_j h_j W2_jk (+ b2_k): |Δy_k| ≤ Σ_j |Δh_j||W2_jk| + (f + 1)·u·(Σ_j |h_j||W2_jk| +
//   |b2_k|).
// Doubled for the neglected second-order terms.
Mat<mp> forward_bound(const std::string& key, const Inputs<mp>& in, const mp& u) {
  const bool bias = key == "ffn_relu_bias", glu = key.rfind("glu_", 0) == 0;
  Activation act = Activation::kReLU;
  for (Activation a : kActs) {
    if (key.ends_with(activation_name(a))) act = a;
  }
  if (bias) act = Activation::kReLU;
  const mp d = in.x.cols, f = in.w1.cols;
  const Mat<mp> ax = abs_mat(in.x);
  const Mat<mp> mag_a = matmul<mp>(ax, abs_mat(in.w1));
  const Mat<mp> mag_b = matmul<mp>(ax, abs_mat(in.v));
  Mat<mp> a = matmul<mp>(in.x, in.w1);
  const Mat<mp> b = matmul<mp>(in.x, in.v);
  Mat<mp> dh(a.rows, a.cols), h(a.rows, a.cols);
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t j = 0; j < a.cols; ++j) {
      mp da = (d + 1) * u * mag_a(i, j);
      if (bias) {
        a(i, j) += in.b1[static_cast<size_t>(j)];
        da += (d + 1) * u * abs(in.b1[static_cast<size_t>(j)]);
      }
      const mp fa = activate(act, a(i, j));
      const mp bb = glu ? b(i, j) : mp(1);
      const mp db = glu ? mp((d + 1) * u * mag_b(i, j)) : mp(0);
      h(i, j) = abs(fa * bb);
      dh(i, j) = mp("1.2") * da * abs(bb) + abs(fa) * db + 8 * u * h(i, j);
    }
  }
  const Mat<mp> aw2 = abs_mat(in.w2);
  Mat<mp> bound = matmul<mp>(dh, aw2);
  const Mat<mp> mag_y = matmul<mp>(h, aw2);
  for (int64_t i = 0; i < bound.rows; ++i) {
    for (int64_t k = 0; k < bound.cols; ++k) {
      const mp b2 = bias ? abs(in.b2[static_cast<size_t>(k)]) : mp(0);
      bound(i, k) = 2 * (bound(i, k) + (f + 1) * u * (mag_y(i, k) + b2));
    }
  }
  return bound;
}

TEST(Ffn, MatchesMpmathAt1e40Float128AndDoubleWithinBound) {
  const auto data = testdata::load("ffn.json");
  const auto& c = data.at("case");
  // The generator guarantees every dot product's condition number ≤ 1e3, so mp's error is
  // ≤ 1e3·(d + f + 10)·2^-167 ≈ 1e-46 relative: 1e-40 is a real check.
  ASSERT_LE(c.at("max_condition").get<double>(), 1e3);
  const auto in_mp = inputs<mp>(c);
  const auto in_q = inputs<float128>(c);
  const auto in_d = inputs<double>(c);
  const mp u_q = to_mp(std::numeric_limits<float128>::epsilon()) / 2;
  const mp u_d = mp(std::numeric_limits<double>::epsilon() / 2);
  for (const std::string& key : keys()) {
    const Mat<mp> want = read_expected(c.at(key));
    const Mat<mp> y = run<mp>(key, in_mp);
    const Mat<float128> q = run<float128>(key, in_q);
    const Mat<double> yd = run<double>(key, in_d);
    const Mat<mp> bq = forward_bound(key, in_mp, u_q), bd = forward_bound(key, in_mp, u_d);
    ASSERT_EQ(y.rows, want.rows);
    ASSERT_EQ(y.cols, want.cols);
    for (size_t i = 0; i < y.data.size(); ++i) {
      EXPECT_LT(relative_error(y.data[i], want.data[i]), 1e-40) << key << " i=" << i;
      EXPECT_LE(abs(to_mp(q.data[i]) - want.data[i]),
                std::max(mp(1e-30 * abs(want.data[i])), bq.data[i]))
          << key << " i=" << i;
      EXPECT_LE(abs(mp(yd.data[i]) - want.data[i]), bd.data[i]) << key << " i=" << i;
    }
  }
}

TEST(Ffn, NamedGluMembersAreGluFfn) {
  const auto data = testdata::load("ffn.json");
  const auto in = inputs<double>(data.at("case"));
  EXPECT_EQ(reglu<double>(in.x, in.w1, in.v, in.w2).data,
            glu_ffn<double>(in.x, in.w1, in.v, in.w2, Activation::kReLU).data);
  EXPECT_EQ(geglu<double>(in.x, in.w1, in.v, in.w2).data,
            glu_ffn<double>(in.x, in.w1, in.v, in.w2, Activation::kGELU).data);
  EXPECT_EQ(geglu_tanh<double>(in.x, in.w1, in.v, in.w2).data,
            glu_ffn<double>(in.x, in.w1, in.v, in.w2, Activation::kGELUTanh).data);
  EXPECT_EQ(swiglu<double>(in.x, in.w1, in.v, in.w2).data,
            glu_ffn<double>(in.x, in.w1, in.v, in.w2, Activation::kSiLU).data);
  // F04 with ReLU is F03 with zero biases.
  const std::vector<double> z1(static_cast<size_t>(in.w1.cols)),
      z2(static_cast<size_t>(in.w2.cols));
  EXPECT_EQ(ffn<double>(in.x, in.w1, in.w2, Activation::kReLU).data,
            ffn_relu_bias<double>(in.x, in.w1, z1, in.w2, z2).data);
}

TEST(Ffn, RejectsMismatchedShapes) {
  const Mat<double> x(2, 4), w(4, 6), v(4, 6), w2(6, 4), bad(5, 6), v5(4, 5);
  const std::vector<double> b6(6), b4(4), b5(5);
  EXPECT_THROW(ffn<double>(x, bad, w2, Activation::kGELU), std::invalid_argument);
  EXPECT_THROW(ffn<double>(x, w, bad, Activation::kGELU), std::invalid_argument);
  EXPECT_THROW(ffn_relu_bias<double>(x, w, b5, w2, b4), std::invalid_argument);
  EXPECT_THROW(ffn_relu_bias<double>(x, w, b6, w2, b5), std::invalid_argument);
  EXPECT_THROW(glu_ffn<double>(x, w, v5, w2, Activation::kSiLU), std::invalid_argument);
  EXPECT_THROW(glu_ffn<double>(x, w, v, bad, Activation::kSiLU), std::invalid_argument);
  try {
    ffn<double>(x, bad, w2, Activation::kGELU);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "ffn: w1 is 5x6, expected 4 rows (the columns of x)");
  }
}

TEST(FfnGrad, GluGateBackwardMatchesCentralDifferences) {
  // L = Σ_i dh_i·act(a_i)·b_i; ∂L/∂a and ∂L/∂b by central differences at 100 digits.
  const std::vector<mp> a{mp(-3.1), mp(-0.9), mp(-0.2), mp(0.05), mp(0.7), mp(1.9), mp(4.2)};
  const std::vector<mp> b{mp(0.4), mp(-1.2), mp(2.0), mp(0.9), mp(-0.3), mp(1.1), mp(-0.6)};
  const std::vector<mp> dh{mp(1.0), mp(0.5), mp(-0.7), mp(1.3), mp(0.2), mp(-1.1), mp(0.8)};
  for (Activation act : kActs) {
    const auto g = glu_gate_backward<mp>(a, b, dh, act);
    const auto dh100 = testdata::to_mp100(dh);
    const auto fa = [&](const std::vector<testdata::mp100>& w) {
      return testdata::dot100(dh100, glu_gate<testdata::mp100>(w, testdata::to_mp100(b), act));
    };
    const auto fb = [&](const std::vector<testdata::mp100>& w) {
      return testdata::dot100(dh100, glu_gate<testdata::mp100>(testdata::to_mp100(a), w, act));
    };
    const auto da = testdata::central_gradient(fa, a), db = testdata::central_gradient(fb, b);
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_LE(abs(g.da[i] - da[i]), 1e-30 * abs(da[i]) + 1e-40)
          << activation_name(act) << " i=" << i;
      EXPECT_LE(abs(g.db[i] - db[i]), 1e-30 * abs(db[i]) + 1e-40)
          << activation_name(act) << " i=" << i;
    }
  }
  EXPECT_THROW(glu_gate_backward<double>(std::vector<double>{1, 2}, std::vector<double>{1},
                                         std::vector<double>{1, 2}, Activation::kSiLU),
               std::invalid_argument);
}

}  // namespace
}  // namespace lmo::ref
