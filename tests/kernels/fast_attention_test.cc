// fast/attention.h and fast/mla_decode.h against reference/attention.h and reference/mla.h: the
// exact mp result on the same stored inputs, judged with the policy table's attention,
// attention_decode and mla_decode rows (naive_relative: the naive run is the reference in
// simulated f32), for every storage format and every supported Highway target. Shapes cover
// MHA/GQA/MQA, every mask, soft-caps, queries that are the last rows of a longer sequence,
// several key blocks and tiles, fully masked rows; plus thread invariance and argument checks.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fast/attention.h"
#include "fast/mla_decode.h"
#include "tests/support/attention_inputs.h"

namespace lmo::fast {
namespace {

using namespace lmo::testdata;
using ref::mp;

using F32 = ref::Sim<ref::Format::f32>;

// `run` (arming and filling `o`) judged with the op's policy on every supported target, then
// its bytes compared across thread counts.
void expect_judged_everywhere(const std::string& op, const std::function<void()>& run,
                              const std::vector<mp>& exact, const oracle::GuardedBuffer& o,
                              const std::vector<double>& naive, Storage s,
                              const std::string& what) {
  const std::string where = what + " " + std::string(storage_name(s));
  for_each_target([&](const std::string& target) {
    run();
    expect_judged(op, "", exact, o, naive,
                  what + " " + target + " " + std::string(storage_name(s)));
  });
  expect_thread_invariant(
      [&] {
        run();
        return bytes_of(o);
      },
      where);
}

using Shape = AttentionShape;
using Inputs = AttentionInputs;

void run_attention(const Shape& c, Storage s, const Inputs& in, oracle::GuardedBuffer& o) {
  o.arm();
  attention(s, in.q.bytes().data(), in.k.bytes().data(), in.v.bytes().data(), o.data(),
            attention_args(c));
}

// Every storage and target judged against the exact reference; thread invariance per storage.
void check_attention(const Shape& c, uint64_t seed, const std::string& what) {
  for (Storage s : kAllStorages) {
    const Inputs in = attention_inputs(c, s, seed);
    const std::vector<mp> exact = reference_attention<mp>(c, in);
    const std::vector<double> naive = as_doubles(reference_attention<F32>(c, in));
    oracle::GuardedBuffer o(dtype_of(s), {c.t_q, c.h * c.d});
    expect_judged_everywhere(
        "attention", [&] { run_attention(c, s, in, o); }, exact, o, naive, s, what);
  }
}

TEST(FastAttention, MhaCausal) { check_attention({4, 4, 32, 40, 40}, 601, "MHA causal"); }
TEST(FastAttention, GqaCausal) { check_attention({8, 2, 16, 33, 33}, 602, "GQA causal"); }
TEST(FastAttention, MqaNoMask) {
  check_attention({4, 1, 64, 20, 20, AttentionMask::none}, 603, "MQA none");
}
TEST(FastAttention, SlidingWindow) {
  check_attention({4, 2, 16, 40, 40, AttentionMask::window, 12}, 604, "window 12");
  check_attention({2, 2, 8, 9, 9, AttentionMask::window, 1}, 605, "window 1");  // self only
}
TEST(FastAttention, DocumentMask) {
  check_attention(Shape(4, 2, 16, 24, 24).docs(three_documents(24, 8, 15)), 606, "documents");
  // Ids that are not runs: hidden keys inside a block's visible range.
  check_attention(Shape(2, 1, 16, 30, 30).docs(interleaved_documents(30)), 607, "mixed ids");
}
TEST(FastAttention, SoftCap) {
  // Gemma 2's cap of 50 on logits spread wide enough to reach it, and a tight cap of 2.
  check_attention(Shape(4, 2, 32, 16, 16).capped(50.0, 6.0), 608, "cap 50");
  check_attention(Shape(4, 4, 16, 12, 12, AttentionMask::none).capped(2.0, 2.0), 609, "cap 2");
}
// Several key blocks (128 keys) and row tiles; queries the last rows of a longer sequence.
TEST(FastAttention, LongSequencesAndChunkedQueries) {
  check_attention({2, 2, 8, 140, 140}, 610, "T 140 causal");
  check_attention({4, 1, 16, 5, 300}, 611, "5 of 300 causal");
  check_attention({2, 1, 16, 70, 290, AttentionMask::window, 150}, 612, "window 150");
  check_attention(Shape(2, 2, 8, 130, 260).docs(three_documents(260, 100, 200)), 613, "docs 260");
}

// More queries than keys: the first rows' positions are negative, nothing is visible, and the
// reference's output there is NaN (0/0); the other rows are judged as usual (NaN parity).
TEST(FastAttention, FullyMaskedRowsAreNaN) {
  const Shape c(2, 1, 8, 6, 3);
  check_attention(c, 614, "T_q 6 > T_k 3");
  const Inputs in = attention_inputs(c, Storage::f32, 614);
  oracle::GuardedBuffer o(ref::DType::f32, {c.t_q, c.h * c.d});
  run_attention(c, Storage::f32, in, o);
  const auto* y = static_cast<const float*>(o.data());
  for (int64_t i = 0; i < c.t_q * c.h * c.d; ++i) {
    EXPECT_EQ(std::isnan(y[i]), i < 3 * c.h * c.d) << "element " << i;
  }
}

TEST(FastAttention, ThreadCountsGiveIdenticalBytes) {
  // Many tiles: 4 KV heads × 2 head tiles (16 query heads each) × rows, several key blocks.
  const Shape c(128, 4, 8, 3, 200);
  for (Storage s : kAllStorages) {
    const Inputs in = attention_inputs(c, s, 615);
    oracle::GuardedBuffer o(dtype_of(s), {c.t_q, c.h * c.d});
    const int old = threads();
    std::vector<uint8_t> one;
    for (int n : {1, 2, 5}) {
      set_threads(n);
      run_attention(c, s, in, o);
      if (n == 1) one = bytes_of(o);
      EXPECT_TRUE(bytes_of(o) == one) << storage_name(s) << ": differs with " << n << " threads";
    }
    set_threads(old);
  }
}

// F16: the decode step is the last row of causal (or windowed) attention over the cache.
void check_decode(int64_t h, int64_t g, int64_t d, int64_t t, int64_t window, double cap,
                  uint64_t seed) {
  Shape c(h, g, d, 1, t, window > 0 ? AttentionMask::window : AttentionMask::causal, window);
  c.capped(cap, 1.0);
  const std::string what = decode_name(h, g, t, window);
  for (Storage s : kAllStorages) {
    const Inputs in = attention_inputs(c, s, seed);
    const std::vector<mp> exact = reference_attention<mp>(c, in);
    const std::vector<double> naive = as_doubles(reference_attention<F32>(c, in));
    oracle::GuardedBuffer o(dtype_of(s), {1, h * d});
    const auto run = [&] {
      o.arm();
      attention_decode(s, in.q.bytes().data(), in.k.bytes().data(), in.v.bytes().data(), o.data(),
                       h, g, d, t, window, static_cast<float>(cap));
    };
    expect_judged_everywhere("attention_decode", run, exact, o, naive, s, what);
  }
}

TEST(FastAttentionDecode, GqaCache) { check_decode(8, 2, 64, 300, 0, 0, 620); }
TEST(FastAttentionDecode, SlidingWindow) { check_decode(4, 4, 32, 200, 96, 0, 621); }
TEST(FastAttentionDecode, MqaSoftCap) { check_decode(16, 1, 16, 40, 0, 30.0, 622); }
TEST(FastAttentionDecode, SingleToken) { check_decode(2, 1, 8, 1, 0, 0, 623); }

void check_mla(const MlaShape& c, uint64_t seed) {
  const std::string what = mla_name(c);
  for (Storage s : kAllStorages) {
    const MlaInputs in = mla_inputs(c, s, seed);
    const std::vector<mp> exact = reference_mla<mp>(c, in);
    const std::vector<double> naive = as_doubles(reference_mla<F32>(c, in));
    oracle::GuardedBuffer o(dtype_of(s), {1, c.h * c.dc});
    const MlaDecodeArgs a = mla_args(c);
    const auto run = [&] {
      o.arm();
      mla_decode(s, in.q_c.bytes().data(), in.q_r.bytes().data(), in.c_kv.bytes().data(),
                 in.k_r.bytes().data(), in.w_uk.bytes().data(), o.data(), a);
    };
    expect_judged_everywhere("mla_decode", run, exact, o, naive, s, what);
  }
}

TEST(FastMlaDecode, Interleaved) { check_mla({2, 16, 8, 64, 150}, 630); }
TEST(FastMlaDecode, HalfSplitManyHeads) { check_mla({20, 8, 4, 24, 33, true, 500}, 631); }
TEST(FastMlaDecode, SingleToken) { check_mla({1, 4, 2, 8, 1}, 632); }

// DeepSeek-V3's released YaRN (factor 40 over 4096, beta_fast 32, beta_slow 1) with its
// temperature (mscale_all_dim 1), and V2's (0.707): the frequencies go in as fast/rope.h takes
// them, the temperature through scale, and the exact reference is reference/mla.h with
// MlaConfig::rope_scaling set. d_h^R 64 as in the models (the ramp between YaRN's correction
// dimensions 10 and 23 depends on it); the second query sits at position 4499, past the original
// context.
constexpr ref::RopeScaling kV3Yarn{.kind = ref::RopeScalingKind::kYarn,
                                   .factor = "40",
                                   .original_context = 4096,
                                   .beta_fast = "32",
                                   .beta_slow = "1",
                                   .mscale_all_dim = "1"};
constexpr ref::RopeScaling kV2Yarn{.kind = ref::RopeScalingKind::kYarn,
                                   .factor = "40",
                                   .original_context = 4096,
                                   .beta_fast = "32",
                                   .beta_slow = "1",
                                   .mscale_all_dim = "0.707"};
TEST(FastMlaDecode, DeepSeekV3Yarn) { check_mla({2, 16, 64, 32, 200, false, 10000, kV3Yarn}, 633); }
TEST(FastMlaDecode, DeepSeekV2YarnPastTheOriginalContext) {
  check_mla({1, 8, 64, 16, 4500, true, 10000, kV2Yarn}, 634);
}

TEST(FastAttention, Validation) {
  float x[64] = {};
  float y[64];
  AttentionArgs a;
  a.heads = 2, a.kv_heads = 1, a.head_dim = 4, a.q_len = 2, a.kv_len = 2;
  EXPECT_NO_THROW(attention(Storage::f32, x, x, x, y, a));
  auto bad = [&](auto change) {
    AttentionArgs b = a;
    change(b);
    EXPECT_THROW(attention(Storage::f32, x, x, x, y, b), std::invalid_argument);
  };
  bad([](AttentionArgs& b) { b.heads = 0; });
  bad([](AttentionArgs& b) { b.kv_heads = 0; });
  bad([](AttentionArgs& b) { b.heads = 3, b.kv_heads = 2; });  // g must divide h
  bad([](AttentionArgs& b) { b.head_dim = 0; });
  bad([](AttentionArgs& b) { b.q_len = -1; });
  bad([](AttentionArgs& b) { b.mask = AttentionMask::window; });    // window 0
  bad([](AttentionArgs& b) { b.mask = AttentionMask::document; });  // no ids
  bad([](AttentionArgs& b) { b.mask = static_cast<AttentionMask>(9); });
  bad([](AttentionArgs& b) { b.scale = -1; });
  bad([](AttentionArgs& b) { b.scale = INFINITY; });
  bad([](AttentionArgs& b) { b.softcap = -2; });
  bad([](AttentionArgs& b) { b.softcap = NAN; });
  const int64_t ids[2] = {0, 0};
  bad([&](AttentionArgs& b) {
    b.mask = AttentionMask::document, b.doc_ids = ids, b.q_len = 3;  // T_q > T_k
  });
  EXPECT_THROW(attention(Storage::f32, nullptr, x, x, y, a), std::invalid_argument);
  EXPECT_THROW(attention(Storage::f32, x, x, nullptr, y, a), std::invalid_argument);
  EXPECT_THROW(attention(Storage::f32, x, x, x, nullptr, a), std::invalid_argument);
  EXPECT_THROW(attention(static_cast<Storage>(7), x, x, x, y, a), std::invalid_argument);
  AttentionArgs empty = a;
  empty.q_len = 0;
  EXPECT_NO_THROW(attention(Storage::f32, nullptr, nullptr, nullptr, nullptr, empty));

  EXPECT_NO_THROW(attention_decode(Storage::f32, x, x, x, y, 2, 1, 4, 3));
  EXPECT_THROW(attention_decode(Storage::f32, x, x, x, y, 2, 1, 4, 0), std::invalid_argument);
  EXPECT_THROW(attention_decode(Storage::f32, x, x, x, y, 2, 1, 4, 3, -1), std::invalid_argument);
  EXPECT_THROW(attention_decode(Storage::f32, x, x, x, y, 2, 2, 4, 3, 0, -1.0f),
               std::invalid_argument);
  EXPECT_THROW(attention_decode(Storage::f32, x, nullptr, x, y, 2, 1, 4, 3), std::invalid_argument);
}

TEST(FastMlaDecode, Validation) {
  float x[64] = {};
  float y[64];
  MlaDecodeArgs a;
  a.heads = 2, a.head_dim = 2, a.rope_dim = 2, a.latent_dim = 4, a.cache_len = 3;
  EXPECT_NO_THROW(mla_decode(Storage::f32, x, x, x, x, x, y, a));
  auto bad = [&](auto change) {
    MlaDecodeArgs b = a;
    change(b);
    EXPECT_THROW(mla_decode(Storage::f32, x, x, x, x, x, y, b), std::invalid_argument);
  };
  bad([](MlaDecodeArgs& b) { b.heads = 0; });
  bad([](MlaDecodeArgs& b) { b.head_dim = 0; });
  bad([](MlaDecodeArgs& b) { b.rope_dim = 3; });
  bad([](MlaDecodeArgs& b) { b.rope_dim = 0; });
  bad([](MlaDecodeArgs& b) { b.latent_dim = 0; });
  bad([](MlaDecodeArgs& b) { b.cache_len = 0; });
  bad([](MlaDecodeArgs& b) { b.rope.base = 0; });
  bad([](MlaDecodeArgs& b) { b.rope.base = INFINITY; });
  bad([](MlaDecodeArgs& b) { b.scale = -1; });
  // YaRN's parameters are checked as fast/rope.h checks them; its factor on cos and sin is
  // refused (the temperature of MLA belongs in scale).
  MlaDecodeArgs yarn = a;
  yarn.rope.scaling = RopeScaling::yarn, yarn.rope.factor = 40, yarn.rope.original_context = 4096;
  EXPECT_NO_THROW(mla_decode(Storage::f32, x, x, x, x, x, y, yarn));
  a = yarn;
  bad([](MlaDecodeArgs& b) { b.rope.original_context = 0; });
  bad([](MlaDecodeArgs& b) { b.rope.factor = 0; });
  bad([](MlaDecodeArgs& b) { b.rope.beta_slow = -1; });
  bad([](MlaDecodeArgs& b) { b.rope.base = 1; });  // YaRN's correction dimensions divide by ln base
  bad([](MlaDecodeArgs& b) { b.rope.attention_factor = true; });
  EXPECT_THROW(mla_decode(Storage::f32, x, x, x, x, nullptr, y, a), std::invalid_argument);
  EXPECT_THROW(mla_decode(Storage::f32, x, x, x, x, x, nullptr, a), std::invalid_argument);
}

}  // namespace
}  // namespace lmo::fast
