// fast/learned_position.h, fast/shaw_logits.h and fast/t5_bias.h against the exact reference:
//  - the oracle's ops learned_position, shaw_logits and t5_bias (reference/positional.h in mp on
//    the same stored inputs), judged with the policy table's rows, on every storage format and
//    every supported Highway target, through the fast backend's adapters;
//  - learned_position in f32: every value the correctly rounded sum; shaw_logits on small
//    integer inputs, where every f32 operation is exact: every logit equals the reference's
//    exactly (any wrong table row or clip shows), over band, clip and block edges;
//  - T5's bucket: kernels::T5Buckets equals the reference's t5_relative_position_bucket (exact
//    integer comparisons) for every relative position in ±2^20, on settings whose boundaries
//    are exact integers (where a float32 log lands one bucket low), and at every bucket boundary
//    of settings with up to 2048 log buckets;
//  - results bitwise identical for 1, 2 and 7 threads, over sizes that span several chunks;
//  - bad arguments: out-of-range ids and positions, null pointers, negative sizes and bucket
//    parameters throw std::invalid_argument naming the argument.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "fast/learned_position.h"
#include "fast/shaw_logits.h"
#include "fast/t5_bias.h"
#include "oracle/backends/fast_adapters.h"
#include "oracle/ops/positional.h"
#include "reference/positional.h"
#include "tests/support/fast_cases.h"
#include "tests/support/oracle_harness.h"

namespace lmo::fast {
namespace {

using namespace lmo::testdata;
using nlohmann::json;
using ref::mp;

using Adapter = oracle::fast_adapters::Adapter;

// One op case (the oracle's parameters) in storage s: its inputs, exact values and naive run.
struct Prepared {
  Prepared(const std::string& op, const json& params, Storage s)
      : h(json{{"id", "fast/" + op},
               {"op", op},
               {"seed", 7301},
               {"formats", {std::string(storage_name(s))}},
               {"params", params}},
          format_of(s)),
        exact(h.op().exact(h.inputs())[0].values),
        naive(h.op().simulated(ref::Format::f32, h.inputs())[0].values) {}
  lmo::testing::Harness h;
  std::vector<mp> exact;
  std::vector<double> naive;
};

Adapter adapter_of(const std::string& op) {
  if (op == "learned_position") return oracle::fast_adapters::run_learned_position;
  if (op == "shaw_logits") return oracle::fast_adapters::run_shaw_logits;
  return oracle::fast_adapters::run_t5_bias;
}

// Runs the op's fast kernel through its adapter into y (armed first); returns y's bytes.
std::vector<uint8_t> run(const Prepared& c, Storage s, std::vector<oracle::GuardedBuffer>& y) {
  y[0].arm();
  adapter_of(c.h.c().op)(c.h.op(), s, c.h.inputs(), y);
  return bytes_of(y[0]);
}

// The kernel on every supported target, judged with the op's policy; exact_store: also every
// stored value the exact value rounded once to s (the policy's ulp 0 without its margin).
void expect_passes(const std::string& op, const json& params, Storage s, const std::string& what,
                   bool exact_store = false) {
  const Prepared c(op, params, s);
  std::vector<oracle::GuardedBuffer> y;
  y.emplace_back(dtype_of(s), c.h.op().outputs()[0].shape);
  for_each_target([&](const std::string& target) {
    run(c, s, y);
    const std::string where = target + " " + std::string(storage_name(s)) + " " + what;
    expect_judged(op, "", c.exact, y[0], c.naive, where);
    if (!exact_store) return;
    ref::Tensor want(dtype_of(s), c.h.op().outputs()[0].shape);
    for (int64_t i = 0; i < want.numel(); ++i) {
      want.set_bits(i, ref::encode(format_of(s), c.exact[static_cast<size_t>(i)]));
    }
    const std::vector<uint8_t> got = bytes_of(y[0]);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want.bytes().begin()))
        << where << ": a stored value differs from the correctly rounded one";
  });
  expect_thread_invariant([&] { return run(c, s, y); }, op + " " + what);
}

// ---- learned_position ----

TEST(FastLearnedPosition, EveryStorageAndTarget) {
  // d 75: rows end in a partial vector on every target (and an odd bf16 pair); 300 tokens of 75
  // run in three chunks of 109 tokens.
  const json small = {{"tokens", 300}, {"d", 75}, {"vocab", 50}, {"max_positions", 300}};
  // Position rows past 2^16.
  const json far = {
      {"tokens", 40}, {"d", 8}, {"vocab", 64}, {"min_position", 65536}, {"max_positions", 66000}};
  for (Storage s : kAllStorages) {
    expect_passes("learned_position", small, s, "d=75", s == Storage::f32);
  }
  expect_passes("learned_position", far, Storage::f32, "positions>=2^16", true);
}

// ---- shaw_logits ----

TEST(FastShawLogits, EveryStorageAndTarget) {
  const std::vector<std::pair<std::string, json>> shapes = {
      {"transformer-base k16",
       {{"n_q", 48}, {"n_k", 48}, {"d_k", 64}, {"max_relative_position", 16}}},
      {"odd widths", {{"n_q", 9}, {"n_k", 70}, {"d_k", 7}, {"max_relative_position", 3}}},
      {"k 0, d 1", {{"n_q", 30}, {"n_k", 5}, {"d_k", 1}, {"max_relative_position", 0}}},
      {"k beyond the lengths",
       {{"n_q", 20}, {"n_k", 31}, {"d_k", 16}, {"max_relative_position", 100}}},
      {"three row blocks", {{"n_q", 150}, {"n_k", 24}, {"d_k", 8}, {"max_relative_position", 5}}},
  };
  for (const auto& [what, params] : shapes) {
    for (Storage s : kAllStorages) expect_passes("shaw_logits", params, s, what);
  }
}

// Small integers (|value| ≤ 4, d_k = 4 so that √d_k = 2): every product, sum and the division
// by 2 are exact in f32, whatever the summation order, so every logit must equal the
// reference's exactly; each table row holds distinct values, so a wrong row or clip shows.
TEST(FastShawLogits, ExactOnIntegerInputs) {
  struct Shape {
    int64_t n_q, n_k, kmax;
  };
  const int64_t dk = 4;
  for (const Shape& sh : {Shape{7, 12, 3}, Shape{12, 7, 2}, Shape{5, 5, 0}, Shape{6, 9, 20},
                          Shape{150, 40, 9}, Shape{3, 300, 4}}) {
    const auto fill = [](int64_t n, int64_t seed) {
      std::vector<float> v(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        v[static_cast<size_t>(i)] = static_cast<float>((i * 7 + seed * 3) % 9 - 4);
      return v;
    };
    const std::vector<float> q = fill(sh.n_q * dk, 1), k = fill(sh.n_k * dk, 2);
    std::vector<float> rel(static_cast<size_t>((2 * sh.kmax + 1) * dk));
    for (size_t i = 0; i < rel.size(); ++i)
      rel[i] = static_cast<float>(static_cast<int64_t>(i % 9) - 4) +
               0.5f * static_cast<float>(i / dk % 2);
    const ref::Mat<mp> mq(sh.n_q, dk, std::vector<mp>(q.begin(), q.end()));
    const ref::Mat<mp> mk(sh.n_k, dk, std::vector<mp>(k.begin(), k.end()));
    const ref::Mat<mp> mr(2 * sh.kmax + 1, dk, std::vector<mp>(rel.begin(), rel.end()));
    const ref::Mat<mp> want = ref::shaw_relative_logits_qk<mp>(mq, mk, mr, sh.kmax);
    std::vector<float> e(static_cast<size_t>(sh.n_q * sh.n_k));
    for_each_target([&](const std::string& target) {
      std::fill(e.begin(), e.end(), -1e30f);
      shaw_logits(Storage::f32, q.data(), k.data(), rel.data(), e.data(), sh.n_q, sh.n_k, dk,
                  sh.kmax);
      for (int64_t i = 0; i < sh.n_q; ++i) {
        for (int64_t j = 0; j < sh.n_k; ++j) {
          ASSERT_EQ(e[static_cast<size_t>(i * sh.n_k + j)], ref::to_double(want(i, j)))
              << target << " n_q " << sh.n_q << " n_k " << sh.n_k << " K " << sh.kmax << " at ("
              << i << ", " << j << ")";
        }
      }
    });
  }
}

// ---- t5_bias: the bucket ----

struct BucketRule {
  int64_t num_buckets, max_distance;
  bool bidirectional;
};

std::string name_of(const BucketRule& r) {
  return std::string(r.bidirectional ? "bidirectional" : "causal") + " num_buckets " +
         std::to_string(r.num_buckets) + " max_distance " + std::to_string(r.max_distance);
}

// Every relative position in [−2^20, 2^20] against the reference's exact bucket. The settings:
// T5's own (bidirectional and causal, 32, 128; thresholds 8·2^(m/2) and 16·2^(m/2), exact
// integers at even m), the erratum's (causal 36, 50: 30 = 18·(50/18)^(1/2)), boundaries that are
// all exact integers (bidirectional 32, 2048: 8·2^m; causal 32, 2^20: 16·2^m; causal 16, 3^8·8 =
// 52488: 8·3^m), and an irregular one (bidirectional 64, 1000).
TEST(FastT5Bias, BucketEqualsReferenceForEveryPositionWithin2To20) {
  const std::vector<BucketRule> rules = {{32, 128, true},  {32, 128, false},     {36, 50, false},
                                         {32, 2048, true}, {32, 1 << 20, false}, {16, 52488, false},
                                         {64, 1000, true}};
  constexpr int64_t kRange = int64_t{1} << 20;
  for (const BucketRule& r : rules) {
    const T5Buckets fast(r.num_buckets, r.max_distance, r.bidirectional);
    int64_t mismatches = 0;
    for (int64_t rel = -kRange; rel <= kRange; ++rel) {
      const int64_t want =
          ref::t5_relative_position_bucket(rel, r.bidirectional, r.num_buckets, r.max_distance);
      if (fast(rel) != want && mismatches++ < 5) {
        ADD_FAILURE() << name_of(r) << ": relative position " << rel << " bucket " << fast(rel)
                      << ", reference " << want;
      }
    }
    EXPECT_EQ(mismatches, 0) << name_of(r);
  }
}

// Many log buckets: the reference's cost grows with their number (E multiplications of E-power
// integers per call), so the comparison runs where the fast bucket changes: at every threshold
// t_m and at t_m − 1, both directions. The reference's bucket never decreases as n grows (the
// floor of an increasing function), and the fast one is constant between thresholds, so equal
// values on both sides of every threshold mean equal values at every n.
TEST(FastT5Bias, BucketEqualsReferenceOnBothSidesOfEveryThreshold) {
  const std::vector<BucketRule> rules = {{1024, int64_t{1} << 40, false},
                                         {2048, 3000, true},
                                         {1000, 999983, false},
                                         {256, int64_t{1} << 53, true}};
  for (const BucketRule& r : rules) {
    const T5Buckets fast(r.num_buckets, r.max_distance, r.bidirectional);
    const int64_t b = r.bidirectional ? r.num_buckets / 2 : r.num_buckets, me = b / 2;
    ASSERT_EQ(static_cast<int64_t>(fast.thresholds().size()), b - me - 1) << name_of(r);
    std::vector<int64_t> ns = {me - 1, me, r.max_distance - 1, r.max_distance};
    for (int64_t t : fast.thresholds()) {
      ns.push_back(t - 1);
      ns.push_back(t);
    }
    for (int64_t n : ns) {
      for (int64_t rel : {-n, n}) {
        ASSERT_EQ(fast(rel), ref::t5_relative_position_bucket(rel, r.bidirectional, r.num_buckets,
                                                              r.max_distance))
            << name_of(r) << ", relative position " << rel;
      }
    }
  }
}

// ---- t5_bias: the kernel ----

TEST(FastT5Bias, EveryStorageAndTarget) {
  const std::vector<std::pair<std::string, json>> shapes = {
      {"t5 encoder", {{"heads", 2}, {"bidirectional", true}, {"query_len", 32}, {"key_len", 256}}},
      {"decoder with offset",
       {{"heads", 2}, {"query_len", 120}, {"key_len", 100}, {"query_offset", 4000}}},
      {"erratum setting",
       {{"heads", 1},
        {"num_buckets", 36},
        {"max_distance", 50},
        {"query_len", 70},
        {"key_len", 65}}},
      {"one key", {{"heads", 4}, {"bidirectional", true}, {"query_len", 9}, {"key_len", 1}}},
  };
  for (const auto& [what, params] : shapes) {
    for (Storage s : kAllStorages) expect_passes("t5_bias", params, s, what, true);
  }
}

// ---- bad arguments ----

// fn throws std::invalid_argument whose message contains every fragment.
void expect_rejected(const std::function<void()>& fn, const std::vector<std::string>& fragments) {
  try {
    fn();
    ADD_FAILURE() << "no exception; expected one naming " << fragments.front();
  } catch (const std::invalid_argument& e) {
    for (const std::string& f : fragments) {
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos)
          << "message \"" << e.what() << "\" lacks \"" << f << "\"";
    }
  }
}

TEST(FastPositionalArguments, LearnedPositionIndicesAndPointers) {
  const std::vector<float> tokens(4 * 3, 1.0f), positions(5 * 3, 2.0f);
  std::vector<float> h(3 * 3);
  const std::vector<int64_t> good_ids = {0, 3, 1}, good_pos = {4, 0, 2};
  const auto call = [&](const std::vector<int64_t>& ids, const std::vector<int64_t>& pos) {
    learned_position(Storage::f32, tokens.data(), 4, positions.data(), 5, ids.data(), pos.data(),
                     h.data(), 3, 3);
  };
  call(good_ids, good_pos);
  EXPECT_EQ(h[3], 3.0f);
  expect_rejected([&] { call({0, 4, 1}, good_pos); }, {"token_ids[1] is 4", "< 4"});
  expect_rejected([&] { call({0, 1, -1}, good_pos); }, {"token_ids[2] is -1"});
  expect_rejected([&] { call(good_ids, {0, 5, 1}); }, {"positions[1] is 5", "< 5"});
  expect_rejected([&] { call(good_ids, {-7, 0, 1}); }, {"positions[0] is -7"});
  expect_rejected(
      [&] {
        learned_position(Storage::f32, nullptr, 4, positions.data(), 5, good_ids.data(),
                         good_pos.data(), h.data(), 3, 3);
      },
      {"token_table is null"});
  expect_rejected(
      [&] {
        learned_position(Storage::f32, tokens.data(), 4, positions.data(), 5, good_ids.data(),
                         nullptr, h.data(), 3, 3);
      },
      {"positions is null"});
  expect_rejected(
      [&] {
        learned_position(Storage::f32, tokens.data(), 4, positions.data(), 5, good_ids.data(),
                         good_pos.data(), h.data(), -1, 3);
      },
      {"tokens is -1"});
  expect_rejected(
      [&] {
        learned_position(Storage::f32, tokens.data(), 4, positions.data(), 5, good_ids.data(),
                         good_pos.data(), h.data(), 3, 0);
      },
      {"d is 0"});
  // No tokens: nothing is read, null pointers are fine.
  learned_position(Storage::bf16, nullptr, 4, nullptr, 5, nullptr, nullptr, nullptr, 0, 3);
}

TEST(FastPositionalArguments, ShawLogits) {
  const std::vector<float> q(2 * 4, 1.0f), k(3 * 4, 1.0f), rel(3 * 4, 1.0f);
  std::vector<float> e(2 * 3);
  expect_rejected(
      [&] { shaw_logits(Storage::f32, q.data(), k.data(), rel.data(), e.data(), -2, 3, 4, 1); },
      {"n_q is -2"});
  expect_rejected(
      [&] { shaw_logits(Storage::f32, q.data(), k.data(), rel.data(), e.data(), 2, 3, 0, 1); },
      {"d_k is 0"});
  expect_rejected(
      [&] { shaw_logits(Storage::f32, q.data(), k.data(), rel.data(), e.data(), 2, 3, 4, -1); },
      {"max_relative_position is -1"});
  expect_rejected(
      [&] { shaw_logits(Storage::f32, q.data(), nullptr, rel.data(), e.data(), 2, 3, 4, 1); },
      {"k is null"});
  expect_rejected(
      [&] { shaw_logits(Storage::f32, q.data(), k.data(), nullptr, e.data(), 2, 3, 4, 1); },
      {"rel_k is null"});
  shaw_logits(Storage::f32, q.data(), k.data(), rel.data(), e.data(), 2, 3, 4, 1);
  EXPECT_EQ(e[0], 4.0f);  // (1·(1 + 1))·4 / 2
}

TEST(FastPositionalArguments, T5Bias) {
  const std::vector<float> table(32 * 2, 0.5f);
  std::vector<float> bias(2 * 3 * 4);
  const auto call = [&](T5BiasShape sh) { t5_bias(Storage::f32, table.data(), bias.data(), sh); };
  const T5BiasShape good{32, 2, 3, 4, false, 128, 0};
  call(good);
  EXPECT_EQ(bias[5], 0.5f);
  auto with = [&](auto change) {
    T5BiasShape sh = good;
    change(sh);
    return [=] { call(sh); };
  };
  expect_rejected(with([](T5BiasShape& s) { s.heads = 0; }), {"heads is 0"});
  expect_rejected(with([](T5BiasShape& s) { s.query_len = -1; }), {"query_len is -1"});
  expect_rejected(with([](T5BiasShape& s) { s.key_len = -3; }), {"key_len is -3"});
  expect_rejected(with([](T5BiasShape& s) { s.query_offset = -1; }), {"query_offset is -1"});
  expect_rejected(with([](T5BiasShape& s) {
                    s.num_buckets = 3;
                    s.bidirectional = true;
                  }),
                  {"num_buckets is 3", "4 (bidirectional)"});
  expect_rejected(with([](T5BiasShape& s) { s.max_distance = 16; }),
                  {"max_distance is 16", "max_exact = 16"});
  expect_rejected(with([](T5BiasShape& s) { s.num_buckets = 8192; }), {"num_buckets is 8192"});
  expect_rejected([&] { t5_bias(Storage::f32, nullptr, bias.data(), good); }, {"table is null"});
  expect_rejected([&] { t5_bias(Storage::f32, table.data(), nullptr, good); }, {"bias is null"});
}

}  // namespace
}  // namespace lmo::fast
