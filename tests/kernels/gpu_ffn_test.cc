// gpu/api_ffn.h: argument validation (everywhere: it runs before any CUDA call, with the messages
// of kernels/api/validate_ffn.h under gpu::'s names); with a device, the ReLU FFN in every storage
// bitwise equal to its evaluation on the host by gpu/ffn_math.h (ReLU is exact and every dot
// product's terms are exact, so host and device round the same sums: this pins the kernels'
// indexing, the f32 hidden layer and the output's rounding to f32 and then to the storage) on a
// shape of several blocks and a partial one; run-twice bitwise identity of ffn, glu_ffn and every
// decoder block layout. The oracle's verdicts on the built-in cases: gpu_backend_cases_test; the
// kernels' math judged on the host: gpu_ffn_math_test.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fast/storage.h"
#include "gpu/activation_math.h"
#include "gpu/api.h"
#include "gpu/ffn_math.h"
#include "oracle/core/inputs.h"
#include "tests/support/fast_cases.h"
#include "tests/support/gpu_cases.h"

namespace lmo::gpu {
namespace {

using namespace lmo::testdata;

// Stored values of `n` elements drawn uniform in ±bound, and their f32 widening.
struct Stored {
  Stored(fast::Storage s, uint64_t seed, const char* name, int64_t n, double bound)
      : t(oracle::uniform(seed, name, dtype_of(s), {n}, -bound, bound)) {
    for (int64_t i = 0; i < n; ++i) f.push_back(static_cast<float>(t.get(i)));
  }
  const void* p() const { return t.bytes().data(); }
  ref::Tensor t;
  std::vector<float> f;
};

TEST(GpuFfnArguments, RejectedBeforeAnyCudaCall) {
  const std::vector<float> x(2 * 3, 1.0f), w(3 * 4, 1.0f), w2(4 * 3, 1.0f);
  std::vector<float> y(2 * 3);
  expect_rejects(
      [&] {
        ffn(Activation::relu, Storage::f32, x.data(), w.data(), nullptr, w2.data(), nullptr,
            y.data(), -1, 3, 4);
      },
      "tokens");
  expect_rejects(
      [&] {
        ffn(Activation::relu, Storage::f32, x.data(), nullptr, nullptr, w2.data(), nullptr,
            y.data(), 2, 3, 4);
      },
      "gpu::ffn: w1 is null");
  expect_rejects(
      [&] {
        ffn(static_cast<Activation>(9), Storage::f32, x.data(), w.data(), nullptr, w2.data(),
            nullptr, y.data(), 2, 3, 4);
      },
      "activation");
  expect_rejects(
      [&] {
        ffn(Activation::relu, static_cast<Storage>(7), x.data(), w.data(), nullptr, w2.data(),
            nullptr, y.data(), 2, 3, 4);
      },
      "storage");
  expect_rejects(
      [&] {
        glu_ffn(Activation::silu, Storage::f32, x.data(), w.data(), nullptr, w2.data(), y.data(), 2,
                3, 4);
      },
      "gpu::glu_ffn: v is null");
  expect_rejects(
      [&] {
        glu_ffn(Activation::silu, Storage::f32, x.data(), w.data(), w.data(), w2.data(), y.data(),
                2, 3, 0);
      },
      "d_ff is 0");
  // No tokens: nothing is read or written, null pointers are fine, no device needed.
  ffn(Activation::gelu, Storage::bf16, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, 3,
      4);

  DecoderBlockArgs a;
  a.tokens = 2;
  a.d = 8;
  a.heads = 2;
  a.kv_heads = 1;
  a.d_ff = 4;
  a.eps = 1e-6f;
  const std::vector<float> big(64, 1.0f);
  DecoderBlockWeights wt;
  wt.w_q = wt.w_k = wt.w_v = wt.w_o = wt.w1 = wt.v = wt.w2 = big.data();
  wt.attn_norm = big.data();  // ffn_norm missing for pre_ln
  std::vector<float> out(16);
  expect_rejects([&] { decoder_block(Storage::f32, big.data(), wt, out.data(), a); },
                 "gpu::decoder_block: ffn_norm is null");
  wt.ffn_norm = big.data();
  DecoderBlockArgs bad = a;
  bad.heads = 3;
  expect_rejects([&] { decoder_block(Storage::f32, big.data(), wt, out.data(), bad); },
                 "heads is 3");
  bad = a;
  bad.eps = -1;
  expect_rejects([&] { decoder_block(Storage::f32, big.data(), wt, out.data(), bad); }, "eps");
  bad = a;
  bad.layout = static_cast<BlockLayout>(9);
  expect_rejects([&] { decoder_block(Storage::f32, big.data(), wt, out.data(), bad); }, "layout");
  // A head wider than the attention kernel takes.
  bad = a;
  bad.d = 2 * (kGpuAttentionMaxDim + 1);
  expect_rejects([&] { decoder_block(Storage::f32, big.data(), wt, out.data(), bad); },
                 "expected <= 1024 (the GPU attention kernel's limit)");
  bad = a;
  bad.tokens = 0;
  decoder_block(Storage::f32, nullptr, DecoderBlockWeights{}, nullptr, bad);
}

// The ReLU FFN (biased, or ReGLU) evaluated on the host by gpu/ffn_math.h, stored as the kernel
// stores it.
std::vector<uint8_t> relu_ffn_on_host(fast::Storage s, bool gated, const Stored& x,
                                      const Stored& up, const Stored& v, const Stored& b1,
                                      const Stored& w2, const Stored& b2, int64_t tokens, int64_t d,
                                      int64_t d_ff) {
  const auto widen = [](float f) { return static_cast<double>(f); };
  const ReluFn relu;
  std::vector<float> h(static_cast<size_t>(tokens * d_ff));
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t c = 0; c < d_ff; ++c) {
      const float* xr = x.f.data() + t * d;
      const double xw = ffn_math::column_dot(xr, up.f.data() + c, d, d_ff, widen);
      const double hv =
          gated ? ffn_math::glu_hidden(relu, xw,
                                       ffn_math::column_dot(xr, v.f.data() + c, d, d_ff, widen))
                : ffn_math::ffn_hidden(relu, xw, b1.f[static_cast<size_t>(c)]);
      h[static_cast<size_t>(t * d_ff + c)] = static_cast<float>(hv);
    }
  }
  std::vector<uint8_t> y(static_cast<size_t>(tokens * d) * fast::storage_bytes(s));
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t j = 0; j < d; ++j) {
      double sum = ffn_math::column_dot(h.data() + t * d_ff, w2.f.data() + j, d_ff, d, widen);
      if (!gated) sum += b2.f[static_cast<size_t>(j)];
      fast::store_f32(s, y.data(), t * d + j, static_cast<float>(sum));
    }
  }
  return y;
}

TEST(GpuFfn, ReluEqualsTheHostEvaluationBitwise) {
  LMO_REQUIRE_GPU();
  // 2 · 300 hidden values: three blocks of 256 threads, the last partial.
  const int64_t tokens = 3, d = 70, d_ff = 300;
  for (fast::Storage s : fast::kAllStorages) {
    for (const bool gated : {false, true}) {
      const std::string where = std::string(fast::storage_name(s)) + (gated ? " reglu" : " relu");
      const uint64_t seed = 8100;
      const Stored x(s, seed, "x", tokens * d, 2.0), up(s, seed, "w1", d * d_ff, 0.12),
          v(s, seed, "v", d * d_ff, 0.12), b1(s, seed, "b1", d_ff, 0.12),
          w2(s, seed, "w2", d_ff * d, 0.06), b2(s, seed, "b2", d, 0.06);
      std::vector<uint8_t> y(static_cast<size_t>(tokens * d) * fast::storage_bytes(s));
      const Storage gs = gpu_storage(s);
      const auto run = [&] {
        if (gated) {
          glu_ffn(Activation::relu, gs, x.p(), up.p(), v.p(), w2.p(), y.data(), tokens, d, d_ff);
        } else {
          ffn(Activation::relu, gs, x.p(), up.p(), b1.p(), w2.p(), b2.p(), y.data(), tokens, d,
              d_ff);
        }
        return y;
      };
      EXPECT_TRUE(run() == relu_ffn_on_host(s, gated, x, up, v, b1, w2, b2, tokens, d, d_ff))
          << where;
      expect_deterministic(run, where);
    }
  }
}

TEST(GpuFfn, EveryActivationIsDeterministic) {
  LMO_REQUIRE_GPU();
  const int64_t tokens = 5, d = 48, d_ff = 130;
  const fast::Storage s = fast::Storage::bf16;
  const Stored x(s, 8200, "x", tokens * d, 2.0), w(s, 8200, "w", d * d_ff, 0.15),
      v(s, 8200, "v", d * d_ff, 0.15), w2(s, 8200, "w2", d_ff * d, 0.09);
  for (const Activation act :
       {Activation::relu, Activation::gelu, Activation::gelu_tanh, Activation::silu}) {
    std::vector<uint8_t> y(static_cast<size_t>(tokens * d) * 2);
    expect_deterministic(
        [&] {
          ffn(act, Storage::bf16, x.p(), w.p(), nullptr, w2.p(), nullptr, y.data(), tokens, d,
              d_ff);
          return y;
        },
        "ffn activation " + std::to_string(static_cast<int>(act)));
    expect_deterministic(
        [&] {
          glu_ffn(act, Storage::bf16, x.p(), w.p(), v.p(), w2.p(), y.data(), tokens, d, d_ff);
          return y;
        },
        "glu_ffn activation " + std::to_string(static_cast<int>(act)));
  }
}

TEST(GpuDecoderBlock, EveryLayoutIsFiniteAndDeterministic) {
  LMO_REQUIRE_GPU();
  DecoderBlockArgs a;
  a.tokens = 7;
  a.d = 32;
  a.heads = 4;
  a.kv_heads = 2;
  a.d_ff = 80;
  a.eps = 1e-6f;
  const int64_t kv = a.kv_heads * (a.d / a.heads);
  for (fast::Storage s : fast::kAllStorages) {
    const uint64_t seed = 8300;
    const Stored x(s, seed, "x", a.tokens * a.d, 2.0), wq(s, seed, "w_q", a.d * a.d, 0.2),
        wk(s, seed, "w_k", a.d * kv, 0.2), wv(s, seed, "w_v", a.d * kv, 0.2),
        wo(s, seed, "w_o", a.d * a.d, 0.2), w1(s, seed, "w1", a.d * a.d_ff, 0.2),
        v(s, seed, "v", a.d * a.d_ff, 0.2), w2(s, seed, "w2", a.d_ff * a.d, 0.1),
        g1(s, seed, "g1", a.d, 1.0), g2(s, seed, "g2", a.d, 1.0), g3(s, seed, "g3", a.d, 1.0),
        g4(s, seed, "g4", a.d, 1.0);
    DecoderBlockWeights w;
    w.w_q = wq.p();
    w.w_k = wk.p();
    w.w_v = wv.p();
    w.w_o = wo.p();
    w.w1 = w1.p();
    w.v = v.p();
    w.w2 = w2.p();
    w.attn_norm = g1.p();
    w.ffn_norm = g2.p();
    w.attn_post_norm = g3.p();
    w.ffn_post_norm = g4.p();
    for (const BlockLayout layout :
         {BlockLayout::post_ln, BlockLayout::pre_ln, BlockLayout::double_norm, BlockLayout::olmo2,
          BlockLayout::parallel}) {
      for (const BlockFfn kind : {BlockFfn::swiglu, BlockFfn::gelu}) {
        a.layout = layout;
        a.ffn = kind;
        const std::string where = std::string(fast::storage_name(s)) + " layout " +
                                  std::to_string(static_cast<int>(layout)) + " ffn " +
                                  std::to_string(static_cast<int>(kind));
        std::vector<uint8_t> y(static_cast<size_t>(a.tokens * a.d) * fast::storage_bytes(s));
        const auto run = [&] {
          decoder_block(gpu_storage(s), x.p(), w, y.data(), a);
          return y;
        };
        run();
        for (int64_t i = 0; i < a.tokens * a.d; ++i) {
          ASSERT_TRUE(std::isfinite(fast::load_f32(s, y.data(), i))) << where << " element " << i;
        }
        expect_deterministic(run, where);
      }
    }
  }
}

}  // namespace
}  // namespace lmo::gpu
