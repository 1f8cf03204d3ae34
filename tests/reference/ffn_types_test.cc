// F06 activations (and derivatives), F03/F04/F05 FFNs and the GLU gate backward run on all nine
// number types, return finite values on small inputs exact in every format, and stay within a
// stated bound of the mp result on the same inputs.
#include <gtest/gtest.h>

#include <vector>

#include "reference/activations_grad.h"
#include "reference/ffn.h"
#include "reference/ffn_grad.h"
#include "tests/support/typed_numbers.h"

namespace lmo::ref {
namespace {

using testdata::eps_of;
using testdata::normwise_close;
using testdata::tiny_of;
using testdata::to_mp_vector;
using testdata::to_type;

constexpr Activation kActs[] = {Activation::kReLU, Activation::kGELU, Activation::kGELUTanh,
                                Activation::kSiLU};
const std::vector<double> kPoints{-3, -1, -0.5, 0, 0.25, 1, 2.5};

template <class T>
class FfnTypes : public ::testing::Test {};
TYPED_TEST_SUITE(FfnTypes, testdata::AllNumberTypes);

// Elementwise: ≤ 8 roundings (libm or correctly rounded transcendental counted as one) with a
// relative condition ≤ 1 + x² (erfc's at x/√2; sigmoid's ≤ 1 + |x|; GELU-tanh's ≤ 1 + 2|u|
// ≤ 1 + x² on |x| ≤ 3), and an absolute allowance of the smallest subnormal per rounding where
// the exact value or an intermediate underflows (fp8: e^{−2u} at x = −3 is below 2^-9):
//   |error| ≤ 16·(1 + x²)·(ε·(|f(x)| + 1) + 8·tiny),
// the "+ 1" because derivatives are sums of O(1) terms that may cancel.
template <class T>
mp elementwise_bound(double x, const mp& ref) {
  return 16 * (1 + x * x) * (eps_of<T>() * (abs(ref) + 1) + 8 * tiny_of<T>());
}

TYPED_TEST(FfnTypes, ActivationsAndDerivativesRunFiniteAndNearMp) {
  using T = TypeParam;
  using std::isfinite;
  for (double xd : kPoints) {
    const T x = convert<T>(xd);
    const mp xm = to_mp(x);
    for (Activation a : kActs) {
      for (bool literal : {false, true}) {
        const T y = activate(a, x, literal);
        const T dy = activate_grad(a, x, literal);
        EXPECT_TRUE(isfinite(y) && isfinite(dy)) << activation_name(a) << " x=" << xd;
        const mp ry = activate(a, xm, literal), rdy = activate_grad(a, xm, literal);
        EXPECT_LE(abs(to_mp(y) - ry), elementwise_bound<T>(xd, ry))
            << activation_name(a) << " literal=" << literal << " x=" << xd;
        EXPECT_LE(abs(to_mp(dy) - rdy), elementwise_bound<T>(xd, rdy))
            << activation_name(a) << "' literal=" << literal << " x=" << xd;
      }
    }
    const T beta = convert<T>(1.5);
    EXPECT_TRUE(isfinite(swish(x, beta)) && isfinite(swish_grad(x, beta)));
    EXPECT_TRUE(isfinite(sigmoid(x)) && isfinite(sigmoid(x, true)));
    // C26: SiLU is Swish₁, exactly, in every type (β·x = x exactly).
    EXPECT_EQ(to_mp(silu(x)), to_mp(swish(x, T(1))));
    EXPECT_EQ(to_mp(silu_grad(x)), to_mp(swish_grad(x, T(1))));
  }
}

// 2 tokens, d = f = e = 4, entries in {±0.25, ±0.5, ±0.75, ±1, ±1.5}.
const std::vector<double> kXs{0.5, -1, 0.25, 0.75, -0.5, 1.5, -0.25, 1};
const std::vector<double> kW{0.5,  -0.25, 0.75,  1,   -0.5, 0.25, -1,   0.5,
                             0.25, 1,     -0.75, 0.5, 1,    -0.5, 0.25, -0.25};
const std::vector<double> kV{-0.5, 0.25, 1,     0.5, 0.75, -1,   0.5,  0.25,
                             1,    0.5,  -0.25, -1,  0.25, 0.75, -0.5, 1};
const std::vector<double> kB{0.25, -0.5, 0, 0.5};

template <class T>
Mat<T> mat(int64_t r, int64_t c, const std::vector<double>& v) {
  return Mat<T>(r, c, to_type<T>(v));
}

template <class T>
std::vector<mp> mp_data(const Mat<T>& m) {
  return to_mp_vector(m.data);
}

// Two length-4 dot products, a bias and an activation on the path: ≤ 2·4 + 10 roundings with
// condition ≤ 4 (Σ|terms| / |sum| for these entries is at most a few): |error| ≤
// 4·18·ε·S with S = 1 + max|y| (the outputs are O(1)), plus subnormal allowances.
template <class T>
mp ffn_bound(const std::vector<mp>& ref) {
  return 4 * 18 * (eps_of<T>() * (1 + testdata::max_abs(ref)) + 8 * tiny_of<T>());
}

TYPED_TEST(FfnTypes, FfnFamilyRunsFiniteAndNearMp) {
  using T = TypeParam;
  const Mat<T> x = mat<T>(2, 4, kXs), w = mat<T>(4, 4, kW), v = mat<T>(4, 4, kV),
               w2 = mat<T>(4, 4, kV);
  const std::vector<T> b = to_type<T>(kB);
  const Mat<mp> xm = mat<mp>(2, 4, kXs), wm = mat<mp>(4, 4, kW), vm = mat<mp>(4, 4, kV),
                w2m = mat<mp>(4, 4, kV);
  const std::vector<mp> bm = to_type<mp>(kB);

  const auto f3 = ffn_relu_bias<T>(x, w, b, w2, b);
  const auto r3 = mp_data(ffn_relu_bias<mp>(xm, wm, bm, w2m, bm));
  EXPECT_TRUE(testdata::all_finite(f3.data));
  EXPECT_TRUE(normwise_close(f3.data, r3, ffn_bound<T>(r3)));
  for (Activation a : kActs) {
    const auto f4 = ffn<T>(x, w, w2, a);
    const auto r4 = mp_data(ffn<mp>(xm, wm, w2m, a));
    EXPECT_TRUE(testdata::all_finite(f4.data)) << activation_name(a);
    EXPECT_TRUE(normwise_close(f4.data, r4, ffn_bound<T>(r4))) << activation_name(a);
    const auto f5 = glu_ffn<T>(x, w, v, w2, a);
    const auto r5 = mp_data(glu_ffn<mp>(xm, wm, vm, w2m, a));
    EXPECT_TRUE(testdata::all_finite(f5.data)) << activation_name(a);
    EXPECT_TRUE(normwise_close(f5.data, r5, ffn_bound<T>(r5))) << activation_name(a);
  }
  EXPECT_TRUE(testdata::all_finite(swiglu<T>(x, w, v, w2).data));
  EXPECT_TRUE(testdata::all_finite(geglu<T>(x, w, v, w2).data));
  EXPECT_TRUE(testdata::all_finite(geglu_tanh<T>(x, w, v, w2).data));
  EXPECT_TRUE(testdata::all_finite(reglu<T>(x, w, v, w2).data));
}

TYPED_TEST(FfnTypes, GluGateBackwardRunsFiniteAndNearMp) {
  using T = TypeParam;
  const auto a = to_type<T>(kPoints), bb = to_type<T>({0.5, -1, 1.5, 0.25, -0.75, 1, 0.5}),
             dh = to_type<T>({1, 0.5, -0.25, 0.75, 1, -1, 0.25});
  const auto am = to_mp_vector(a), bm = to_mp_vector(bb), dhm = to_mp_vector(dh);
  for (Activation act : kActs) {
    const auto g = glu_gate_backward<T>(a, bb, dh, act);
    const auto gm = glu_gate_backward<mp>(am, bm, dhm, act);
    EXPECT_TRUE(testdata::all_finite(g.da) && testdata::all_finite(g.db));
    // Elementwise bound at the worst point (x = −3, factor 10), times |dh·b| ≤ 1.5.
    const mp bound = 16 * 10 * 2 * (eps_of<T>() * 2 + 8 * tiny_of<T>());
    EXPECT_TRUE(normwise_close(g.da, gm.da, bound)) << activation_name(act);
    EXPECT_TRUE(normwise_close(g.db, gm.db, bound)) << activation_name(act);
  }
}

}  // namespace
}  // namespace lmo::ref
