// F19 MLA against mpmath (tests/data/make_mla.py): naive and absorbed forms, absorbed decoding
// with the latent cache, cache sizes (C23), absorbed == naive (C21), and the E05 scale.
#include "reference/mla.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/attention_cases.h"

namespace lmo::ref {
namespace {

using testdata::expected_matrix;
using testdata::hex_matrix;
using testdata::mla_config;
using testdata::mla_weights;

const nlohmann::json& data() {
  static const nlohmann::json d = testdata::load("mla.json");
  return d;
}

void expect_relative(const Mat<mp>& got, const Mat<mp>& want, const mp& tol) {
  ASSERT_EQ(got.rows, want.rows);
  ASSERT_EQ(got.cols, want.cols);
  for (size_t i = 0; i < got.data.size(); ++i) {
    EXPECT_LT(testdata::relative_error(got.data[i], want.data[i]), tol) << i;
  }
}

TEST(Mla, NaiveMatchesMpmathInMp) {
  for (const auto& c : data()["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    MlaConfig cfg = mla_config(c);
    const MlaWeights<mp> w = mla_weights<mp>(c["weights"]);
    const Mat<mp> h = hex_matrix<mp>(c["h"]);
    expect_relative(mla_naive(h, w, cfg).u, expected_matrix(c["u"]), mp("1e-40"));
    cfg.scale = MlaScale::kLiteralE05;
    expect_relative(mla_naive(h, w, cfg).u, expected_matrix(c["u_e05"]), mp("1e-40"));
  }
}

// C21: the absorbed form equals the naive one (and mpmath), to 1e-40 in mp.
TEST(Mla, AbsorbedMatchesMpmathAndNaiveInMp) {
  for (const auto& c : data()["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    MlaConfig cfg = mla_config(c);
    const MlaWeights<mp> w = mla_weights<mp>(c["weights"]);
    const Mat<mp> h = hex_matrix<mp>(c["h"]);
    const MlaAbsorbedWeights<mp> a = mla_absorb(w, cfg);
    const Mat<mp> absorbed = mla_absorbed(h, a, cfg).u;
    expect_relative(absorbed, expected_matrix(c["u"]), mp("1e-40"));
    expect_relative(absorbed, mla_naive(h, w, cfg).u, mp("1e-40"));
    cfg.scale = MlaScale::kLiteralE05;
    expect_relative(mla_absorbed(h, a, cfg).u, expected_matrix(c["u_e05"]), mp("1e-40"));
  }
}

// E05: the scale printed in 004, 1/√(d_h + d_h²), is not a rounding-level change: it moves the
// outputs by far more than any format's error here.
TEST(Mla, LiteralE05ScaleChangesOutputs) {
  for (const auto& c : data()["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    MlaConfig cfg = mla_config(c);
    const Mat<mp> h = hex_matrix<mp>(c["h"]);
    const MlaWeights<mp> w = mla_weights<mp>(c["weights"]);
    const Mat<mp> standard = mla_naive(h, w, cfg).u;
    cfg.scale = MlaScale::kLiteralE05;
    const Mat<mp> literal = mla_naive(h, w, cfg).u;
    EXPECT_GT(testdata::max_abs_diff(literal, standard), mp("1e-3") * testdata::max_abs(standard));
    // The first token attends only to itself: softmax of one logit is 1 whatever the scale.
    for (int64_t col = 0; col < standard.cols; ++col) {
      EXPECT_LT(testdata::relative_error(literal(0, col), standard(0, col)), mp("1e-45"));
    }
  }
  MlaConfig cfg;
  cfg.head_dim = 128;
  cfg.rope_dim = 64;
  EXPECT_EQ(mla_scale(cfg), mp(1) / sqrt(mp(192)));
  cfg.scale = MlaScale::kLiteralE05;
  EXPECT_EQ(mla_scale(cfg), mp(1) / sqrt(mp(128 + 128 * 128)));
}

// F11's YaRN temperature on MLA: DeepSeek-V3's and V2's scalings (s = 40, mscale_all_dim 1 and
// 0.707) multiply eq. 46's 1/√(d_h + d_h^R) by (0.1·mscale_all_dim·ln s + 1)². Values from mpmath
// (55 digits): 1/√192·(0.1·ln 40 + 1)² and 1/√192·(0.0707·ln 40 + 1)². Without mscale_all_dim, or
// with another scaling, the scale is eq. 46's alone.
TEST(Mla, YarnTemperatureMultipliesTheSoftmaxScale) {
  MlaConfig cfg;
  cfg.head_dim = 128;
  cfg.rope_dim = 64;
  cfg.rope_scaling = RopeScaling{.kind = RopeScalingKind::kYarn,
                                 .factor = "40",
                                 .original_context = 4096,
                                 .beta_fast = "32",
                                 .beta_slow = "1",
                                 .mscale_all_dim = "1"};
  const mp tol("1e-45");
  EXPECT_LT(testdata::relative_error(
                mla_scale(cfg), mp("0.1352337788608800880984225267065138367580953268966777768")),
            tol);
  cfg.rope_scaling->mscale_all_dim = "0.707";
  EXPECT_LT(testdata::relative_error(
                mla_scale(cfg), mp("0.1147213867929261019870166319692240392062381884986364051")),
            tol);
  cfg.rope_scaling->mscale_all_dim = {};
  EXPECT_EQ(mla_scale(cfg), mp(1) / sqrt(mp(192)));
  cfg.rope_scaling = RopeScaling{.kind = RopeScalingKind::kLlama3,
                                 .factor = "8",
                                 .original_context = 8192,
                                 .low_freq_factor = "1",
                                 .high_freq_factor = "4"};
  EXPECT_EQ(mla_scale(cfg), mp(1) / sqrt(mp(192)));
}

// F16 for MLA: decoding token by token with the latent cache gives, bit for bit, the rows of the
// absorbed prefill (same operations in the same order), and the naive result to 1e-40 in mp.
template <class T>
void check_decode(const nlohmann::json& c) {
  const MlaConfig cfg = mla_config(c);
  const MlaAbsorbedWeights<T> a = mla_absorb(mla_weights<T>(c["weights"]), cfg);
  const Mat<T> h = hex_matrix<T>(c["h"]);
  const MlaAbsorbedResult<T> prefill = mla_absorbed(h, a, cfg);
  MlaLatentCache<T> cache;
  for (int64_t t = 0; t < h.rows; ++t) {
    const std::vector<T> u = mla_absorbed_decode_step<T>(h.row(t), a, cfg, cache);
    ASSERT_EQ(cache.length(), t + 1);
    ASSERT_EQ(static_cast<int64_t>(u.size()), prefill.u.cols);
    for (int64_t col = 0; col < prefill.u.cols; ++col) {
      if constexpr (is_sim_v<T>) {
        EXPECT_EQ(u[col].bits(), prefill.u(t, col).bits()) << t << "," << col;
      } else {
        EXPECT_EQ(u[col], prefill.u(t, col)) << t << "," << col;
      }
    }
  }
  EXPECT_EQ(cache.c_kv.data, prefill.cache.c_kv.data);
  EXPECT_EQ(cache.k_r.data, prefill.cache.k_r.data);
}

TEST(Mla, AbsorbedDecodeEqualsPrefillAndNaive) {
  for (const auto& c : data()["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    check_decode<mp>(c);
    check_decode<bfloat16>(c);
    check_decode<double>(c);
    const MlaConfig cfg = mla_config(c);
    const MlaWeights<mp> w = mla_weights<mp>(c["weights"]);
    const MlaAbsorbedWeights<mp> a = mla_absorb(w, cfg);
    const Mat<mp> h = hex_matrix<mp>(c["h"]);
    MlaLatentCache<mp> cache;
    Mat<mp> decoded(0, cfg.model_dim);
    for (int64_t t = 0; t < h.rows; ++t) {
      const std::vector<mp> u = mla_absorbed_decode_step<mp>(h.row(t), a, cfg, cache);
      decoded.data.insert(decoded.data.end(), u.begin(), u.end());
      ++decoded.rows;
    }
    expect_relative(decoded, mla_naive(h, w, cfg).u, mp("1e-40"));
  }
}

// C23: the absorbed form caches d_c + d_h^R numbers per token; the naive one k^C and v^C of
// every head plus the shared k^R, 2·h·d_h + d_h^R (C23's 2·h·d_h is the MHA baseline without
// the decoupled RoPE key).
TEST(Mla, CacheSizes) {
  for (const auto& c : data()["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const MlaConfig cfg = mla_config(c);
    const MlaWeights<double> w = mla_weights<double>(c["weights"]);
    const Mat<double> h = hex_matrix<double>(c["h"]);
    const int64_t t = h.rows;
    const MlaNaiveCache<double> naive = mla_naive(h, w, cfg).cache;
    const MlaLatentCache<double> latent = mla_absorbed(h, mla_absorb(w, cfg), cfg).cache;
    EXPECT_EQ(naive.length(), t);
    EXPECT_EQ(latent.length(), t);
    EXPECT_EQ(naive.numel(), t * (2 * cfg.heads * cfg.head_dim + cfg.rope_dim));
    EXPECT_EQ(latent.numel(), t * (cfg.kv_latent_dim + cfg.rope_dim));
    // Both keep the same k^R: RoPE(h W^KR), computed the same way.
    EXPECT_EQ(naive.k_r.data, latent.k_r.data);
  }
}

// Errors against max|u| (components may cancel). float128: its unit roundoff 1e-34 through a
// chain of ~6 dot products of length ≤ 16 and a softmax stays below 1e-30. double: the bound of
// testdata::mla_error_bound at u = 2^-53.
TEST(Mla, Float128AndDoubleNearMp) {
  for (const auto& c : data()["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const MlaConfig cfg = mla_config(c);
    const Mat<mp> want = expected_matrix(c["u"]);
    const mp scale = testdata::max_abs(want);
    const Mat<float128> u128 =
        mla_naive(hex_matrix<float128>(c["h"]), mla_weights<float128>(c["weights"]), cfg).u;
    EXPECT_LT(testdata::max_abs_diff(u128, want), mp("1e-30") * scale);
    const MlaWeights<double> w = mla_weights<double>(c["weights"]);
    const Mat<double> h = hex_matrix<double>(c["h"]);
    const mp bound = testdata::mla_error_bound(ldexp(mp(1), -53), cfg, h.rows) * scale;
    EXPECT_LE(testdata::max_abs_diff(mla_naive(h, w, cfg).u, want), bound);
    EXPECT_LE(testdata::max_abs_diff(mla_absorbed(h, mla_absorb(w, cfg), cfg).u, want), bound);
  }
}

TEST(Mla, RejectsBadArguments) {
  const auto& c = data()["cases"][0];
  MlaConfig cfg = mla_config(c);
  MlaWeights<double> w = mla_weights<double>(c["weights"]);
  const Mat<double> h = hex_matrix<double>(c["h"]);
  EXPECT_THROW(mla_naive(Mat<double>(2, cfg.model_dim + 1), w, cfg), std::invalid_argument);
  MlaConfig odd = cfg;
  odd.rope_dim = 3;
  EXPECT_THROW(mla_naive(h, w, odd), std::invalid_argument);
  MlaWeights<double> bad = w;
  bad.w_uk = Mat<double>(cfg.kv_latent_dim, 3);
  try {
    mla_naive(h, bad, cfg);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("w_uk"), std::string::npos) << e.what();
  }
  EXPECT_THROW(mla_absorb(bad, cfg), std::invalid_argument);
  MlaLatentCache<double> cache;
  EXPECT_THROW(
      mla_absorbed_decode_step<double>(std::vector<double>(3, 0.0), mla_absorb(w, cfg), cfg, cache),
      std::invalid_argument);
  EXPECT_EQ(cache.length(), 0);
}

}  // namespace
}  // namespace lmo::ref
