// The FFN kernels of one kernel library (tests/support/kernel_libraries.h: fast/ on every Highway
// target, or gpu/) against reference/ffn.h: the exact mp result on the same stored inputs, judged
// with the policy table's ffn and glu_ffn rows (naive_relative: the naive run is the reference in
// simulated f32), for every activation, storage format, biased and bias-free form; a shape of
// several tiles and blocks (exact values there from the reference in double, whose error is far
// below f32's); the hidden layer kept in f32; the library's repeatability check; argument checks
// that name the argument (before any CUDA call, so on any machine). The CUDA kernels besides:
// the ReLU FFN bitwise equal to its host evaluation by gpu/ffn_math.h, the decoder block's
// arguments, and every block layout finite and deterministic.
#include "reference/ffn.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "oracle/core/inputs.h"
#include "tests/support/fast_cases.h"
#include "tests/support/kernel_libraries.h"
#ifdef LMO_TESTED_KERNELS_GPU
#include "gpu/activation_f32.h"
#include "gpu/ffn_math.h"
#endif

namespace lmo::testdata {
namespace {

using fast::Storage;
using ref::mp;

using F32 = ref::Sim<ref::Format::f32>;  // the naive run's number type

struct Shape {
  int64_t tokens, d, d_ff;
};

enum class Form { plain, biased, gated };

// The activations as the two libraries name them.
struct Act {
  kernels::Activation fast;
  ref::Activation ref;
  const char* name;
};
constexpr Act kActs[] = {{kernels::Activation::relu, ref::Activation::kReLU, "relu"},
                         {kernels::Activation::gelu, ref::Activation::kGELU, "gelu"},
                         {kernels::Activation::gelu_tanh, ref::Activation::kGELUTanh, "gelu_tanh"},
                         {kernels::Activation::silu, ref::Activation::kSiLU, "silu"}};

// x normal; weights and biases uniform in ±1/√fan-in, as the oracle's ffn ops draw them. w1 is W
// of the gated form, v its V.
struct Inputs {
  ref::Tensor x, w1, v, b1, w2, b2;
};

Inputs ffn_inputs(const Shape& c, Storage s, uint64_t seed) {
  const ref::DType t = dtype_of(s);
  const double in = 1 / std::sqrt(static_cast<double>(c.d));
  const double hid = 1 / std::sqrt(static_cast<double>(c.d_ff));
  return {fast_normal(seed, "x", s, {c.tokens, c.d}),
          oracle::uniform(seed, "w1", t, {c.d, c.d_ff}, -in, in),
          oracle::uniform(seed, "v", t, {c.d, c.d_ff}, -in, in),
          oracle::uniform(seed, "b1", t, {c.d_ff}, -in, in),
          oracle::uniform(seed, "w2", t, {c.d_ff, c.d}, -hid, hid),
          oracle::uniform(seed, "b2", t, {c.d}, -hid, hid)};
}

template <class T>
std::vector<T> reference_ffn(Form f, ref::Activation act, const Shape& c, const Inputs& in) {
  const ref::Mat<T> x(c.tokens, c.d, values_as<T>(in.x));
  const ref::Mat<T> w1(c.d, c.d_ff, values_as<T>(in.w1));
  const ref::Mat<T> w2(c.d_ff, c.d, values_as<T>(in.w2));
  if (f == Form::gated) {
    const ref::Mat<T> v(c.d, c.d_ff, values_as<T>(in.v));
    return ref::glu_ffn<T>(x, w1, v, w2, act).data;
  }
  if (f == Form::biased) {
    const std::vector<T> b1 = values_as<T>(in.b1), b2 = values_as<T>(in.b2);
    return ref::ffn_with_bias<T>(x, w1, b1, w2, b2, act).data;
  }
  return ref::ffn<T>(x, w1, w2, act).data;
}

template <class Lib>
void run(Form f, kernels::Activation act, Storage s, const Shape& c, const Inputs& in,
         oracle::GuardedBuffer& y) {
  y.arm();
  if (f == Form::gated) {
    Lib::glu_ffn(act, s, in.x.bytes().data(), in.w1.bytes().data(), in.v.bytes().data(),
                 in.w2.bytes().data(), y.data(), c.tokens, c.d, c.d_ff);
  } else {
    const bool b = f == Form::biased;
    Lib::ffn(act, s, in.x.bytes().data(), in.w1.bytes().data(), b ? in.b1.bytes().data() : nullptr,
             in.w2.bytes().data(), b ? in.b2.bytes().data() : nullptr, y.data(), c.tokens, c.d,
             c.d_ff);
  }
}

const char* op_of(Form f) { return f == Form::gated ? "glu_ffn" : "ffn"; }
const char* form_name(Form f) {
  return f == Form::gated ? "gated" : f == Form::biased ? "biased" : "bias-free";
}

// Judged on every variant of the library against `exact`, then its repeatability check.
template <class Lib>
void check(Form f, const Act& a, Storage s, const Shape& c, const Inputs& in,
           const std::vector<mp>& exact) {
  const std::string what = std::string(form_name(f)) + " " + a.name + " " +
                           std::string(storage_name(s)) + " " + std::to_string(c.tokens) + "x" +
                           std::to_string(c.d) + "x" + std::to_string(c.d_ff);
  const std::vector<double> naive = as_doubles(reference_ffn<F32>(f, a.ref, c, in));
  oracle::GuardedBuffer y(dtype_of(s), {c.tokens, c.d});
  Lib::for_each_variant([&](const std::string& variant) {
    run<Lib>(f, a.fast, s, c, in, y);
    expect_judged(op_of(f), "", exact, y, naive, what + " " + variant);
  });
  Lib::expect_repeatable(
      [&] {
        run<Lib>(f, a.fast, s, c, in, y);
        return bytes_of(y);
      },
      what);
}

// One tile: every activation, storage and form, exact values in mp.
template <class Lib>
void check_small(Form f, uint64_t seed) {
  const Shape c{5, 12, 20};
  for (Storage s : fast::kAllStorages) {
    const Inputs in = ffn_inputs(c, s, seed);
    for (const Act& a : kActs) check<Lib>(f, a, s, c, in, reference_ffn<mp>(f, a.ref, c, in));
  }
}

template <class Lib>
class KernelFfn : public ::testing::Test {};
TYPED_TEST_SUITE(KernelFfn, TestedKernels);

TYPED_TEST(KernelFfn, BiasFreeEveryActivationAndStorage) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check_small<TypeParam>(Form::plain, 6101);
}
TYPED_TEST(KernelFfn, BiasedEveryActivationAndStorage) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check_small<TypeParam>(Form::biased, 6102);
}
TYPED_TEST(KernelFfn, GatedEveryActivationAndStorage) {
  LMO_REQUIRE_KERNELS(TypeParam);
  check_small<TypeParam>(Form::gated, 6103);
}

// Two row tiles of the Highway kernels (32 rows each, the last partial) and two hidden and output
// column tiles (256 columns each; on the GPU, blocks of 256 threads, the last partial): the
// seams, and thread counts that split the tiles differently. Two (form, storage) pairs only: the
// naive run in simulated f32 dominates the test's time.
TYPED_TEST(KernelFfn, SeveralTilesMatchTheReference) {
  LMO_REQUIRE_KERNELS(TypeParam);
  const Shape c{37, 260, 270};
  for (const auto& [f, s, a] : {std::tuple{Form::biased, Storage::f32, kActs[2]},
                                std::tuple{Form::gated, Storage::bf16, kActs[3]}}) {
    const Inputs in = ffn_inputs(c, s, 6104);
    const std::vector<double> exact_d = reference_ffn<double>(f, a.ref, c, in);
    check<TypeParam>(f, a, s, c, in, std::vector<mp>(exact_d.begin(), exact_d.end()));
  }
}

// Not one hidden value is rounded to the storage format: in bf16 a bias-free ReLU FFN whose
// hidden layer went through bf16 would be off from the f32-hidden result by far more than the
// final rounding; here the bf16 output equals the f32 run's output rounded once.
TYPED_TEST(KernelFfn, HiddenStaysF32WhateverTheStorage) {
  LMO_REQUIRE_KERNELS(TypeParam);
  const Shape c{3, 16, 40};
  const Inputs bf = ffn_inputs(c, Storage::bf16, 6105);
  // The same values in f32 storage (bf16 widens exactly).
  Inputs f32 = bf;
  for (ref::Tensor* t : {&f32.x, &f32.w1, &f32.v, &f32.b1, &f32.w2, &f32.b2}) {
    ref::Tensor w(ref::DType::f32, t->shape());
    for (int64_t i = 0; i < t->numel(); ++i) w.set(i, t->get(i));
    *t = w;
  }
  oracle::GuardedBuffer yb(ref::DType::bf16, {c.tokens, c.d}), yf(ref::DType::f32, {c.tokens, c.d});
  for (Form f : {Form::plain, Form::biased, Form::gated}) {
    run<TypeParam>(f, kernels::Activation::gelu, Storage::bf16, c, bf, yb);
    run<TypeParam>(f, kernels::Activation::gelu, Storage::f32, c, f32, yf);
    const auto* pb = static_cast<const uint16_t*>(yb.data());
    const auto* pf = static_cast<const float*>(yf.data());
    for (int64_t i = 0; i < c.tokens * c.d; ++i) {
      EXPECT_EQ(pb[i], fast::bf16_from_f32(pf[i])) << form_name(f) << " element " << i;
    }
  }
}

// No tokens: nothing is read or written, null pointers are fine (no device needed).
TYPED_TEST(KernelFfn, ZeroTokensWritesNothing) {
  EXPECT_NO_THROW(TypeParam::ffn(kernels::Activation::relu, Storage::f32, nullptr, nullptr, nullptr,
                                 nullptr, nullptr, nullptr, 0, 4, 8));
  EXPECT_NO_THROW(TypeParam::glu_ffn(kernels::Activation::silu, Storage::bf16, nullptr, nullptr,
                                     nullptr, nullptr, nullptr, 0, 4, 8));
}

// Validation happens before any kernel runs (before any CUDA call), so it holds on every machine.
TYPED_TEST(KernelFfn, BadArgumentsThrowNamingTheArgument) {
  using kernels::Activation;
  std::vector<float> buf(64, 0.5f);
  float* p = buf.data();
  const auto f = [&](Activation act, Storage s, const void* x, const void* w1, const void* w2,
                     void* y, int64_t t, int64_t d, int64_t dff) {
    return [=] { TypeParam::ffn(act, s, x, w1, nullptr, w2, nullptr, y, t, d, dff); };
  };
  const Activation relu = Activation::relu;
  expect_rejects(f(relu, Storage::f32, p, p, p, p, -1, 2, 2), "tokens");
  expect_rejects(f(relu, Storage::f32, p, p, p, p, 1, 0, 2), "d is 0");
  expect_rejects(f(relu, Storage::f32, p, p, p, p, 1, 2, 0), "d_ff");
  expect_rejects(f(relu, Storage::f32, p, p, p, p, 1, int64_t{1} << 31, 2), "2^31");
  expect_rejects(f(relu, Storage::f32, nullptr, p, p, p, 1, 2, 2), "x is null");
  expect_rejects(f(relu, Storage::f32, p, nullptr, p, p, 1, 2, 2), "w1 is null");
  expect_rejects(f(relu, Storage::f32, p, p, nullptr, p, 1, 2, 2), "w2 is null");
  expect_rejects(f(relu, Storage::f32, p, p, p, nullptr, 1, 2, 2), "y is null");
  expect_rejects(f(static_cast<Activation>(9), Storage::f32, p, p, p, p, 1, 2, 2), "activation");
  expect_rejects(f(relu, static_cast<Storage>(7), p, p, p, p, 1, 2, 2), "storage");
  expect_rejects([&] { TypeParam::glu_ffn(relu, Storage::f32, p, nullptr, p, p, p, 1, 2, 2); },
                 "w is null");
  expect_rejects([&] { TypeParam::glu_ffn(relu, Storage::f32, p, p, nullptr, p, p, 1, 2, 2); },
                 "v is null");
  expect_rejects([&] { TypeParam::glu_ffn(relu, Storage::f32, p, p, p, p, p, 1, 2, -3); }, "d_ff");
}

#ifdef LMO_TESTED_KERNELS_GPU
// The CUDA kernels' own checks.
using namespace lmo::gpu;

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

// The FFN's argument checks are KernelFfn.BadArgumentsThrowNamingTheArgument's; here, that the
// messages name gpu::'s functions, and the decoder block's checks.
TEST(GpuFfnArguments, RejectedBeforeAnyCudaCall) {
  const std::vector<float> x(2 * 3, 1.0f), w(3 * 4, 1.0f), w2(4 * 3, 1.0f);
  std::vector<float> y(2 * 3);
  expect_rejects(
      [&] {
        ffn(Activation::relu, Storage::f32, x.data(), nullptr, nullptr, w2.data(), nullptr,
            y.data(), 2, 3, 4);
      },
      "gpu::ffn: w1 is null");
  expect_rejects(
      [&] {
        glu_ffn(Activation::silu, Storage::f32, x.data(), w.data(), nullptr, w2.data(), y.data(), 2,
                3, 4);
      },
      "gpu::glu_ffn: v is null");

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
  const auto widen = [](float f) { return f; };
  const f32::ReluFn<> relu;
  std::vector<float> h(static_cast<size_t>(tokens * d_ff));
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t c = 0; c < d_ff; ++c) {
      const float* xr = x.f.data() + t * d;
      const float xw = ffn_math::column_dot(xr, up.f.data() + c, d, d_ff, widen);
      h[static_cast<size_t>(t * d_ff + c)] =
          gated ? ffn_math::glu_hidden(relu, xw,
                                       ffn_math::column_dot(xr, v.f.data() + c, d, d_ff, widen))
                : ffn_math::ffn_hidden(relu, xw, b1.f[static_cast<size_t>(c)]);
    }
  }
  std::vector<uint8_t> y(static_cast<size_t>(tokens * d) * fast::storage_bytes(s));
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t j = 0; j < d; ++j) {
      float sum = ffn_math::column_dot(h.data() + t * d_ff, w2.f.data() + j, d_ff, d, widen);
      if (!gated) sum = f32::add(sum, b2.f[static_cast<size_t>(j)]);
      fast::store_f32(s, y.data(), t * d + j, sum);
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

#endif

}  // namespace
}  // namespace lmo::testdata
