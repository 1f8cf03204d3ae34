// Identities of attention (C13–C17): GQA/MQA as MHA with repeated KV heads, sliding window and
// document masks, F16 KV-cache decoding, F17 online softmax and tiled attention.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "reference/attention.h"
#include "reference/attention_online.h"
#include "reference/kv_cache.h"
#include "reference/softmax.h"
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

const nlohmann::json& case_named(const std::string& name) {
  for (const auto& c : data()["cases"]) {
    if (c["name"] == name) return c;
  }
  throw std::runtime_error("no case " + name);
}

template <class T>
void expect_bitwise_equal(const Mat<T>& a, const Mat<T>& b) {
  ASSERT_EQ(a.rows, b.rows);
  ASSERT_EQ(a.cols, b.cols);
  for (size_t i = 0; i < a.data.size(); ++i) {
    if constexpr (is_sim_v<T>) {
      EXPECT_EQ(a.data[i].bits(), b.data[i].bits()) << i;
    } else {
      EXPECT_EQ(a.data[i], b.data[i]) << i;
    }
  }
}

// Columns [first, first + n) of m.
template <class T>
Mat<T> columns(const Mat<T>& m, int64_t first, int64_t n) {
  Mat<T> out(m.rows, n);
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t c = 0; c < n; ++c) out(r, c) = m(r, first + c);
  }
  return out;
}

// K or V with each of its g heads repeated h/g times, as MHA would store them.
template <class T>
Mat<T> repeat_kv(const Mat<T>& m, int64_t g, int64_t h, int64_t width) {
  Mat<T> out(m.rows, h * width);
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t head = 0; head < h; ++head) {
      for (int64_t c = 0; c < width; ++c) out(r, head * width + c) = m(r, head * g / h * width + c);
    }
  }
  return out;
}

// C13. In this reference GQA and MHA-with-repeated-heads perform the same operations in the
// same order, so they agree bit for bit, in mp and in bfloat16.
template <class T>
void check_gqa_is_repeated_mha(const nlohmann::json& c) {
  AttentionConfig cfg = attention_config(c);
  const Mat<T> q = hex_matrix<T>(c["q"]), k = hex_matrix<T>(c["k"]), v = hex_matrix<T>(c["v"]);
  const Mat<T> grouped = attention(q, k, v, cfg);
  const int64_t g = cfg.kv_heads;
  cfg.kv_heads = cfg.heads;
  const Mat<T> mha = attention(q, repeat_kv(k, g, cfg.heads, cfg.head_dim),
                               repeat_kv(v, g, cfg.heads, cfg.v_dim()), cfg);
  expect_bitwise_equal(grouped, mha);
}

TEST(AttentionClaims, GqaAndMqaEqualMhaWithRepeatedKvHeads) {
  for (const char* name : {"gqa_causal", "mqa_causal", "causal_offset", "gqa_window_cap"}) {
    SCOPED_TRACE(name);
    check_gqa_is_repeated_mha<mp>(case_named(name));
    check_gqa_is_repeated_mha<bfloat16>(case_named(name));
  }
}

// C13 with g = h: MHA is h independent single-head attentions, one per column block.
TEST(AttentionClaims, GqaWithGEqualToHIsHeadByHeadAttention) {
  const auto& c = case_named("mha");
  const AttentionConfig cfg = attention_config(c);
  ASSERT_EQ(cfg.kv_heads, cfg.heads);
  const Mat<mp> q = hex_matrix<mp>(c["q"]), k = hex_matrix<mp>(c["k"]), v = hex_matrix<mp>(c["v"]);
  const Mat<mp> all = attention(q, k, v, cfg);
  AttentionConfig one = cfg;
  one.heads = one.kv_heads = 1;
  const int64_t d = cfg.head_dim;
  for (int64_t head = 0; head < cfg.heads; ++head) {
    const Mat<mp> o =
        attention(columns(q, head * d, d), columns(k, head * d, d), columns(v, head * d, d), one);
    expect_bitwise_equal(o, columns(all, head * d, d));
  }
  // And the mpmath values, to 1e-40, for the record.
  const Mat<mp> want = expected_matrix(c["expected"]);
  for (size_t i = 0; i < all.data.size(); ++i) {
    EXPECT_LT(testdata::relative_error(all.data[i], want.data[i]), mp("1e-40"));
  }
}

// C14 (first half): a window of at least T keys hides nothing the causal mask shows.
TEST(AttentionClaims, SlidingWindowOfAtLeastTIsCausal) {
  const auto& c = case_named("gqa_causal");
  AttentionConfig cfg = attention_config(c);
  const Mat<bfloat16> q = hex_matrix<bfloat16>(c["q"]), k = hex_matrix<bfloat16>(c["k"]),
                      v = hex_matrix<bfloat16>(c["v"]);
  const Mat<bfloat16> causal = attention(q, k, v, cfg);
  cfg.mask = MaskKind::kSlidingWindow;
  for (int64_t w : {k.rows, k.rows + 3}) {
    cfg.window = w;
    expect_bitwise_equal(attention(q, k, v, cfg), causal);
  }
  cfg.window = k.rows - 1;  // now the first key drops out of the last row
  EXPECT_NE(attention(q, k, v, cfg)(q.rows - 1, 0).bits(), causal(q.rows - 1, 0).bits());
}

// C15: the document mask equals causal attention run on each document alone.
TEST(AttentionClaims, DocumentMaskEqualsSeparateDocuments) {
  const auto& c = case_named("document");
  const AttentionConfig cfg = attention_config(c);
  const Mat<mp> q = hex_matrix<mp>(c["q"]), k = hex_matrix<mp>(c["k"]), v = hex_matrix<mp>(c["v"]);
  const Mat<mp> all = attention(q, k, v, cfg);
  AttentionConfig causal = cfg;
  causal.mask = MaskKind::kCausal;
  causal.document_ids.clear();
  const std::vector<int64_t>& doc = cfg.document_ids;
  for (size_t begin = 0; begin < doc.size();) {
    size_t end = begin;
    while (end < doc.size() && doc[end] == doc[begin]) ++end;
    auto rows = [&](const Mat<mp>& m) {
      const int64_t n = static_cast<int64_t>(end - begin);
      return Mat<mp>(n, m.cols,
                     std::vector<mp>(m.data.begin() + static_cast<int64_t>(begin) * m.cols,
                                     m.data.begin() + static_cast<int64_t>(end) * m.cols));
    };
    expect_bitwise_equal(attention(rows(q), rows(k), rows(v), causal), rows(all));
    begin = end;
  }
}

// C16: decoding one token at a time against the cache reproduces every row of full causal
// attention. Same keys, same order, same arithmetic: bit for bit in every format.
template <class T>
void check_decode_reproduces_causal(const nlohmann::json& c) {
  const AttentionConfig cfg = attention_config(c);
  const Mat<T> q = hex_matrix<T>(c["q"]), k = hex_matrix<T>(c["k"]), v = hex_matrix<T>(c["v"]);
  const Mat<T> full = attention(q, k, v, cfg);
  KvCache<T> cache(cfg.kv_heads, cfg.head_dim, cfg.v_dim());
  for (int64_t t = 0; t < q.rows; ++t) {
    const std::vector<T> o = decode_step<T>(q.row(t), k.row(t), v.row(t), cache, cfg);
    ASSERT_EQ(cache.length(), t + 1);
    const Mat<T> row(1, full.cols, std::vector<T>(full.row(t).begin(), full.row(t).end()));
    expect_bitwise_equal(Mat<T>(1, full.cols, o), row);
  }
  EXPECT_EQ(cache.numel(), q.rows * cfg.kv_heads * (cfg.head_dim + cfg.v_dim()));
}

TEST(KvCache, DecodeStepsReproduceEveryRowOfCausalAttention) {
  for (const char* name : {"gqa_causal", "mqa_causal", "value_dim_and_scale", "soft_cap",
                           "sliding_window", "gqa_window_cap"}) {
    SCOPED_TRACE(name);
    check_decode_reproduces_causal<mp>(case_named(name));
    check_decode_reproduces_causal<float16>(case_named(name));
    check_decode_reproduces_causal<fp8_e4m3>(case_named(name));
  }
  // And against mpmath directly: the last decode step of gqa_causal.
  const auto& c = case_named("gqa_causal");
  const AttentionConfig cfg = attention_config(c);
  const Mat<mp> q = hex_matrix<mp>(c["q"]), k = hex_matrix<mp>(c["k"]), v = hex_matrix<mp>(c["v"]);
  KvCache<mp> cache(cfg.kv_heads, cfg.head_dim, cfg.v_dim());
  std::vector<mp> o;
  for (int64_t t = 0; t < q.rows; ++t)
    o = decode_step<mp>(q.row(t), k.row(t), v.row(t), cache, cfg);
  const Mat<mp> want = expected_matrix(c["expected"]);
  for (int64_t col = 0; col < want.cols; ++col) {
    EXPECT_LT(testdata::relative_error(o[col], want(want.rows - 1, col)), mp("1e-40"));
  }
}

// Prefill of a prompt in chunks (including a chunk of one) equals the prompt at once.
TEST(KvCache, ChunkedPrefillEqualsFullPrefill) {
  const auto& c = case_named("gqa_causal");
  const AttentionConfig cfg = attention_config(c);
  const Mat<bfloat16> q = hex_matrix<bfloat16>(c["q"]), k = hex_matrix<bfloat16>(c["k"]),
                      v = hex_matrix<bfloat16>(c["v"]);
  KvCache<bfloat16> whole(cfg.kv_heads, cfg.head_dim, cfg.v_dim());
  const Mat<bfloat16> full = prefill(q, k, v, whole, cfg);
  expect_bitwise_equal(full, attention(q, k, v, cfg));
  KvCache<bfloat16> chunked(cfg.kv_heads, cfg.head_dim, cfg.v_dim());
  auto rows = [](const Mat<bfloat16>& m, int64_t b, int64_t e) {
    return Mat<bfloat16>(
        e - b, m.cols,
        std::vector<bfloat16>(m.data.begin() + b * m.cols, m.data.begin() + e * m.cols));
  };
  std::vector<bfloat16> got;
  for (auto [b, e] : {std::pair<int64_t, int64_t>{0, 3}, {3, 4}, {4, 6}}) {
    const Mat<bfloat16> o = prefill(rows(q, b, e), rows(k, b, e), rows(v, b, e), chunked, cfg);
    got.insert(got.end(), o.data.begin(), o.data.end());
  }
  expect_bitwise_equal(Mat<bfloat16>(full.rows, full.cols, got), full);
  expect_bitwise_equal(chunked.k, whole.k);
}

TEST(KvCache, RejectsMismatchesAndLeavesTheCacheUnchanged) {
  AttentionConfig cfg;
  cfg.heads = 2;
  cfg.kv_heads = 1;
  cfg.head_dim = 2;
  cfg.mask = MaskKind::kCausal;
  KvCache<double> cache(1, 2, 2);
  const std::vector<double> q(4, 0.5), kv(2, 0.25), bad(3, 0.25);
  EXPECT_THROW(decode_step<double>(q, bad, kv, cache, cfg), std::invalid_argument);
  EXPECT_THROW(decode_step<double>(std::vector<double>(3, 0.5), kv, kv, cache, cfg),
               std::invalid_argument);
  EXPECT_EQ(cache.length(), 0);
  cfg.mask = MaskKind::kNone;
  EXPECT_THROW(decode_step<double>(q, kv, kv, cache, cfg), std::invalid_argument);
  cfg.mask = MaskKind::kCausal;
  cfg.kv_heads = 2;
  cfg.heads = 2;
  EXPECT_THROW(decode_step<double>(q, kv, kv, cache, cfg), std::invalid_argument);
  EXPECT_EQ(cache.length(), 0);
  EXPECT_THROW(KvCache<double>(0, 2, 2), std::invalid_argument);
}

// F17 standalone: online softmax and log-sum-exp against mpmath for every tile size.
TEST(OnlineSoftmax, MatchesMpmathForEveryTileSize) {
  const auto& row = data()["softmax_row"];
  std::vector<mp> z;
  for (const auto& x : row["z"]) z.push_back(mp(testdata::exact_double(x)));
  const std::vector<mp> want = testdata::expected_vector(row["softmax"]);
  const mp want_lse = testdata::expected(row["logsumexp"]);
  for (int64_t tile = 1; tile <= static_cast<int64_t>(z.size()) + 1; ++tile) {
    SCOPED_TRACE(tile);
    const std::vector<mp> p = online_softmax<mp>(z, tile);
    for (size_t i = 0; i < z.size(); ++i) {
      EXPECT_LT(testdata::relative_error(p[i], want[i]), mp("1e-40")) << i;
    }
    EXPECT_LT(testdata::relative_error(online_logsumexp<mp>(z, tile), want_lse), mp("1e-40"));
  }
  EXPECT_THROW(online_softmax<mp>(z, 0), std::invalid_argument);
  EXPECT_THROW(online_logsumexp<mp>(std::vector<mp>{}, 1), std::invalid_argument);
}

// F17 in a narrow format: the online normalizer is a different sequence of roundings from the
// two-pass softmax, so some tile size gives a different bfloat16 result (what drift audits
// measure), while with one tile covering the row it is the two-pass evaluation exactly.
TEST(OnlineSoftmax, TileSizeChangesBfloat16Results) {
  // 16 logits in [−3, 3] plus a rising trend (so the running max moves often), from a fixed
  // linear congruential sequence.
  std::vector<bfloat16> z;
  uint32_t x = 12345;
  for (int i = 0; i < 16; ++i) {
    x = x * 1103515245u + 12345u;
    z.push_back(bfloat16(static_cast<double>(x >> 8) / 16777216.0 * 6.0 - 3.0 + 0.25 * i));
  }
  const std::vector<bfloat16> whole = online_softmax<bfloat16>(z, static_cast<int64_t>(z.size()));
  const std::vector<bfloat16> two_pass = softmax<bfloat16>(std::span<const bfloat16>(z));
  for (size_t i = 0; i < z.size(); ++i) EXPECT_EQ(whole[i].bits(), two_pass[i].bits()) << i;
  int differing_tiles = 0;
  for (int64_t tile = 1; tile < static_cast<int64_t>(z.size()); ++tile) {
    const std::vector<bfloat16> p = online_softmax<bfloat16>(z, tile);
    bool differs = false;
    for (size_t i = 0; i < z.size(); ++i) differs |= p[i].bits() != whole[i].bits();
    differing_tiles += differs;
  }
  EXPECT_GT(differing_tiles, 0);
}

// C17: tiled (FlashAttention-style) attention equals untiled attention for every key tile size,
// to 1e-40 in mp (both are within ~1e-49 of the exact value), on every case: all masks, GQA,
// soft-cap, d_v ≠ d, queries offset from keys.
TEST(AttentionTiled, EqualsUntiledForEveryTileSize) {
  for (const auto& c : data()["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const AttentionConfig cfg = attention_config(c);
    const Mat<mp> q = hex_matrix<mp>(c["q"]), k = hex_matrix<mp>(c["k"]),
                  v = hex_matrix<mp>(c["v"]);
    const Mat<mp> untiled = attention(q, k, v, cfg);
    for (int64_t tile = 1; tile <= k.rows + 1; ++tile) {
      SCOPED_TRACE(tile);
      const Mat<mp> tiled = attention_tiled(q, k, v, cfg, tile);
      for (size_t i = 0; i < tiled.data.size(); ++i) {
        EXPECT_LT(testdata::relative_error(tiled.data[i], untiled.data[i]), mp("1e-40")) << i;
      }
    }
  }
}

// F17 in a narrow format: tiled attention is a different sequence of roundings (it divides by l
// once at the end, and rescales partial sums), so its bfloat16 outputs differ from the untiled
// ones for some tile sizes: what drift audits study.
TEST(AttentionTiled, TileSizeChangesBfloat16Outputs) {
  const auto& c = case_named("gqa_causal");
  const AttentionConfig cfg = attention_config(c);
  const Mat<bfloat16> q = hex_matrix<bfloat16>(c["q"]), k = hex_matrix<bfloat16>(c["k"]),
                      v = hex_matrix<bfloat16>(c["v"]);
  const Mat<bfloat16> untiled = attention(q, k, v, cfg);
  int differing = 0;
  for (int64_t tile = 1; tile <= k.rows; ++tile) {
    const Mat<bfloat16> tiled = attention_tiled(q, k, v, cfg, tile);
    for (size_t i = 0; i < tiled.data.size(); ++i) differing += tiled.data[i] != untiled.data[i];
  }
  EXPECT_GT(differing, 0);
}

// The literal softmax (no max subtraction) has an online form too: m stays 0, nothing is
// rescaled. In mp it equals the untiled literal evaluation for every tile size.
TEST(AttentionTiled, LiteralSoftmaxEqualsUntiledInMp) {
  const auto& c = case_named("soft_cap");
  AttentionConfig cfg = attention_config(c);
  cfg.subtract_max = false;
  const Mat<mp> q = hex_matrix<mp>(c["q"]), k = hex_matrix<mp>(c["k"]), v = hex_matrix<mp>(c["v"]);
  const Mat<mp> untiled = attention(q, k, v, cfg);
  const Mat<mp> want = expected_matrix(c["expected"]);
  for (size_t i = 0; i < untiled.data.size(); ++i) {
    EXPECT_LT(testdata::relative_error(untiled.data[i], want.data[i]), mp("1e-40"));
  }
  for (int64_t tile = 1; tile <= k.rows; ++tile) {
    const Mat<mp> tiled = attention_tiled(q, k, v, cfg, tile);
    for (size_t i = 0; i < tiled.data.size(); ++i) {
      EXPECT_LT(testdata::relative_error(tiled.data[i], untiled.data[i]), mp("1e-40"));
    }
  }
}

TEST(AttentionTiled, FullyMaskedRowsAreNaNAndTileZeroIsRejected) {
  AttentionConfig cfg;
  cfg.head_dim = 1;
  cfg.mask = MaskKind::kCausal;
  const Mat<double> q(3, 1, {1.0, 2.0, 3.0}), k(2, 1, {0.5, -0.5}), v(2, 1, {1.0, 2.0});
  const Mat<double> o = attention_tiled(q, k, v, cfg, 1);
  EXPECT_TRUE(std::isnan(o(0, 0)));
  EXPECT_FALSE(std::isnan(o(1, 0)));
  EXPECT_THROW(attention_tiled(q, k, v, cfg, 0), std::invalid_argument);
}

}  // namespace
}  // namespace lmo::ref
