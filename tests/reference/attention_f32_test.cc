// The native f32 attention kernel (reference/attention_f32.h) against the generic template on
// Sim<f32> (whose every operation sim_float_test checks against MPFR): the same bits, element by
// element, across masks, GQA/MQA, widths off the vector and block sizes, logit soft caps and
// biases, fully masked rows, subnormal products, overflowing logits (NaN rows) and a thread in
// flush-to-zero mode.
#include "reference/attention_f32.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "reference/attention.h"
#include "reference/contraction.h"
#include "reference/parallel.h"
#include "tests/support/reference_attention_shape.h"

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace lmo::ref {
namespace {

using F32 = Sim<Format::f32>;

using Shape = testdata::RefAttentionShape;

Mat<F32> floats(int64_t rows, int64_t cols, double scale, uint64_t seed) {
  return testdata::ref_attention_values<F32>(rows, cols, scale, seed);
}

struct Problem {
  Mat<F32> q, k, v;
  AttentionConfig cfg;
};

Problem make(const Shape& s, uint64_t seed) {
  return {floats(s.tq, s.h * s.d, s.qk_scale, seed), floats(s.tk, s.g * s.d, s.qk_scale, seed + 1),
          floats(s.tk, s.g * s.dv, s.v_scale, seed + 2), testdata::ref_attention_config(s)};
}

Mat<F32> generic(const Problem& r) {
  set_native_f32_attention_for_testing(false);
  Mat<F32> o = attention<F32>(r.q, r.k, r.v, r.cfg);
  set_native_f32_attention_for_testing(true);
  return o;
}

Mat<F32> native(const Problem& r) {
  Mat<F32> o(r.q.rows, r.cfg.heads * r.cfg.v_dim());
  EXPECT_TRUE(attention_f32_native(r.q, r.k, r.v, r.cfg, false, o));
  return o;
}

// Counts elements by kind, so that each shape shows it reached what it is there for.
struct Kinds {
  int64_t nan = 0, subnormal = 0;
};
Kinds kinds(const Mat<F32>& m) {
  Kinds k;
  for (const F32& x : m.data) {
    const double v = static_cast<double>(x);
    k.nan += std::isnan(v);
    k.subnormal += v != 0 && std::fabs(v) < 0x1p-126;
  }
  return k;
}

void expect_same_bits(const Mat<F32>& want, const Mat<F32>& got) {
  ASSERT_EQ(want.data.size(), got.data.size());
  for (size_t i = 0; i < want.data.size(); ++i) {
    ASSERT_EQ(want.data[i].bits(), got.data[i].bits())
        << "element " << i << ": generic " << static_cast<double>(want.data[i]) << ", native "
        << static_cast<double>(got.data[i]);
  }
}

// Gemma 2's logit soft cap (50; 5 for a cap most logits saturate), and a logit bias (ALiBi-like
// slopes times the distance, plus seeded noise), on the shapes whose names ask for them.
void add_cap_and_bias(const std::string& name, Problem& r, uint64_t seed) {
  if (name.find("cap 50") != std::string::npos) r.cfg.soft_cap = mp(50);
  if (name.find("cap 5,") != std::string::npos) r.cfg.soft_cap = mp(5);
  if (name.find("bias") == std::string::npos) return;
  const Mat<F32> noise = floats(r.cfg.heads * r.q.rows, r.k.rows, 1, seed + 7);
  r.cfg.logit_bias.assign(static_cast<size_t>(r.cfg.heads), Mat<mp>(r.q.rows, r.k.rows));
  for (int64_t h = 0; h < r.cfg.heads; ++h) {
    for (int64_t i = 0; i < r.q.rows; ++i) {
      for (int64_t j = 0; j < r.k.rows; ++j) {
        r.cfg.logit_bias[static_cast<size_t>(h)](i, j) =
            mp(-0.25 * static_cast<double>(h + 1) * std::fabs(static_cast<double>(i - j))) +
            mp(static_cast<double>(noise(h * r.q.rows + i, j)));
      }
    }
  }
}

TEST(NativeF32Attention, IsTheGenericSimKernelBitForBit) {
  const std::vector<Shape> shapes = {
      {"causal MHA, cap 50", 37, 37, 2, 2, 16, 16, MaskKind::kCausal},
      {"GQA, cap 5, logits scaled up", 40, 40, 4, 2, 24, 24, MaskKind::kNone, 0, 4},
      {"causal GQA with a logit bias", 33, 33, 4, 2, 16, 16, MaskKind::kCausal},
      {"window 7, cap 50 and a logit bias", 30, 30, 2, 1, 16, 16, MaskKind::kSlidingWindow, 7},
      {"causal MHA", 37, 37, 2, 2, 16, 16, MaskKind::kCausal},
      {"GQA, d 40, 70 keys, 80 value components", 70, 70, 4, 2, 40, 80, MaskKind::kNone},
      {"MQA, d 37, value dim 70", 20, 20, 3, 1, 37, 70, MaskKind::kCausal},
      {"window 5", 40, 40, 2, 1, 16, 16, MaskKind::kSlidingWindow, 5},
      {"documents", 80, 80, 2, 2, 12, 12, MaskKind::kDocument},
      {"decode over 150 keys, d 128", 1, 150, 8, 2, 128, 128, MaskKind::kCausal},
      {"more queries than keys: fully masked rows", 9, 5, 2, 2, 8, 8, MaskKind::kCausal},
      {"no max subtracted", 30, 30, 2, 2, 16, 16, MaskKind::kCausal, 0, 1, false},
      // Values near 2^-140, subnormal in f32: so are the products p·v, their sums and the
      // outputs (and the q·k products near 2^-132, though logits that small all give e^0).
      {"subnormal values", 16, 200, 2, 2, 24, 24, MaskKind::kNone, 0, 0x1p-66, true, 0x1p-140},
      // Products near 2^128: some dot products overflow to ±inf, inf − inf is NaN.
      {"overflowing logits", 16, 40, 2, 2, 16, 16, MaskKind::kCausal, 0, 0x1p64},
  };
  uint64_t seed = 1;
  for (const Shape& s : shapes) {
    SCOPED_TRACE(s.name);
    Problem r = make(s, seed += 3);
    add_cap_and_bias(s.name, r, seed);
    const Mat<F32> want = generic(r);
    expect_same_bits(want, native(r));
    // attention<Sim<f32>> itself takes the native kernel.
    expect_same_bits(want, attention<F32>(r.q, r.k, r.v, r.cfg));
    const Kinds k = kinds(want);
    if (s.name.starts_with("more queries")) {
      EXPECT_EQ(k.nan, 4 * 2 * 8);
    } else if (s.name.starts_with("overflowing")) {
      EXPECT_GT(k.nan, 0);
    } else if (s.name.starts_with("subnormal values")) {
      EXPECT_GT(k.subnormal, 0);
    } else {
      EXPECT_EQ(k.nan, 0);
    }
  }
}

TEST(NativeF32Attention, ResultsDoNotDependOnTheThreadCount) {
  const Problem r = make({"", 33, 33, 4, 2, 72, 72, MaskKind::kCausal}, 99);
  set_reference_threads(1);
  const Mat<F32> one = native(r);
  set_reference_threads(3);
  const Mat<F32> three = native(r);
  set_reference_threads(0);
  expect_same_bits(one, three);
}

#if defined(__x86_64__)
// A thread that flushes subnormals (FTZ) and reads them as zero (DAZ) would compute other values
// on the hardware: its rows take the generic code, whose operations do not depend on the mode.
TEST(NativeF32Attention, RowsOfAFlushToZeroThreadTakeTheGenericCode) {
  const Problem r =
      make({"", 16, 200, 2, 2, 24, 24, MaskKind::kNone, 0, 0x1p-66, true, 0x1p-140}, 7);
  const Mat<F32> want = generic(r);
  ASSERT_GT(kinds(want).subnormal, 0) << "outputs a flushing kernel would store as 0";
  set_reference_threads(1);  // the rows run on this thread, in its mode
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | 0x8040u);
  volatile float tiny = 0x1p-70f;
  const float flushed = tiny * tiny;  // 2^-140: subnormal, flushed in this mode
  const Mat<F32> got = native(r);
  _mm_setcsr(saved);
  set_reference_threads(0);
  ASSERT_EQ(flushed, 0.0f) << "the mode did not take effect: the test would show nothing";
  expect_same_bits(want, got);
}
#endif

TEST(NativeF32Attention, DeclinesWhatItDoesNotCover) {
  const Problem base = make({"", 8, 8, 2, 2, 8, 8, MaskKind::kCausal}, 5);
  Mat<F32> o(8, 16);
  EXPECT_TRUE(attention_f32_native(base.q, base.k, base.v, base.cfg, false, o));
  EXPECT_FALSE(attention_f32_native(base.q, base.k, base.v, base.cfg, true, o))
      << "FMA contraction";
  set_native_f32_attention_for_testing(false);
  EXPECT_FALSE(attention_f32_native(base.q, base.k, base.v, base.cfg, false, o));
  set_native_f32_attention_for_testing(true);
}

}  // namespace
}  // namespace lmo::ref
