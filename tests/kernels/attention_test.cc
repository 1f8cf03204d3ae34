// The attention kernels of one kernel library (tests/support/kernel_libraries.h: fast/ on every
// Highway target, or gpu/): attention, its decode step and absorbed MLA decode against
// reference/attention.h and reference/mla.h. The exact mp result on the same stored inputs,
// judged with the policy table's attention, attention_decode and mla_decode rows (naive_relative:
// the naive run is the reference in simulated f32), on every storage format; the library's
// repeatability check. Shapes: MHA, GQA, MQA, every mask, soft-caps, fully masked rows, NaN and
// ±∞ in keys and values (docs/nan-inf.md), caches of one token, YaRN's MLA; then, per library,
// shapes across its own tiling (the CPU's key blocks of 128 and row tiles, thread counts; the
// GPU's chunks of 256 keys and its widest heads). Argument checks run before any kernel (before
// any CUDA call), so on any machine.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/attention_inputs.h"
#include "tests/support/kernel_libraries.h"

namespace lmo::testdata {
namespace {

using fast::Storage;
using kernels::AttentionArgs;
using kernels::AttentionMask;
using kernels::MlaDecodeArgs;
using ref::mp;

using F32 = ref::Sim<ref::Format::f32>;  // the naive run's number type
using Shape = AttentionShape;
using Inputs = AttentionInputs;

template <class Lib>
void run_attention(const Shape& c, Storage s, const Inputs& in, oracle::GuardedBuffer& o) {
  o.arm();
  if (c.decode) {
    Lib::attention_decode(s, in.q.bytes().data(), in.k.bytes().data(), in.v.bytes().data(),
                          o.data(), c.h, c.g, c.d, c.t_k, c.window, static_cast<float>(c.cap),
                          0.0f);
    return;
  }
  Lib::attention(s, in.q.bytes().data(), in.k.bytes().data(), in.v.bytes().data(), o.data(),
                 attention_args(c));
}

// `run` (arming and filling `o`) judged with the op's policy on every variant of the library,
// then the library's repeatability check.
template <class Lib>
void expect_judged_everywhere(const std::string& op, const std::function<void()>& run,
                              const std::vector<mp>& exact, const oracle::GuardedBuffer& o,
                              const std::vector<double>& naive, Storage s,
                              const std::string& what) {
  const std::string where = what + " " + std::string(fast::storage_name(s));
  Lib::for_each_variant([&](const std::string& variant) {
    run();
    expect_judged(op, "", exact, o, naive, variant + " " + where);
  });
  Lib::expect_repeatable(
      [&] {
        run();
        return bytes_of(o);
      },
      where);
}

// Every storage judged against the exact reference (attention, or its decode step when
// c.decode); specials placed in k or v.
template <class Lib>
void check_attention(const Shape& c, uint64_t seed, const std::string& what,
                     const std::vector<oracle::SpecialAt>& k_specials = {},
                     const std::vector<oracle::SpecialAt>& v_specials = {}) {
  for (Storage s : fast::kAllStorages) {
    const Inputs in = attention_inputs(c, s, seed, k_specials, v_specials);
    const std::vector<mp> exact = reference_attention<mp>(c, in);
    const std::vector<double> naive = as_doubles(reference_attention<F32>(c, in));
    oracle::GuardedBuffer o(dtype_of(s), {c.t_q, c.h * c.d});
    expect_judged_everywhere<Lib>(
        c.decode ? "attention_decode" : "attention", [&] { run_attention<Lib>(c, s, in, o); },
        exact, o, naive, s, what);
  }
}

// F16: the decode step is the last row of causal (or windowed) attention over the cache.
template <class Lib>
void check_decode(int64_t h, int64_t g, int64_t d, int64_t t, int64_t window, double cap,
                  uint64_t seed) {
  Shape c(h, g, d, 1, t, window > 0 ? AttentionMask::window : AttentionMask::causal, window);
  c.capped(cap, 1.0);
  c.decode = true;
  check_attention<Lib>(c, seed, decode_name(h, g, t, window));
}

template <class Lib>
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
      Lib::mla_decode(s, in.q_c.bytes().data(), in.q_r.bytes().data(), in.c_kv.bytes().data(),
                      in.k_r.bytes().data(), in.w_uk.bytes().data(), o.data(), a);
    };
    expect_judged_everywhere<Lib>("mla_decode", run, exact, o, naive, s, what);
  }
}

template <class Lib>
class KernelAttention : public ::testing::Test {};
TYPED_TEST_SUITE(KernelAttention, TestedKernels);
template <class Lib>
class KernelAttentionDecode : public ::testing::Test {};
TYPED_TEST_SUITE(KernelAttentionDecode, TestedKernels);
template <class Lib>
class KernelMlaDecode : public ::testing::Test {};
TYPED_TEST_SUITE(KernelMlaDecode, TestedKernels);

TYPED_TEST(KernelAttention, MhaCausal) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check_attention<TypeParam>({4, 4, 32, 40, 40}, 601, "MHA causal");
}
TYPED_TEST(KernelAttention, GqaCausal) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check_attention<TypeParam>({8, 2, 16, 33, 33}, 602, "GQA causal");
}
TYPED_TEST(KernelAttention, MqaNoMask) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check_attention<TypeParam>({4, 1, 64, 20, 20, AttentionMask::none}, 603, "MQA none");
}
TYPED_TEST(KernelAttention, SlidingWindow) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check_attention<TypeParam>({4, 2, 16, 40, 40, AttentionMask::window, 12}, 604, "window 12");
  check_attention<TypeParam>({2, 2, 8, 9, 9, AttentionMask::window, 1}, 605, "window 1");
  check_attention<TypeParam>({2, 1, 8, 9, 9, AttentionMask::window, 50}, 706, "window > T");
}
TYPED_TEST(KernelAttention, DocumentMask) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check_attention<TypeParam>(Shape(4, 2, 16, 24, 24).docs(three_documents(24, 8, 15)), 606,
                             "documents");
  // Ids that are not runs: hidden keys inside a block's visible range.
  check_attention<TypeParam>(Shape(2, 1, 16, 30, 30).docs(interleaved_documents(30)), 607,
                             "mixed ids");
}
TYPED_TEST(KernelAttention, SoftCap) {
  LMO_REQUIRE_KERNELS(TypeParam);
  // Gemma 2's cap of 50 on logits spread wide enough to reach it, and a tight cap of 2.
  check_attention<TypeParam>(Shape(4, 2, 32, 16, 16).capped(50.0, 6.0), 608, "cap 50");
  check_attention<TypeParam>(Shape(4, 4, 16, 12, 12, AttentionMask::none).capped(2.0, 2.0), 609,
                             "cap 2");
}

// More queries than keys: the first rows' positions are negative, nothing is visible, and the
// reference's output there is NaN (0/0); the other rows are judged as usual (NaN parity).
TYPED_TEST(KernelAttention, FullyMaskedRowsAreNaN) {
  LMO_REQUIRE_KERNELS(TypeParam);
  const Shape c(2, 1, 8, 6, 3);
  check_attention<TypeParam>(c, 614, "T_q 6 > T_k 3");
  const Inputs in = attention_inputs(c, Storage::f32, 614);
  oracle::GuardedBuffer o(ref::DType::f32, {c.t_q, c.h * c.d});
  run_attention<TypeParam>(c, Storage::f32, in, o);
  const auto* y = static_cast<const float*>(o.data());
  for (int64_t i = 0; i < c.t_q * c.h * c.d; ++i) {
    EXPECT_EQ(std::isnan(y[i]), i < 3 * c.h * c.d) << "element " << i;
  }
}

// docs/nan-inf.md's attention rows: a NaN or ±∞ in a key reaches only the rows that see it
// (+∞·q gives a ±∞ or NaN logit: the row is NaN), a non-finite value only its component of
// those rows; masked keys never leak. Key 5 of 12, causal: rows 0–4 never see it.
TYPED_TEST(KernelAttention, NonFiniteKeysAndValues) {
  LMO_REQUIRE_KERNELS(TypeParam);
  const Shape c(2, 1, 8, 12, 12);
  check_attention<TypeParam>(c, 718, "NaN key", {{5 * 8 + 3, oracle::Special::nan}});
  check_attention<TypeParam>(c, 719, "+inf key", {{5 * 8 + 0, oracle::Special::pos_inf}});
  check_attention<TypeParam>(c, 720, "NaN value", {}, {{5 * 8 + 2, oracle::Special::nan}});
  check_attention<TypeParam>(
      c, 721, "inf values", {},
      {{5 * 8 + 1, oracle::Special::pos_inf}, {7 * 8 + 1, oracle::Special::neg_inf}});
  // Beyond the first block or chunk: a special in key 298 of 300.
  const Shape l(1, 1, 8, 4, 300);
  check_attention<TypeParam>(l, 722, "NaN value, key 298", {},
                             {{298 * 8 + 4, oracle::Special::nan}});
}

TYPED_TEST(KernelAttentionDecode, GqaCache) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check_decode<TypeParam>(8, 2, 64, 300, 0, 0, 620);
}
TYPED_TEST(KernelAttentionDecode, SlidingWindow) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check_decode<TypeParam>(4, 4, 32, 200, 96, 0, 621);
}
TYPED_TEST(KernelAttentionDecode, MqaSoftCap) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check_decode<TypeParam>(16, 1, 16, 40, 0, 30.0, 622);
}
TYPED_TEST(KernelAttentionDecode, SingleToken) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check_decode<TypeParam>(2, 1, 8, 1, 0, 0, 623);
}

TYPED_TEST(KernelMlaDecode, Interleaved) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check_mla<TypeParam>({2, 16, 8, 64, 150}, 630);
}
TYPED_TEST(KernelMlaDecode, HalfSplitManyHeads) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check_mla<TypeParam>({20, 8, 4, 24, 33, true, 500}, 631);
}
TYPED_TEST(KernelMlaDecode, SingleToken) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check_mla<TypeParam>({1, 4, 2, 8, 1}, 632);
}

// DeepSeek-V3's released YaRN (factor 40 over 4096, beta_fast 32, beta_slow 1) with its
// temperature (mscale_all_dim 1), and V2's (0.707): the frequencies go in as the kernels take
// them, the temperature through scale, and the exact reference is reference/mla.h with
// MlaConfig::rope_scaling set. d_h^R 64 as in the models (the ramp between YaRN's correction
// dimensions 10 and 23 depends on it); V2's query sits at position 4499, past the original
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
TYPED_TEST(KernelMlaDecode, DeepSeekV3Yarn) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check_mla<TypeParam>({2, 16, 64, 32, 200, false, 10000, kV3Yarn}, 633);
}
TYPED_TEST(KernelMlaDecode, DeepSeekV2YarnPastTheOriginalContext) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check_mla<TypeParam>({1, 8, 64, 16, 4500, true, 10000, kV2Yarn}, 634);
}

TYPED_TEST(KernelAttention, Validation) {
  float x[64] = {};
  float y[64];
  const Storage f = Storage::f32;
  AttentionArgs a;
  a.heads = 2, a.kv_heads = 1, a.head_dim = 4, a.q_len = 2, a.kv_len = 2;
  // A valid call runs (where the library can run).
  if (TypeParam::unavailable().empty()) {
    EXPECT_NO_THROW(TypeParam::attention(f, x, x, x, y, a));
    EXPECT_NO_THROW(TypeParam::attention_decode(f, x, x, x, y, 2, 1, 4, 3, 0, 0.0f, 0.0f));
  }
  auto bad = [&](auto change) {
    AttentionArgs b = a;
    change(b);
    EXPECT_THROW(TypeParam::attention(f, x, x, x, y, b), std::invalid_argument);
  };
  bad([](AttentionArgs& b) { b.heads = 0; });
  bad([](AttentionArgs& b) { b.kv_heads = 0; });
  bad([](AttentionArgs& b) { b.heads = 3, b.kv_heads = 2; });  // g must divide h
  bad([](AttentionArgs& b) { b.head_dim = 0; });
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
  EXPECT_THROW(TypeParam::attention(f, nullptr, x, x, y, a), std::invalid_argument);
  EXPECT_THROW(TypeParam::attention(f, x, x, nullptr, y, a), std::invalid_argument);
  EXPECT_THROW(TypeParam::attention(f, x, x, x, nullptr, a), std::invalid_argument);
  EXPECT_THROW(TypeParam::attention(static_cast<Storage>(7), x, x, x, y, a), std::invalid_argument);
  AttentionArgs empty = a;
  empty.q_len = 0;
  EXPECT_NO_THROW(TypeParam::attention(f, nullptr, nullptr, nullptr, nullptr, empty));

  const auto decode = [&](const void* k, int64_t g, int64_t t, int64_t window, float cap,
                          float scale) {
    TypeParam::attention_decode(f, x, k, x, y, 2, g, 4, t, window, cap, scale);
  };
  EXPECT_THROW(decode(x, 1, 0, 0, 0, 0), std::invalid_argument);
  EXPECT_THROW(decode(x, 1, 3, -1, 0, 0), std::invalid_argument);
  EXPECT_THROW(decode(x, 2, 3, 0, -1.0f, 0), std::invalid_argument);
  EXPECT_THROW(decode(nullptr, 1, 3, 0, 0, 0), std::invalid_argument);
  EXPECT_THROW(decode(x, 1, 3, 0, 0, -1.0f), std::invalid_argument);
}

TYPED_TEST(KernelMlaDecode, Validation) {
  float x[64] = {};
  float y[64];
  const Storage f = Storage::f32;
  MlaDecodeArgs a;
  a.heads = 2, a.head_dim = 2, a.rope_dim = 2, a.latent_dim = 4, a.cache_len = 3;
  const bool runs = TypeParam::unavailable().empty();
  if (runs) {
    EXPECT_NO_THROW(TypeParam::mla_decode(f, x, x, x, x, x, y, a));
  }
  auto bad = [&](auto change) {
    MlaDecodeArgs b = a;
    change(b);
    EXPECT_THROW(TypeParam::mla_decode(f, x, x, x, x, x, y, b), std::invalid_argument);
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
  // Shapes whose element counts leave int64 index arithmetic (2^62 and more), refused before
  // any product of them is formed.
  bad([](MlaDecodeArgs& b) { b.heads = int64_t{1} << 40, b.head_dim = int64_t{1} << 40; });
  bad([](MlaDecodeArgs& b) { b.latent_dim = int64_t{1} << 31, b.head_dim = int64_t{1} << 31; });
  bad([](MlaDecodeArgs& b) { b.cache_len = int64_t{1} << 61, b.latent_dim = 8; });
  // YaRN's parameters are checked as the RoPE kernels check them; its factor on cos and sin is
  // refused (the temperature of MLA belongs in scale).
  MlaDecodeArgs yarn = a;
  yarn.rope.scaling = kernels::RopeScaling::yarn, yarn.rope.factor = 40,
  yarn.rope.original_context = 4096;
  if (runs) {
    EXPECT_NO_THROW(TypeParam::mla_decode(f, x, x, x, x, x, y, yarn));
  }
  a = yarn;
  bad([](MlaDecodeArgs& b) { b.rope.original_context = 0; });
  bad([](MlaDecodeArgs& b) { b.rope.factor = 0; });
  bad([](MlaDecodeArgs& b) { b.rope.beta_slow = -1; });
  bad([](MlaDecodeArgs& b) { b.rope.base = 1; });  // YaRN's correction dimensions divide by ln base
  bad([](MlaDecodeArgs& b) { b.rope.attention_factor = true; });
  EXPECT_THROW(TypeParam::mla_decode(f, x, x, x, x, nullptr, y, a), std::invalid_argument);
  EXPECT_THROW(TypeParam::mla_decode(f, x, x, x, x, x, nullptr, a), std::invalid_argument);
  EXPECT_THROW(TypeParam::mla_decode(static_cast<Storage>(5), x, x, x, x, x, y, a),
               std::invalid_argument);
}

#ifdef LMO_TESTED_KERNELS_GPU
// The CUDA kernels' own tiling and limits.
using Gpu = GpuKernels;

// Several chunks of 256 keys (the online softmax's rescaling), queries that are the last rows of
// a longer sequence, windows and documents across chunk edges.
TEST(GpuAttention, LongSequencesAndChunkedQueries) {
  LMO_REQUIRE_KERNELS(Gpu);
  check_attention<Gpu>({2, 2, 8, 520, 520}, 711, "T 520 causal");
  check_attention<Gpu>({4, 1, 16, 5, 1000}, 712, "5 of 1000 causal");
  check_attention<Gpu>({2, 1, 16, 70, 700, AttentionMask::window, 300}, 713, "window 300");
  check_attention<Gpu>(Shape(2, 2, 8, 130, 530).docs(three_documents(530, 100, 300)), 714,
                       "docs 530");
}
// Widths beyond one value per thread, up to the limit (4 components per thread).
TEST(GpuAttention, WideHeads) {
  LMO_REQUIRE_KERNELS(Gpu);
  check_attention<Gpu>({2, 1, 300, 7, 7}, 715, "d 300");
  check_attention<Gpu>({1, 1, gpu::kGpuAttentionMaxDim, 3, 300}, 716, "d 1024");
}
// kv_len = 0 makes every row NaN.
TEST(GpuAttention, NoKeysMakesEveryRowNaN) {
  LMO_REQUIRE_KERNELS(Gpu);
  AttentionArgs a;
  a.heads = 1, a.head_dim = 4, a.q_len = 2, a.kv_len = 0, a.mask = AttentionMask::none;
  float q[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
  gpu::attention(Storage::f32, q, nullptr, nullptr, out, a);
  for (float x : out) EXPECT_TRUE(std::isnan(x));
}
// Caches of several chunks.
TEST(GpuAttentionDecode, LongCaches) {
  LMO_REQUIRE_KERNELS(Gpu);
  check_decode<Gpu>(8, 2, 64, 3000, 0, 0, 730);
  check_decode<Gpu>(4, 4, 32, 700, 296, 0, 731);
}
TEST(GpuMlaDecode, SeveralChunks) {
  LMO_REQUIRE_KERNELS(Gpu);
  check_mla<Gpu>({2, 16, 8, 64, 600}, 740);
}
// DeepSeek-V2's latent width (d_c = 512, d_h^R = 64): two value components per thread.
TEST(GpuMlaDecode, DeepSeekWidths) {
  LMO_REQUIRE_KERNELS(Gpu);
  check_mla<Gpu>({4, 16, 64, 512, 300}, 743);
}
// V3's YaRN with the query at position 4199, past the original context.
TEST(GpuMlaDecode, DeepSeekV3YarnPastTheOriginalContext) {
  LMO_REQUIRE_KERNELS(Gpu);
  check_mla<Gpu>({2, 16, 64, 64, 4200, false, 10000, kV3Yarn}, 744);
}
// The kernels' width limits (value components held in registers).
TEST(GpuAttention, WidthLimits) {
  float x[64] = {};
  float y[64];
  AttentionArgs a;
  a.heads = 2, a.kv_heads = 1, a.head_dim = gpu::kGpuAttentionMaxDim + 1, a.q_len = 2, a.kv_len = 2;
  EXPECT_THROW(gpu::attention(Storage::f32, x, x, x, y, a), std::invalid_argument);
  MlaDecodeArgs m;
  m.heads = 2, m.head_dim = 2, m.rope_dim = 2, m.latent_dim = gpu::kGpuAttentionMaxDim + 1,
  m.cache_len = 3;
  EXPECT_THROW(gpu::mla_decode(Storage::f32, x, x, x, x, x, y, m), std::invalid_argument);
  m.latent_dim = 1024, m.rope_dim = 1026;  // key width 2050
  EXPECT_THROW(gpu::mla_decode(Storage::f32, x, x, x, x, x, y, m), std::invalid_argument);
}
#else
// The Highway kernels' own tiling: several key blocks (128 keys) and row tiles; queries the last
// rows of a longer sequence.
TEST(FastAttention, LongSequencesAndChunkedQueries) {
  check_attention<FastKernels>({2, 2, 8, 140, 140}, 610, "T 140 causal");
  check_attention<FastKernels>({4, 1, 16, 5, 300}, 611, "5 of 300 causal");
  check_attention<FastKernels>({2, 1, 16, 70, 290, AttentionMask::window, 150}, 612, "window 150");
  check_attention<FastKernels>(Shape(2, 2, 8, 130, 260).docs(three_documents(260, 100, 200)), 613,
                               "docs 260");
}

TEST(FastAttention, ThreadCountsGiveIdenticalBytes) {
  // Many tiles: 4 KV heads × 2 head tiles (16 query heads each) × rows, several key blocks.
  const Shape c(128, 4, 8, 3, 200);
  for (Storage s : fast::kAllStorages) {
    const Inputs in = attention_inputs(c, s, 615);
    oracle::GuardedBuffer o(dtype_of(s), {c.t_q, c.h * c.d});
    const int old = fast::threads();
    std::vector<uint8_t> one;
    for (int n : {1, 2, 5}) {
      fast::set_threads(n);
      run_attention<FastKernels>(c, s, in, o);
      if (n == 1) one = bytes_of(o);
      EXPECT_TRUE(bytes_of(o) == one)
          << fast::storage_name(s) << ": differs with " << n << " threads";
    }
    fast::set_threads(old);
  }
}
#endif

}  // namespace
}  // namespace lmo::testdata
