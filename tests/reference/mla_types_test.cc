// F19 MLA, naive and absorbed (with absorbed decoding), on all nine number types. Inputs and
// weights are the mpmath cases rounded to the type; the reference for the bound is the mp
// result on those rounded values.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "reference/mla.h"
#include "tests/support/typed_numbers.h"
#include "tests/support/attention_cases.h"

namespace lmo::ref {
namespace {

using testdata::all_finite;
using testdata::unit_roundoff;
using testdata::widen;

using testdata::hex_matrix;
using testdata::mla_config;
using testdata::mla_weights;

const nlohmann::json& data() {
  static const nlohmann::json d = testdata::load("mla.json");
  return d;
}

template <class T>
MlaWeights<mp> widen(const MlaWeights<T>& w) {
  return {widen(w.w_dq), widen(w.w_uq), widen(w.w_qr), widen(w.w_dkv),
          widen(w.w_uk), widen(w.w_kr), widen(w.w_uv), widen(w.w_o)};
}

template <class T>
class MlaTypes : public ::testing::Test {};

TYPED_TEST_SUITE(MlaTypes, testdata::AllNumberTypes);

TYPED_TEST(MlaTypes, NaiveAndAbsorbedWithinTheErrorBound) {
  using T = TypeParam;
  const mp u = to_mp(std::numeric_limits<T>::epsilon()) / 2;
  for (const auto& c : data()["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    MlaConfig cfg = mla_config(c);
    // RoPE's base is a number of T (rope.h evaluates the frequencies in T); 10000 and 500000 are
    // beyond fp8 E4M3's range (max 448), where the base becomes NaN. 256 fits every type.
    cfg.rope_base = mp(256);
    const MlaWeights<T> w = mla_weights<T>(c["weights"]);
    const Mat<T> h = hex_matrix<T>(c["h"]);
    const Mat<mp> want = mla_naive(widen(h), widen(w), cfg).u;
    const mp bound = testdata::mla_error_bound(u, cfg, h.rows) * testdata::max_abs(want);
    const Mat<T> naive = mla_naive(h, w, cfg).u;
    EXPECT_TRUE(all_finite(naive));
    EXPECT_LE(testdata::max_abs_diff(naive, want), bound);
    const MlaAbsorbedWeights<T> a = mla_absorb(w, cfg);
    const Mat<T> absorbed = mla_absorbed(h, a, cfg).u;
    EXPECT_TRUE(all_finite(absorbed));
    EXPECT_LE(testdata::max_abs_diff(absorbed, want), bound);
    MlaLatentCache<T> cache;
    for (int64_t t = 0; t < h.rows; ++t) {
      const std::vector<T> step = mla_absorbed_decode_step<T>(h.row(t), a, cfg, cache);
      for (int64_t col = 0; col < absorbed.cols; ++col) {
        EXPECT_EQ(to_mp(step[col]), to_mp(absorbed(t, col))) << t << "," << col;
      }
    }
  }
}

// bfloat16 storage with float accumulation.
TEST(MlaMixed, Bfloat16WithFloatAccumulation) {
  const auto& c = data()["cases"][0];
  const MlaConfig cfg = mla_config(c);
  const MlaWeights<bfloat16> w = mla_weights<bfloat16>(c["weights"]);
  const Mat<bfloat16> h = hex_matrix<bfloat16>(c["h"]);
  const Mat<mp> want = mla_naive(widen(h), widen(w), cfg).u;
  const mp bound =
      testdata::mla_error_bound(to_mp(std::numeric_limits<bfloat16>::epsilon()) / 2, cfg, h.rows) *
      testdata::max_abs(want);
  EXPECT_LE(testdata::max_abs_diff(mla_naive<bfloat16, float>(h, w, cfg).u, want), bound);
  const MlaAbsorbedWeights<bfloat16> a = mla_absorb<bfloat16, float>(w, cfg);
  EXPECT_LE(testdata::max_abs_diff(mla_absorbed<bfloat16, float>(h, a, cfg).u, want), bound);
}

}  // namespace
}  // namespace lmo::ref
