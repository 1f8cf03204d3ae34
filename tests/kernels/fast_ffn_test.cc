// fast/ffn.h against reference/ffn.h: the exact mp result on the same stored inputs, judged with
// the policy table's ffn and glu_ffn rows (naive_relative: the naive run is the reference in
// simulated f32), for every activation, storage format, biased and bias-free form and every
// supported Highway target; a shape of several row and column tiles (exact values there from the
// reference in double, whose error is far below f32's); bitwise identical bytes for 1, 2 and 4
// threads; argument checks that name the argument.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "fast/ffn.h"
#include "oracle/core/inputs.h"
#include "reference/ffn.h"
#include "tests/support/fast_cases.h"

namespace lmo::fast {
namespace {

using namespace lmo::testdata;
using ref::mp;

using F32 = ref::Sim<ref::Format::f32>;  // the naive run's number type

struct Shape {
  int64_t tokens, d, d_ff;
};

enum class Form { plain, biased, gated };

// The activations as the two libraries name them.
struct Act {
  Activation fast;
  ref::Activation ref;
  const char* name;
};
constexpr Act kActs[] = {{Activation::relu, ref::Activation::kReLU, "relu"},
                         {Activation::gelu, ref::Activation::kGELU, "gelu"},
                         {Activation::gelu_tanh, ref::Activation::kGELUTanh, "gelu_tanh"},
                         {Activation::silu, ref::Activation::kSiLU, "silu"}};

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

void run(Form f, Activation act, Storage s, const Shape& c, const Inputs& in,
         oracle::GuardedBuffer& y) {
  y.arm();
  if (f == Form::gated) {
    glu_ffn(act, s, in.x.bytes().data(), in.w1.bytes().data(), in.v.bytes().data(),
            in.w2.bytes().data(), y.data(), c.tokens, c.d, c.d_ff);
  } else {
    const bool b = f == Form::biased;
    ffn(act, s, in.x.bytes().data(), in.w1.bytes().data(), b ? in.b1.bytes().data() : nullptr,
        in.w2.bytes().data(), b ? in.b2.bytes().data() : nullptr, y.data(), c.tokens, c.d, c.d_ff);
  }
}

const char* op_of(Form f) { return f == Form::gated ? "glu_ffn" : "ffn"; }
const char* form_name(Form f) {
  return f == Form::gated ? "gated" : f == Form::biased ? "biased" : "bias-free";
}

// Judged on every target against `exact`, then thread invariance for 1, 2 and 4 threads.
void check(Form f, const Act& a, Storage s, const Shape& c, const Inputs& in,
           const std::vector<mp>& exact) {
  const std::string what = std::string(form_name(f)) + " " + a.name + " " +
                           std::string(storage_name(s)) + " " + std::to_string(c.tokens) + "x" +
                           std::to_string(c.d) + "x" + std::to_string(c.d_ff);
  const std::vector<double> naive = as_doubles(reference_ffn<F32>(f, a.ref, c, in));
  oracle::GuardedBuffer y(dtype_of(s), {c.tokens, c.d});
  for_each_target([&](const std::string& target) {
    run(f, a.fast, s, c, in, y);
    expect_judged(op_of(f), "", exact, y, naive, what + " " + target);
  });
  expect_thread_invariant(
      [&] {
        run(f, a.fast, s, c, in, y);
        return bytes_of(y);
      },
      what, {2, 4});
}

// One tile: every activation, storage and form, exact values in mp.
void check_small(Form f, uint64_t seed) {
  const Shape c{5, 12, 20};
  for (Storage s : kAllStorages) {
    const Inputs in = ffn_inputs(c, s, seed);
    for (const Act& a : kActs) check(f, a, s, c, in, reference_ffn<mp>(f, a.ref, c, in));
  }
}

TEST(FastFfn, BiasFreeEveryActivationAndStorage) { check_small(Form::plain, 6101); }
TEST(FastFfn, BiasedEveryActivationAndStorage) { check_small(Form::biased, 6102); }
TEST(FastGluFfn, EveryActivationAndStorage) { check_small(Form::gated, 6103); }

// Two row tiles (32 rows each, the last partial) and two hidden and output column tiles (256
// columns each): the tiles' seams, and thread counts that split the tiles differently. Two
// (form, storage) pairs only: the naive run in simulated f32 dominates the test's time.
TEST(FastFfn, SeveralTilesMatchTheReference) {
  const Shape c{37, 260, 270};
  for (const auto& [f, s, a] : {std::tuple{Form::biased, Storage::f32, kActs[2]},
                                std::tuple{Form::gated, Storage::bf16, kActs[3]}}) {
    const Inputs in = ffn_inputs(c, s, 6104);
    const std::vector<double> exact_d = reference_ffn<double>(f, a.ref, c, in);
    check(f, a, s, c, in, std::vector<mp>(exact_d.begin(), exact_d.end()));
  }
}

// Not one hidden value is rounded to the storage format: in bf16 a bias-free ReLU FFN whose
// hidden layer went through bf16 would be off from the f32-hidden result by far more than the
// final rounding; here the bf16 output equals the f32 run's output rounded once.
TEST(FastFfn, HiddenStaysF32WhateverTheStorage) {
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
    run(f, Activation::gelu, Storage::bf16, c, bf, yb);
    run(f, Activation::gelu, Storage::f32, c, f32, yf);
    const auto* pb = static_cast<const uint16_t*>(yb.data());
    const auto* pf = static_cast<const float*>(yf.data());
    for (int64_t i = 0; i < c.tokens * c.d; ++i) {
      EXPECT_EQ(pb[i], bf16_from_f32(pf[i])) << form_name(f) << " element " << i;
    }
  }
}

TEST(FastFfn, ZeroTokensWritesNothing) {
  EXPECT_NO_THROW(ffn(Activation::relu, Storage::f32, nullptr, nullptr, nullptr, nullptr, nullptr,
                      nullptr, 0, 4, 8));
  EXPECT_NO_THROW(glu_ffn(Activation::silu, Storage::bf16, nullptr, nullptr, nullptr, nullptr,
                          nullptr, 0, 4, 8));
}

TEST(FastFfn, BadArgumentsThrowNamingTheArgument) {
  std::vector<float> buf(64, 0.5f);
  float* p = buf.data();
  const auto f = [&](Activation act, Storage s, const void* x, const void* w1, const void* w2,
                     void* y, int64_t t, int64_t d, int64_t dff) {
    return [=] { ffn(act, s, x, w1, nullptr, w2, nullptr, y, t, d, dff); };
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
  expect_rejects([&] { glu_ffn(relu, Storage::f32, p, nullptr, p, p, p, 1, 2, 2); }, "w is null");
  expect_rejects([&] { glu_ffn(relu, Storage::f32, p, p, nullptr, p, p, 1, 2, 2); }, "v is null");
  expect_rejects([&] { glu_ffn(relu, Storage::f32, p, p, p, p, p, 1, 2, -3); }, "d_ff");
}

}  // namespace
}  // namespace lmo::fast
