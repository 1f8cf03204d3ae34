// gpu/api_attention.h (attention, its decode step, absorbed MLA decode) against
// reference/attention.h and reference/mla.h: the exact mp result on the same stored inputs,
// judged with the policy table's attention, attention_decode and mla_decode rows (the naive run
// is the reference in simulated f32), on every storage format. Shapes as the fast tests': MHA,
// GQA, MQA, every mask, soft-caps, queries that are the last rows of a longer sequence, several
// key chunks (256 keys each), widths at the kernels' limits, fully masked rows, NaN and ±∞ in
// keys and values; run-twice bitwise identity; validation (runs without a device).
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/api_attention.h"
#include "tests/support/attention_inputs.h"
#include "tests/support/gpu_cases.h"

namespace lmo::gpu {
namespace {

using namespace lmo::testdata;
using fast::Storage;
using ref::mp;
using F32 = ref::Sim<ref::Format::f32>;

using Shape = AttentionShape;
using Inputs = AttentionInputs;

void run_attention(const Shape& c, Storage s, const Inputs& in, oracle::GuardedBuffer& o) {
  o.arm();
  if (c.decode) {
    attention_decode(gpu_storage(s), in.q.bytes().data(), in.k.bytes().data(), in.v.bytes().data(),
                     o.data(), c.h, c.g, c.d, c.t_k, c.window, static_cast<float>(c.cap));
    return;
  }
  attention(gpu_storage(s), in.q.bytes().data(), in.k.bytes().data(), in.v.bytes().data(), o.data(),
            attention_args(c));
}

// Every storage judged against the exact reference, then run twice for identical bytes.
void check_attention(const Shape& c, uint64_t seed, const std::string& what,
                     const std::vector<oracle::SpecialAt>& k_specials = {},
                     const std::vector<oracle::SpecialAt>& v_specials = {}) {
  const std::string op = c.decode ? "attention_decode" : "attention";
  for (Storage s : fast::kAllStorages) {
    const Inputs in = attention_inputs(c, s, seed, k_specials, v_specials);
    const std::vector<mp> exact = reference_attention<mp>(c, in);
    const std::vector<double> naive = as_doubles(reference_attention<F32>(c, in));
    oracle::GuardedBuffer o(dtype_of(s), {c.t_q, c.h * c.d});
    const std::string where = "gpu " + what + " " + std::string(fast::storage_name(s));
    run_attention(c, s, in, o);
    expect_judged(op, "", exact, o, naive, where);
    expect_deterministic(
        [&] {
          run_attention(c, s, in, o);
          return bytes_of(o);
        },
        where);
  }
}

TEST(GpuAttention, MhaCausal) {
  LMO_REQUIRE_GPU();
  check_attention({4, 4, 32, 40, 40}, 701, "MHA causal");
}
TEST(GpuAttention, GqaCausal) {
  LMO_REQUIRE_GPU();
  check_attention({8, 2, 16, 33, 33}, 702, "GQA causal");
}
TEST(GpuAttention, MqaNoMask) {
  LMO_REQUIRE_GPU();
  check_attention({4, 1, 64, 20, 20, AttentionMask::none}, 703, "MQA none");
}
TEST(GpuAttention, SlidingWindow) {
  LMO_REQUIRE_GPU();
  check_attention({4, 2, 16, 40, 40, AttentionMask::window, 12}, 704, "window 12");
  check_attention({2, 2, 8, 9, 9, AttentionMask::window, 1}, 705, "window 1");  // self only
  check_attention({2, 1, 8, 9, 9, AttentionMask::window, 50}, 706, "window > T");
}
TEST(GpuAttention, DocumentMask) {
  LMO_REQUIRE_GPU();
  check_attention(Shape(4, 2, 16, 24, 24).docs(three_documents(24, 8, 15)), 707, "documents");
  // Ids that are not runs: hidden keys inside the visible range.
  check_attention(Shape(2, 1, 16, 30, 30).docs(interleaved_documents(30)), 708, "mixed ids");
}
TEST(GpuAttention, SoftCap) {
  LMO_REQUIRE_GPU();
  check_attention(Shape(4, 2, 32, 16, 16).capped(50.0, 6.0), 709, "cap 50");
  check_attention(Shape(4, 4, 16, 12, 12, AttentionMask::none).capped(2.0, 2.0), 710, "cap 2");
}
// Several chunks of 256 keys (the online softmax's rescaling), queries that are the last rows of
// a longer sequence, windows and documents across chunk edges.
TEST(GpuAttention, LongSequencesAndChunkedQueries) {
  LMO_REQUIRE_GPU();
  check_attention({2, 2, 8, 520, 520}, 711, "T 520 causal");
  check_attention({4, 1, 16, 5, 1000}, 712, "5 of 1000 causal");
  check_attention({2, 1, 16, 70, 700, AttentionMask::window, 300}, 713, "window 300");
  check_attention(Shape(2, 2, 8, 130, 530).docs(three_documents(530, 100, 300)), 714, "docs 530");
}
// Widths beyond one value per thread, up to the limit (4 components per thread).
TEST(GpuAttention, WideHeads) {
  LMO_REQUIRE_GPU();
  check_attention({2, 1, 300, 7, 7}, 715, "d 300");
  check_attention({1, 1, kGpuAttentionMaxDim, 3, 300}, 716, "d 1024");
}

// More queries than keys: the first rows see nothing and are NaN (0/0), and kv_len = 0 makes
// every row NaN.
TEST(GpuAttention, FullyMaskedRowsAreNaN) {
  LMO_REQUIRE_GPU();
  const Shape c(2, 1, 8, 6, 3);
  check_attention(c, 717, "T_q 6 > T_k 3");
  const Inputs in = attention_inputs(c, Storage::f32, 717);
  oracle::GuardedBuffer o(ref::DType::f32, {c.t_q, c.h * c.d});
  run_attention(c, Storage::f32, in, o);
  const auto* y = static_cast<const float*>(o.data());
  for (int64_t i = 0; i < c.t_q * c.h * c.d; ++i) {
    EXPECT_EQ(std::isnan(y[i]), i < 3 * c.h * c.d) << "element " << i;
  }
  AttentionArgs a;
  a.heads = 1, a.head_dim = 4, a.q_len = 2, a.kv_len = 0, a.mask = AttentionMask::none;
  float q[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
  attention(gpu::Storage::f32, q, nullptr, nullptr, out, a);
  for (float x : out) EXPECT_TRUE(std::isnan(x));
}

// docs/nan-inf.md's attention rows: a NaN or ±∞ in a key reaches only the rows that see it
// (+∞·q gives a ±∞ or NaN logit: the row is NaN), a non-finite value only its component of
// those rows; masked keys never leak. Key 5 of 12, causal: rows 0–4 never see it.
TEST(GpuAttention, NonFiniteKeysAndValues) {
  LMO_REQUIRE_GPU();
  const Shape c(2, 1, 8, 12, 12);
  check_attention(c, 718, "NaN key", {{5 * 8 + 3, oracle::Special::nan}});
  check_attention(c, 719, "+inf key", {{5 * 8 + 0, oracle::Special::pos_inf}});
  check_attention(c, 720, "NaN value", {}, {{5 * 8 + 2, oracle::Special::nan}});
  check_attention(c, 721, "inf values", {},
                  {{5 * 8 + 1, oracle::Special::pos_inf}, {7 * 8 + 1, oracle::Special::neg_inf}});
  // Across chunks: a special in the second chunk of 300 keys.
  const Shape l(1, 1, 8, 4, 300);
  check_attention(l, 722, "NaN value, chunk 2", {}, {{298 * 8 + 4, oracle::Special::nan}});
}

// F16: the decode step is the last row of causal (or windowed) attention over the cache.
void check_decode(int64_t h, int64_t g, int64_t d, int64_t t, int64_t window, double cap,
                  uint64_t seed) {
  Shape c(h, g, d, 1, t, window > 0 ? AttentionMask::window : AttentionMask::causal, window);
  c.capped(cap, 1.0);
  c.decode = true;
  check_attention(c, seed, decode_name(h, g, t, window));
}

TEST(GpuAttentionDecode, GqaCache) {
  LMO_REQUIRE_GPU();
  check_decode(8, 2, 64, 3000, 0, 0, 730);
}
TEST(GpuAttentionDecode, SlidingWindow) {
  LMO_REQUIRE_GPU();
  check_decode(4, 4, 32, 700, 296, 0, 731);
}
TEST(GpuAttentionDecode, MqaSoftCap) {
  LMO_REQUIRE_GPU();
  check_decode(16, 1, 16, 40, 0, 30.0, 732);
}
TEST(GpuAttentionDecode, SingleToken) {
  LMO_REQUIRE_GPU();
  check_decode(2, 1, 8, 1, 0, 0, 733);
}

void check_mla(const MlaShape& c, uint64_t seed) {
  const std::string what = mla_name(c);
  for (Storage s : fast::kAllStorages) {
    const MlaInputs in = mla_inputs(c, s, seed);
    const std::vector<mp> exact = reference_mla<mp>(c, in);
    const std::vector<double> naive = as_doubles(reference_mla<F32>(c, in));
    oracle::GuardedBuffer o(dtype_of(s), {1, c.h * c.dc});
    const MlaDecodeArgs a = mla_args(c);
    const auto run = [&] {
      o.arm();
      mla_decode(gpu_storage(s), in.q_c.bytes().data(), in.q_r.bytes().data(),
                 in.c_kv.bytes().data(), in.k_r.bytes().data(), in.w_uk.bytes().data(), o.data(),
                 a);
      return bytes_of(o);
    };
    const std::string where = "gpu " + what + " " + std::string(fast::storage_name(s));
    run();
    expect_judged("mla_decode", "", exact, o, naive, where);
    expect_deterministic(run, where);
  }
}

TEST(GpuMlaDecode, Interleaved) {
  LMO_REQUIRE_GPU();
  check_mla({2, 16, 8, 64, 600}, 740);
}
TEST(GpuMlaDecode, HalfSplitManyHeads) {
  LMO_REQUIRE_GPU();
  check_mla({20, 8, 4, 24, 33, true, 500}, 741);
}
TEST(GpuMlaDecode, SingleToken) {
  LMO_REQUIRE_GPU();
  check_mla({1, 4, 2, 8, 1}, 742);
}
// DeepSeek-V2's latent width (d_c = 512, d_h^R = 64): two value components per thread.
TEST(GpuMlaDecode, DeepSeekWidths) {
  LMO_REQUIRE_GPU();
  check_mla({4, 16, 64, 512, 300}, 743);
}
// DeepSeek-V3's released YaRN (factor 40 over 4096, beta 32/1) and temperature (mscale_all_dim
// 1), the query at position 4199, past the original context.
TEST(GpuMlaDecode, DeepSeekV3Yarn) {
  LMO_REQUIRE_GPU();
  check_mla({2, 16, 64, 64, 4200, false, 10000,
             ref::RopeScaling{.kind = ref::RopeScalingKind::kYarn,
                              .factor = "40",
                              .original_context = 4096,
                              .beta_fast = "32",
                              .beta_slow = "1",
                              .mscale_all_dim = "1"}},
            744);
}

// Argument checks run before any CUDA call: these pass without a device.
TEST(GpuAttention, Validation) {
  float x[64] = {};
  float y[64];
  const gpu::Storage f = gpu::Storage::f32;
  AttentionArgs a;
  a.heads = 2, a.kv_heads = 1, a.head_dim = 4, a.q_len = 2, a.kv_len = 2;
  auto bad = [&](auto change) {
    AttentionArgs b = a;
    change(b);
    EXPECT_THROW(attention(f, x, x, x, y, b), std::invalid_argument);
  };
  bad([](AttentionArgs& b) { b.heads = 0; });
  bad([](AttentionArgs& b) { b.kv_heads = 0; });
  bad([](AttentionArgs& b) { b.heads = 3, b.kv_heads = 2; });  // g must divide h
  bad([](AttentionArgs& b) { b.head_dim = 0; });
  bad([](AttentionArgs& b) { b.head_dim = kGpuAttentionMaxDim + 1; });
  bad([](AttentionArgs& b) { b.q_len = -1; });
  bad([](AttentionArgs& b) { b.kv_len = -1; });
  bad([](AttentionArgs& b) { b.mask = AttentionMask::window; });    // window 0
  bad([](AttentionArgs& b) { b.mask = AttentionMask::document; });  // no ids
  bad([](AttentionArgs& b) { b.mask = static_cast<AttentionMask>(9); });
  bad([](AttentionArgs& b) { b.scale = -1; });
  bad([](AttentionArgs& b) { b.scale = INFINITY; });
  bad([](AttentionArgs& b) { b.softcap = -2; });
  bad([](AttentionArgs& b) { b.softcap = NAN; });
  bad([](AttentionArgs& b) { b.q_len = int64_t{1} << 40, b.heads = 1 << 20; });  // overflow
  const int64_t ids[2] = {0, 0};
  bad([&](AttentionArgs& b) {
    b.mask = AttentionMask::document, b.doc_ids = ids, b.q_len = 3;  // T_q > T_k
  });
  EXPECT_THROW(attention(f, nullptr, x, x, y, a), std::invalid_argument);
  EXPECT_THROW(attention(f, x, x, nullptr, y, a), std::invalid_argument);
  EXPECT_THROW(attention(f, x, x, x, nullptr, a), std::invalid_argument);
  EXPECT_THROW(attention(static_cast<gpu::Storage>(7), x, x, x, y, a), std::invalid_argument);
  AttentionArgs empty = a;
  empty.q_len = 0;
  EXPECT_NO_THROW(attention(f, nullptr, nullptr, nullptr, nullptr, empty));  // no CUDA call

  EXPECT_THROW(attention_decode(f, x, x, x, y, 2, 1, 4, 0), std::invalid_argument);
  EXPECT_THROW(attention_decode(f, x, x, x, y, 2, 1, 4, 3, -1), std::invalid_argument);
  EXPECT_THROW(attention_decode(f, x, x, x, y, 2, 2, 4, 3, 0, -1.0f), std::invalid_argument);
  EXPECT_THROW(attention_decode(f, x, nullptr, x, y, 2, 1, 4, 3), std::invalid_argument);
  EXPECT_THROW(attention_decode(f, x, x, x, y, 2, 1, 4, 3, 0, 0, -1.0f), std::invalid_argument);
}

TEST(GpuMlaDecode, Validation) {
  float x[64] = {};
  float y[64];
  const gpu::Storage f = gpu::Storage::f32;
  MlaDecodeArgs a;
  a.heads = 2, a.head_dim = 2, a.rope_dim = 2, a.latent_dim = 4, a.cache_len = 3;
  auto bad = [&](auto change) {
    MlaDecodeArgs b = a;
    change(b);
    EXPECT_THROW(mla_decode(f, x, x, x, x, x, y, b), std::invalid_argument);
  };
  bad([](MlaDecodeArgs& b) { b.heads = 0; });
  bad([](MlaDecodeArgs& b) { b.head_dim = 0; });
  bad([](MlaDecodeArgs& b) { b.rope_dim = 3; });
  bad([](MlaDecodeArgs& b) { b.rope_dim = 0; });
  bad([](MlaDecodeArgs& b) { b.latent_dim = 0; });
  bad([](MlaDecodeArgs& b) { b.latent_dim = kGpuAttentionMaxDim + 1; });
  bad([](MlaDecodeArgs& b) { b.latent_dim = 1024, b.rope_dim = 1026; });  // key width 2050
  bad([](MlaDecodeArgs& b) { b.cache_len = 0; });
  bad([](MlaDecodeArgs& b) { b.rope.base = 0; });
  bad([](MlaDecodeArgs& b) { b.rope.base = INFINITY; });
  bad([](MlaDecodeArgs& b) { b.scale = -1; });
  // YaRN's parameters as fast/rope.h checks them; no factor on cos and sin (MLA's temperature
  // goes in scale).
  a.rope.scaling = fast::RopeScaling::yarn, a.rope.factor = 40, a.rope.original_context = 4096;
  bad([](MlaDecodeArgs& b) { b.rope.original_context = 0; });
  bad([](MlaDecodeArgs& b) { b.rope.factor = 0; });
  bad([](MlaDecodeArgs& b) { b.rope.base = 1; });
  bad([](MlaDecodeArgs& b) { b.rope.attention_factor = true; });
  EXPECT_THROW(mla_decode(f, x, x, x, x, nullptr, y, a), std::invalid_argument);
  EXPECT_THROW(mla_decode(f, x, x, x, x, x, nullptr, a), std::invalid_argument);
  EXPECT_THROW(mla_decode(static_cast<gpu::Storage>(5), x, x, x, x, x, y, a),
               std::invalid_argument);
}

}  // namespace
}  // namespace lmo::gpu
