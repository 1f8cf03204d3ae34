// F12 cross-entropy, F13 z-loss and its gradient, F14 soft-capping and the fused loss row run on
// all nine number types, return finite values on a small row exact in every format, and stay
// within a stated bound of the mp result on the same inputs (λ and the cap rounded to T first).
//
// Bound, n = 8 logits with |z| ≤ 2: log Z is a length-n sum of e^{z − m} ∈ (0, 1], a log and an
// add: ≤ n + 4 roundings, absolute error ≤ (n + 4)·u·(1 + |log Z|); probabilities and gradient
// entries inherit that plus ≤ 6 roundings, relative to O(1) scales. Stated as
// |error| ≤ 2(n + 8)·ε·S with S = 1 + the largest |value| (ε = 2u), plus subnormal allowances
// (fp8: the smallest probabilities, ≈ e^{−4}/Z ≈ 0.002, are subnormal in E4M3).
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "reference/softmax.h"
#include "tests/support/typed_numbers.h"

namespace lmo::ref {
namespace {

using testdata::eps_of;
using testdata::normwise_close;
using testdata::tiny_of;
using testdata::to_mp_vector;
using testdata::to_type;

const std::vector<double> kZ{1.5, -0.5, 0.25, 2, -1, 0.75, 0, -2};
constexpr int64_t kTarget = 2;

template <class T>
class SoftmaxTypes : public ::testing::Test {};
TYPED_TEST_SUITE(SoftmaxTypes, testdata::AllNumberTypes);

template <class T>
mp bound(const std::vector<mp>& ref) {
  return 2 * (8 + 8) * (eps_of<T>() * (1 + testdata::max_abs(ref)) + 8 * tiny_of<T>());
}

TYPED_TEST(SoftmaxTypes, LossesAndGradientsRunFiniteAndNearMp) {
  using T = TypeParam;
  using std::isfinite;
  const auto z = to_type<T>(kZ);
  const auto zm = to_mp_vector(z);
  const T lambda = convert<T>(1e-3), cap = convert<T>(1.5);
  const mp lm = to_mp(lambda), cm = to_mp(cap);

  const T ce = cross_entropy<T>(z, kTarget);
  const mp rce = cross_entropy<mp>(zm, kTarget);
  EXPECT_TRUE(isfinite(ce));
  EXPECT_TRUE(normwise_close(std::vector<T>{ce}, {rce}, bound<T>({rce})));
  const T zl = z_loss<T>(z, kTarget, lambda);
  const mp rzl = z_loss<mp>(zm, kTarget, lm);
  EXPECT_TRUE(normwise_close(std::vector<T>{zl}, {rzl}, bound<T>({rzl})));
  const auto g = z_loss_grad<T>(z, kTarget, lambda);
  const auto rg = z_loss_grad<mp>(zm, kTarget, lm);
  EXPECT_TRUE(testdata::all_finite(g));
  EXPECT_TRUE(normwise_close(g, rg, bound<T>(rg)));

  const auto sc = softcap<T>(z, cap);
  const auto rsc = softcap<mp>(zm, cm);
  EXPECT_TRUE(normwise_close(sc, rsc, bound<T>(rsc)));
  for (bool literal : {false, true}) {
    std::vector<T> d;
    std::vector<mp> rd;
    for (size_t i = 0; i < z.size(); ++i) {
      d.push_back(softcap_grad(z[i], cap, literal));
      rd.push_back(softcap_grad(zm[i], cm, literal));
    }
    EXPECT_TRUE(testdata::all_finite(d));
    EXPECT_TRUE(normwise_close(d, rd, bound<T>(rd))) << "literal=" << literal;
  }

  for (const bool capped : {false, true}) {
    const LossRow<T> f =
        softmax_cross_entropy<T>(z, kTarget, lambda, capped ? std::optional<T>(cap) : std::nullopt);
    const LossRow<mp> rf =
        softmax_cross_entropy<mp>(zm, kTarget, lm, capped ? std::optional<mp>(cm) : std::nullopt);
    EXPECT_TRUE(isfinite(f.loss) && isfinite(f.log_z) && testdata::all_finite(f.dlogits));
    EXPECT_TRUE(normwise_close(std::vector<T>{f.loss, f.log_z}, {rf.loss, rf.log_z},
                               bound<T>({rf.loss, rf.log_z})))
        << "capped=" << capped;
    EXPECT_TRUE(normwise_close(f.dlogits, rf.dlogits, bound<T>(rf.dlogits))) << "capped=" << capped;
  }
  const auto p = softmax<T>(z);
  EXPECT_TRUE(testdata::all_finite(p));
  EXPECT_TRUE(normwise_close(p, softmax<mp>(zm), bound<T>({mp(1)})));
}

}  // namespace
}  // namespace lmo::ref
