// The GPU fp8 kernels' per-element math (gpu/fp8_math.h) on the host, where no device is needed:
// the very functions gpu/fp8.cuh runs, compiled by the host compiler (with -ffp-contract=off, so
// that every f32 operation rounds once as gpu/f32_ops.h's device intrinsics do). Against
// independent truth:
//   - decode: every one of the 256 patterns of E4M3 and E5M2 is the reference's exact value
//     (reference/formats.h's decoder, NaN and E5M2's infinities included);
//   - encode: f32 values over the whole of both formats' ranges (a stride through the f32
//     patterns, every fp8 value, every midpoint between neighbours and the f32 values next to
//     each midpoint, beyond ±M, ±0, ±inf, NaN) give the reference's saturating nearest-even
//     rounding;
//   - NaN and ±∞ as docs/nan-inf.md's fp8 rows say;
//   - fp8_quantize on the known answers computed with exact rationals (tests/data/fp8.json),
//     bit for bit;
//   - the built-in fp8_quantize, fp8_dequantize and fp8_linear cases evaluated as the kernels
//     evaluate them (scales per tile, q, q·s, DeepGEMM's per-block order), judged by the oracle's
//     run_and_judge (the exact reference and the policy table) in every storage each case lists.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/fp8_math.h"
#include "oracle/backends/fp8_adapters.h"
#include "oracle/backends/kernel_call.h"
#include "oracle/cases/case.h"
#include "oracle/ops/fp8.h"
#include "reference/formats.h"
#include "tests/support/float_tensors.h"
#include "tests/support/oracle_harness.h"
#include "tests/support/test_data.h"

namespace lmo::gpu {
namespace {

using kernels::Fp8Format;
using ref::Format;

constexpr Fp8Format kFormats[] = {Fp8Format::e4m3, Fp8Format::e5m2};
Format ref_format(Fp8Format f) { return f == Fp8Format::e4m3 ? Format::e4m3 : Format::e5m2; }

TEST(GpuFp8Math, DecodeIsExactForEveryPattern) {
  for (Fp8Format f : kFormats) {
    for (int p = 0; p < 256; ++p) {
      const double want = ref::decode<double>(ref_format(f), static_cast<uint64_t>(p));
      const double got = fp8_math::decode(static_cast<uint8_t>(p), f);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << p;
      } else {
        EXPECT_EQ(got, want) << ref::format_name(ref_format(f)) << " pattern " << p;
        EXPECT_EQ(std::signbit(got), std::signbit(want)) << p;
      }
    }
  }
}

// The reference's saturating nearest-even rounding of v, as a value.
double reference_rounding(Fp8Format f, float v) {
  const Format rf = ref_format(f);
  return ref::decode<double>(rf, ref::encode(rf, static_cast<double>(v), ref::Overflow::kSaturate));
}

void expect_encodes(Fp8Format f, float v) {
  const double want = reference_rounding(f, v);
  const uint8_t bits = fp8_math::encode(v, f);
  const double got = fp8_math::decode(bits, f);
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << v;
    return;
  }
  EXPECT_EQ(got, want) << ref::format_name(ref_format(f)) << " encode(" << v << ") gave pattern "
                       << int{bits};
  EXPECT_EQ(std::signbit(got), std::signbit(want)) << v;
}

TEST(GpuFp8Math, EncodeRoundsAsTheReferenceOverTheWholeRange) {
  for (Fp8Format f : kFormats) {
    const float m = fp8_math::max_of(f);
    // A stride through the positive f32 patterns up to 4·M (7919 is prime: it visits every
    // residue of the low significand bits), both signs.
    const uint32_t top = f32::bits_of(4 * m);
    for (uint32_t u = 0; u <= top; u += 7919) {
      expect_encodes(f, f32::from_bits(u));
      expect_encodes(f, -f32::from_bits(u));
    }
    // Every finite fp8 value, the midpoints to its upper neighbour and the f32 values beside them
    // (where ties to even decide, and where one f32 ulp must not be mistaken for a tie).
    for (int p = 0; p < 128; ++p) {
      const double lo = ref::decode<double>(ref_format(f), static_cast<uint64_t>(p));
      const double hi = ref::decode<double>(ref_format(f), static_cast<uint64_t>(p + 1));
      if (!std::isfinite(lo)) continue;
      for (float s : {1.0f, -1.0f}) expect_encodes(f, s * static_cast<float>(lo));
      if (!std::isfinite(hi)) continue;
      const auto mid = static_cast<float>((lo + hi) / 2);  // exact: fp8 midpoints fit in f32
      for (float v : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f)}) {
        expect_encodes(f, v);
        expect_encodes(f, -v);
      }
    }
    for (float v : {0.0f, -0.0f, m, std::nextafter(m, 1e30f), 1e30f, INFINITY, -INFINITY, NAN}) {
      expect_encodes(f, v);
      expect_encodes(f, -v);
    }
  }
}

// docs/nan-inf.md's fp8 rows (tests/oracle/nan_inf_semantics_test.cc runs them on every backend
// with a kernel): a NaN in a tile makes its scale and every q NaN; an infinite amax makes the
// scale +∞ and q = x/∞ = ±0 for finite x, NaN at ±∞; dequantization is one product (NaN·s,
// 0·∞ = NaN, q·∞ = ±∞).
TEST(GpuFp8Math, NanAndInfinityFollowTheTable) {
  const Fp8Format f = Fp8Format::e4m3;
  EXPECT_TRUE(std::isnan(fp8_math::scale(3.0f, /*nan=*/true, f, false, 1e-10)));
  const float inf_scale = fp8_math::scale(INFINITY, false, f, false, 1e-10);
  EXPECT_EQ(inf_scale, INFINITY);
  EXPECT_TRUE(std::isnan(fp8_math::decode(fp8_math::quantize(1.0f, NAN, f), f)));
  EXPECT_EQ(fp8_math::quantize(4.0f, inf_scale, f), 0x00);   // +0
  EXPECT_EQ(fp8_math::quantize(-5.0f, inf_scale, f), 0x80);  // −0
  EXPECT_TRUE(std::isnan(fp8_math::decode(fp8_math::quantize(-INFINITY, inf_scale, f), f)));
  const uint8_t nan_q = 0x7F, one = 0x38, minus_two = 0xC0;  // E4M3 NaN, 1, −2
  ASSERT_EQ(fp8_math::decode(one, f), 1.0f);
  ASSERT_EQ(fp8_math::decode(minus_two, f), -2.0f);
  EXPECT_TRUE(std::isnan(fp8_math::dequantize(nan_q, 2.0f, f)));
  EXPECT_EQ(fp8_math::dequantize(one, 2.0f, f), 2.0f);
  EXPECT_EQ(fp8_math::dequantize(minus_two, INFINITY, f), -INFINITY);
  EXPECT_TRUE(std::isnan(fp8_math::dequantize(0x00, INFINITY, f)));
}

// The stored values of an input, widened exactly (f32 holds every bf16 and f16 value).
std::vector<float> floats(const oracle::InputSet& in, const char* name) {
  return lmo::testing::floats(in.at(name));
}

const uint8_t* patterns(const oracle::InputSet& in, const char* name) {
  return in.at(name).bytes().data();
}

using oracle::op_adapters::fp8_format;
using oracle::op_adapters::fp8_tiling;

// fp8_quantize evaluated as fp8_scales_kernel and fp8_quantize_kernel do: q's values and the
// scales.
oracle::Outputs<double> quantize_as_the_kernels(const oracle::Fp8QuantizeOp& op,
                                                const oracle::InputSet& in) {
  const oracle::Fp8Params& p = op.params();
  const kernels::Fp8Tiling t = fp8_tiling(p.tiling());
  const Fp8Format f = fp8_format(p.scaling.fp8);
  const std::vector<float> x = floats(in, "x");
  // fp8_scales_kernel: max |x| and the NaN flag per tile (exact in any order), then the scale.
  std::vector<float> amax(static_cast<size_t>(t.scales()), 0.0f);
  std::vector<bool> nan(amax.size(), false);
  for (int64_t r = 0; r < t.rows; ++r) {
    for (int64_t c = 0; c < t.cols; ++c) {
      const float v = x[static_cast<size_t>(r * t.cols + c)];
      const auto g = static_cast<size_t>(fp8_math::tile_of(r, c, t));
      if (std::isnan(v)) nan[g] = true;
      amax[g] = std::fmax(amax[g], std::fabs(v));
    }
  }
  oracle::Outputs<double> out(2);
  std::vector<float> s(amax.size());
  for (size_t g = 0; g < s.size(); ++g) {
    s[g] = fp8_math::scale(amax[g], nan[g], f, p.scaling.form == ref::ScaleForm::kPow2,
                           p.scaling.amax_floor);
    out[1].values.push_back(s[g]);
  }
  for (int64_t r = 0; r < t.rows; ++r) {
    for (int64_t c = 0; c < t.cols; ++c) {
      const float sg = s[static_cast<size_t>(fp8_math::tile_of(r, c, t))];
      const uint8_t bits = fp8_math::quantize(x[static_cast<size_t>(r * t.cols + c)], sg, f);
      out[0].values.push_back(fp8_math::decode(bits, f));
    }
  }
  return out;
}

// A built-in fp8 case evaluated as gpu/fp8.cuh does: every output the f32 (or fp8) value the
// kernel would store (store_outputs rounds the f32 values to the storage, nearest-even).
oracle::Outputs<double> fp8_as_the_kernels(const oracle::RunContext& ctx) {
  if (const auto* q = dynamic_cast<const oracle::Fp8QuantizeOp*>(&ctx.op)) {
    return quantize_as_the_kernels(*q, ctx.in);
  }
  if (const auto* d = dynamic_cast<const oracle::Fp8DequantizeOp*>(&ctx.op)) {
    const oracle::Fp8Params& p = d->params();
    const kernels::Fp8Tiling t = fp8_tiling(p.tiling());
    const std::vector<float> s = floats(ctx.in, "scales");
    const uint8_t* q = patterns(ctx.in, "q");
    oracle::Outputs<double> out(1);
    for (int64_t r = 0; r < t.rows; ++r) {
      for (int64_t c = 0; c < t.cols; ++c) {
        const float sg = s[static_cast<size_t>(fp8_math::tile_of(r, c, t))];
        out[0].values.push_back(
            fp8_math::dequantize(q[r * t.cols + c], sg, fp8_format(p.scaling.fp8)));
      }
    }
    return out;
  }
  const oracle::Fp8LinearParams& p = dynamic_cast<const oracle::Fp8LinearOp&>(ctx.op).params();
  const std::vector<float> as = floats(ctx.in, "a_scales"), ws = floats(ctx.in, "w_scales");
  const uint8_t *a = patterns(ctx.in, "a"), *w = patterns(ctx.in, "w");
  const int64_t k_blocks = (p.k + p.block - 1) / p.block;
  oracle::Outputs<double> out(1);
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) {
      out[0].values.push_back(fp8_math::linear_element(
          a + i * p.k, as.data() + i * k_blocks, w + j * p.k, ws.data() + (j / p.block) * k_blocks,
          p.k, p.block, fp8_format(p.fp8)));
    }
  }
  return out;
}

// The known answers computed with exact rationals (tests/data/make_fp8.py: every E4M3 value,
// midpoint and f32 neighbour of a midpoint among them): q and the scales bit for bit.
TEST(GpuFp8Math, QuantizeGivesTheKnownAnswers) {
  const nlohmann::json data = testdata::load("fp8.json");
  int checked = 0;
  for (const nlohmann::json& k : data["cases"]) {
    const Format f = *ref::parse_format(k["storage"].get<std::string>());
    const oracle::KernelCall kc =
        oracle::make_kernel_call("gpu_fp8_math_test", "fp8_quantize", k["params"], f,
                                 {{"x", testdata::exact_doubles(k["x"]), {}}});
    const oracle::Outputs<double> out =
        quantize_as_the_kernels(dynamic_cast<const oracle::Fp8QuantizeOp&>(*kc.op), kc.in);
    EXPECT_EQ(out[0].values, testdata::exact_doubles(k["q"])) << k["params"].dump();
    EXPECT_EQ(out[1].values, testdata::exact_doubles(k["scales"])) << k["params"].dump();
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST(GpuFp8Math, BuiltinFp8CasesPassOnTheHost) {
  int judged = 0;
  for (const oracle::Case& c : oracle::load_case_file(oracle::builtin_cases_dir() + "/fp8.json")) {
    for (Format f : c.formats) {
      lmo::testing::Harness h(c.source, f);
      const oracle::VerifyRow row = h.judge("gpu-math", fp8_as_the_kernels);
      EXPECT_TRUE(row.pass) << c.id << " " << ref::format_name(f) << ": " << row.detail;
      ++judged;
    }
  }
  EXPECT_GE(judged, 11);  // 8 cases; the dequantization case lists 3 formats, the linear one 2
}

}  // namespace
}  // namespace lmo::gpu
