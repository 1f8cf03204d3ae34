// Attention (F15), tiled attention (F17), KV-cache decoding (F16) and the attention gradient on
// all nine number types. Inputs are the mpmath cases rounded to the type; the reference for the
// error bound is the mp result on those same rounded inputs, so only the type's arithmetic is
// measured.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "reference/attention.h"
#include "reference/attention_grad.h"
#include "reference/attention_online.h"
#include "reference/kv_cache.h"
#include "tests/support/typed_numbers.h"
#include "tests/support/attention_cases.h"

namespace lmo::ref {
namespace {

using testdata::all_finite;
using testdata::unit_roundoff;
using testdata::widen;

using testdata::attention_config;
using testdata::hex_matrix;

const nlohmann::json& data() {
  static const nlohmann::json d = testdata::load("attention.json");
  return d;
}

template <class T>
class AttentionTypes : public ::testing::Test {};

TYPED_TEST_SUITE(AttentionTypes, testdata::AllNumberTypes);

// Cases covering GQA + sliding window + soft-cap, MQA, the document mask, d_v ≠ d with an
// explicit scale, and queries offset from the keys.
const char* const kCases[] = {"gqa_window_cap", "mqa_causal", "document", "value_dim_and_scale",
                              "causal_offset"};

const nlohmann::json& case_named(const std::string& name) {
  for (const auto& c : data()["cases"]) {
    if (c["name"] == name) return c;
  }
  throw std::runtime_error("no case " + name);
}

TYPED_TEST(AttentionTypes, AttentionAndTiledAttentionWithinTheErrorBound) {
  using T = TypeParam;
  for (const char* name : kCases) {
    SCOPED_TRACE(name);
    const auto& c = case_named(name);
    const AttentionConfig cfg = attention_config(c);
    const Mat<T> q = hex_matrix<T>(c["q"]), k = hex_matrix<T>(c["k"]), v = hex_matrix<T>(c["v"]);
    const Mat<mp> want = attention(widen(q), widen(k), widen(v), cfg);
    const mp bound = testdata::attention_error_bound(unit_roundoff<T>(), q, k, v, cfg);
    const Mat<T> o = attention(q, k, v, cfg);
    EXPECT_TRUE(all_finite(o));
    EXPECT_LE(testdata::max_abs_diff(o, want), bound);
    for (int64_t tile : {int64_t{1}, int64_t{3}, k.rows}) {
      SCOPED_TRACE(tile);
      const Mat<T> tiled = attention_tiled(q, k, v, cfg, tile);
      EXPECT_TRUE(all_finite(tiled));
      EXPECT_LE(testdata::max_abs_diff(tiled, want), bound);
    }
  }
}

// C16 in every format: decoding reproduces the rows of causal attention bit for bit.
TYPED_TEST(AttentionTypes, DecodeStepsReproduceCausalRowsExactly) {
  using T = TypeParam;
  const auto& c = case_named("gqa_window_cap");
  const AttentionConfig cfg = attention_config(c);
  const Mat<T> q = hex_matrix<T>(c["q"]), k = hex_matrix<T>(c["k"]), v = hex_matrix<T>(c["v"]);
  const Mat<T> full = attention(q, k, v, cfg);
  KvCache<T> cache(cfg.kv_heads, cfg.head_dim, cfg.v_dim());
  for (int64_t t = 0; t < q.rows; ++t) {
    const std::vector<T> o = decode_step<T>(q.row(t), k.row(t), v.row(t), cache, cfg);
    for (int64_t col = 0; col < full.cols; ++col) {
      EXPECT_EQ(to_mp(o[col]), to_mp(full(t, col))) << t << "," << col;
    }
  }
}

// The gradient runs on every type and stays finite on these well-scaled inputs (its accuracy is
// checked in mp against central differences in attention_grad_test.cc).
TYPED_TEST(AttentionTypes, BackwardRunsAndIsFinite) {
  using T = TypeParam;
  for (const char* name : {"gqa_window_cap", "value_dim_and_scale"}) {
    SCOPED_TRACE(name);
    const auto& c = case_named(name);
    const AttentionConfig cfg = attention_config(c);
    const Mat<T> q = hex_matrix<T>(c["q"]), k = hex_matrix<T>(c["k"]), v = hex_matrix<T>(c["v"]);
    Mat<T> d_out(q.rows, cfg.heads * cfg.v_dim());
    for (size_t i = 0; i < d_out.data.size(); ++i) {
      d_out.data[i] = convert<T>(static_cast<double>(static_cast<int>(i % 7) - 3) / 4.0);
    }
    const AttentionGrads<T> g = attention_backward(q, k, v, d_out, cfg);
    EXPECT_TRUE(all_finite(g.dq));
    EXPECT_TRUE(all_finite(g.dk));
    EXPECT_TRUE(all_finite(g.dv));
  }
}

// A bfloat16 kernel that accumulates in float (T = bfloat16, Acc = float): within the bfloat16
// bound, and a tiled run in that mode too.
TEST(AttentionMixed, Bfloat16WithFloatAccumulation) {
  const auto& c = case_named("gqa_window_cap");
  const AttentionConfig cfg = attention_config(c);
  const Mat<bfloat16> q = hex_matrix<bfloat16>(c["q"]), k = hex_matrix<bfloat16>(c["k"]),
                      v = hex_matrix<bfloat16>(c["v"]);
  const Mat<mp> want = attention(widen(q), widen(k), widen(v), cfg);
  const mp bound = testdata::attention_error_bound(unit_roundoff<bfloat16>(), q, k, v, cfg);
  EXPECT_LE(testdata::max_abs_diff(attention<bfloat16, float>(q, k, v, cfg), want), bound);
  EXPECT_LE(testdata::max_abs_diff(attention_tiled<bfloat16, float>(q, k, v, cfg, 2), want), bound);
}

}  // namespace
}  // namespace lmo::ref
