// fp8 scaling ([workloads] item 4): the reference (MPFR and the certified balls) against known
// answers computed with exact rationals (tests/data/make_fp8.py: every E4M3 value, midpoint and
// f32 neighbour of a midpoint among them); plain-float kernels written the ways fp8 kernels are
// written: the correct ones (dividing, or multiplying by the reciprocal scale as vLLM does) pass,
// and the bugs (a scale from the wrong group, truncation instead of rounding, a dequantization
// reading the transposed block grid or dividing by the scale, a k-block scaled with its
// neighbour's weight scale, one token's scale for all) fail. The kernel libraries (fast/ on
// every target and thread count, gpu/ with a device) on the same known answers and on every
// storage: tests/kernels/fp8_test.cc.
#include "oracle/ops/fp8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "oracle/backends/adapters.h"
#include "oracle/backends/kernel_call.h"
#include "oracle/cases/case.h"
#include "oracle/core/case_error.h"
#include "oracle/core/certified.h"
#include "oracle/check/check.h"
#include "oracle/golden/golden_content.h"
#include "reference/fp8_scaling.h"
#include "tests/support/fast_cases.h"
#include "tests/support/float_tensors.h"
#include "tests/support/fp8_cases.h"
#include "tests/support/test_data.h"

namespace lmo::oracle {
namespace {

using ref::Format;
using ref::mp;
using testing::float_tensor;
using testing::floats;

using testdata::fp8_case;

template <class T>
const T& as_op(const Op& op) {
  return op_adapters::op_as<T>(op);
}

// Every known answer: the MPFR reference and the certified path give the rational arithmetic's q
// and scales exactly.
TEST(Fp8, KnownAnswersFromExactRationals) {
  const nlohmann::json data = testdata::load("fp8.json");
  for (const nlohmann::json& k : data["cases"]) {
    const Format f = *ref::parse_format(k["storage"].get<std::string>());
    const std::vector<double> x = testdata::exact_doubles(k["x"]);
    const std::vector<double> q = testdata::exact_doubles(k["q"]);
    const std::vector<double> scales = testdata::exact_doubles(k["scales"]);
    const KernelCall kc =
        make_kernel_call("fp8_test", "fp8_quantize", k["params"], f, {{"x", x, {}}});
    const std::string where = k["params"].dump();
    const auto& p = as_op<Fp8QuantizeOp>(*kc.op).params();
    // The reference function, q rounded.
    const std::vector<mp> xm = kc.in.values<mp>("x");
    const ref::Fp8Tensor<mp> r =
        ref::fp8_quantize<mp>(std::span<const mp>(xm), p.tiling(), p.scaling);
    for (size_t i = 0; i < q.size(); ++i) ASSERT_EQ(r.q[i], mp(q[i])) << where << " q[" << i << "]";
    for (size_t i = 0; i < scales.size(); ++i) ASSERT_EQ(r.scales[i], mp(scales[i])) << where;
    // The op on both exact paths: q as the store rounds it.
    for (const ExactPath path : {ExactPath::kMpfr, ExactPath::kCertified}) {
      set_exact_path(path);
      const Outputs<mp> out = exact_outputs(*kc.op, kc.in);
      ASSERT_EQ(out.size(), 2u);
      ASSERT_EQ(out[0].values.size(), q.size()) << where;
      for (size_t i = 0; i < q.size(); ++i) {
        const double stored =
            ref::decode<double>(p.scaling.fp8, ref::encode(p.scaling.fp8, out[0].values[i]));
        ASSERT_EQ(stored, q[i]) << where << " q[" << i << "] of x " << x[i];
      }
      for (size_t i = 0; i < scales.size(); ++i) {
        ASSERT_EQ(out[1].values[i], mp(scales[i])) << where << " scale " << i;
      }
    }
    set_exact_path(ExactPath::kCertified);
  }
}

// --- Plain-float kernels, correct and buggy -------------------------------------------------

// v rounded to E4M3 toward zero: the nearest-even result, one pattern nearer zero where that
// rounded away from it.
double e4m3_truncated(double v) {
  const uint64_t bits = ref::encode(Format::e4m3, v, ref::Overflow::kSaturate);
  const double r = ref::decode<double>(Format::e4m3, bits);
  if (std::fabs(r) <= std::fabs(v)) return r;
  return ref::decode<double>(Format::e4m3, bits - 1);  // magnitude bits one step down
}

enum class QuantVariant { kDivide, kReciprocal, kWrongGroup, kTruncate };

std::map<std::string, ref::Tensor> quant_kernel(const Case& c, Format f, QuantVariant v) {
  const std::unique_ptr<Op> op = make_op(c);
  const ref::ScaleTiling t = as_op<Fp8QuantizeOp>(*op).params().tiling();
  const std::vector<float> x = floats(reference_inputs(c, f).at("x"));
  const int64_t n = t.scales();
  std::vector<float> amax(static_cast<size_t>(n), 0.0f);
  for (int64_t r = 0; r < t.rows; ++r) {
    for (int64_t col = 0; col < t.cols; ++col) {
      float& a = amax[static_cast<size_t>(t.scale_of(r, col))];
      a = std::max(a, std::fabs(x[static_cast<size_t>(r * t.cols + col)]));
    }
  }
  std::vector<float> s(amax.size());
  for (size_t g = 0; g < s.size(); ++g) {
    // The bug: group g scaled by its neighbour's amax.
    const size_t from = v == QuantVariant::kWrongGroup ? (g + 1) % s.size() : g;
    s[g] = std::max(amax[from], 1e-10f) / 448.0f;
  }
  std::vector<float> q(x.size());
  for (int64_t r = 0; r < t.rows; ++r) {
    for (int64_t col = 0; col < t.cols; ++col) {
      const auto i = static_cast<size_t>(r * t.cols + col);
      const float sc = s[static_cast<size_t>(t.scale_of(r, col))];
      float y = v == QuantVariant::kReciprocal ? x[i] * (1.0f / sc) : x[i] / sc;
      y = std::min(448.0f, std::max(-448.0f, y));
      q[i] =
          static_cast<float>(v == QuantVariant::kTruncate
                                 ? e4m3_truncated(y)
                                 : ref::decode<double>(Format::e4m3, ref::encode(Format::e4m3, y)));
    }
  }
  return {{"q", float_tensor(Format::e4m3, {t.rows, t.cols}, q)},
          {"scales", float_tensor(Format::f32, {t.tiles_down(), t.tiles_across()}, s)}};
}

TEST(Fp8, QuantizeBugsCaughtAndCorrectVariantsPass) {
  for (const nlohmann::json& params :
       {nlohmann::json{{"rows", 8}, {"cols", 1024}, {"scaling", "group"}, {"group", 128}},
        nlohmann::json{{"rows", 256}, {"cols", 256}, {"scaling", "block"}, {"group", 128}}}) {
    const Case c = fp8_case("fp8_quantize", Format::bf16, params, 61);
    for (QuantVariant ok : {QuantVariant::kDivide, QuantVariant::kReciprocal}) {
      const CheckReport r = check_outputs(c, quant_kernel(c, Format::bf16, ok));
      EXPECT_TRUE(r.pass) << params.dump() << "\n" << to_text(r);
    }
    const CheckReport wrong =
        check_outputs(c, quant_kernel(c, Format::bf16, QuantVariant::kWrongGroup));
    EXPECT_FALSE(wrong.pass) << params.dump();
    EXPECT_FALSE(wrong.outputs.at(1).verdict.pass) << "the scales themselves are wrong";
    const CheckReport trunc =
        check_outputs(c, quant_kernel(c, Format::bf16, QuantVariant::kTruncate));
    EXPECT_FALSE(trunc.pass) << params.dump();
    EXPECT_TRUE(trunc.outputs.at(1).verdict.pass) << "truncation leaves the scales right";
    // Truncation is off by one ulp on about half the elements: far more than a margin forgives.
    EXPECT_GT(trunc.outputs.at(0).verdict.failed, trunc.outputs.at(0).verdict.elements / 4);
  }
}

// Dequantization of 64×64 blocks over a 192×128 matrix (a 3×2 block grid). The bugs: reading
// the scale of block (j, i) for block (i, j), as a kernel indexing a column-major scale tensor
// does; dividing by the scale, as a kernel handed an inverse scale where it expects the scale.
enum class DequantVariant { kCorrect, kTransposedGrid, kDivide };

TEST(Fp8, DequantizeBugsCaught) {
  const Case c = fp8_case("fp8_dequantize", Format::bf16,
                          {{"rows", 192}, {"cols", 128}, {"scaling", "block"}, {"group", 64}});
  const InputSet in = reference_inputs(c, Format::bf16);
  const std::vector<float> q = floats(in.at("q")), s = floats(in.at("scales"));
  for (DequantVariant v :
       {DequantVariant::kCorrect, DequantVariant::kTransposedGrid, DequantVariant::kDivide}) {
    std::vector<float> x(q.size());
    for (int64_t r = 0; r < 192; ++r) {
      for (int64_t col = 0; col < 128; ++col) {
        const int64_t g = v == DequantVariant::kTransposedGrid ? (col / 64) * 3 + r / 64
                                                               : (r / 64) * 2 + col / 64;
        const auto i = static_cast<size_t>(r * 128 + col);
        const float sc = s[static_cast<size_t>(g)];
        x[i] = v == DequantVariant::kDivide ? q[i] / sc : q[i] * sc;
      }
    }
    const CheckReport rep = check_outputs(c, {{"x", float_tensor(Format::bf16, {192, 128}, x)}});
    EXPECT_EQ(rep.pass, v == DequantVariant::kCorrect) << static_cast<int>(v) << "\n"
                                                       << to_text(rep);
  }
}

enum class LinearVariant { kDeepGemm, kDequantizeFirst, kNextBlockWeightScale, kFirstTokenScale };

std::vector<float> linear_kernel(const Case& c, LinearVariant v) {
  const std::unique_ptr<Op> op = make_op(c);
  const Fp8LinearParams& p = as_op<Fp8LinearOp>(*op).params();
  const InputSet in = reference_inputs(c, Format::f32);
  const std::vector<float> a = floats(in.at("a")), as = floats(in.at("a_scales")),
                           w = floats(in.at("w")), ws = floats(in.at("w_scales"));
  const int64_t kb_n = (p.k + p.block - 1) / p.block;
  std::vector<float> y(static_cast<size_t>(p.m * p.n));
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) {
      float acc = 0;
      for (int64_t kb = 0; kb < kb_n; ++kb) {
        const int64_t wkb =
            v == LinearVariant::kNextBlockWeightScale ? std::min(kb + 1, kb_n - 1) : kb;
        const int64_t ai = v == LinearVariant::kFirstTokenScale ? 0 : i;
        const float sa = as[static_cast<size_t>(ai * kb_n + kb)];
        const float sw = ws[static_cast<size_t>((j / p.block) * kb_n + wkb)];
        float part = 0;
        for (int64_t k = kb * p.block; k < std::min(p.k, (kb + 1) * p.block); ++k) {
          const float av = a[static_cast<size_t>(i * p.k + k)],
                      wv = w[static_cast<size_t>(j * p.k + k)];
          if (v == LinearVariant::kDequantizeFirst) {
            acc += (av * sa) * (wv * sw);
          } else {
            part += av * wv;
          }
        }
        if (v != LinearVariant::kDequantizeFirst) acc += (sa * sw) * part;
      }
      y[static_cast<size_t>(i * p.n + j)] = acc;
    }
  }
  return y;
}

TEST(Fp8, LinearBugsCaughtAndBothCorrectOrdersPass) {
  const Case c =
      fp8_case("fp8_linear", Format::f32, {{"m", 6}, {"n", 160}, {"k", 384}, {"block", 128}});
  for (LinearVariant v : {LinearVariant::kDeepGemm, LinearVariant::kDequantizeFirst,
                          LinearVariant::kNextBlockWeightScale, LinearVariant::kFirstTokenScale}) {
    const bool correct = v == LinearVariant::kDeepGemm || v == LinearVariant::kDequantizeFirst;
    const CheckReport r =
        check_outputs(c, {{"y", float_tensor(Format::f32, {6, 160}, linear_kernel(c, v))}});
    EXPECT_EQ(r.pass, correct) << static_cast<int>(v) << "\n" << to_text(r);
  }
}

// A quantization case writes q and scales in their own formats whatever x's is: it lists one
// format; a kernel's q handed over in another format is refused, naming the output.
TEST(Fp8, OutputsInTheirOwnFormats) {
  const nlohmann::json params = {{"rows", 2}, {"cols", 8}, {"scaling", "token"}};
  try {
    (void)parse_case({{"id", "two"},
                      {"op", "fp8_quantize"},
                      {"seed", 1},
                      {"formats", {"f32", "bf16"}},
                      {"params", params}},
                     "fp8_test", "case");
    ADD_FAILURE() << "two formats accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("case.formats"), std::string::npos) << e.what();
  }
  const Case c = fp8_case("fp8_quantize", Format::bf16, params);
  std::map<std::string, ref::Tensor> outs = quant_kernel(c, Format::bf16, QuantVariant::kDivide);
  const std::unique_ptr<Op> op = make_op(c);
  const InputSet in = reference_inputs(c, Format::bf16);
  // The golden file: q in e4m3, the scales in f32, and both in f64.
  const SafetensorsContent g = golden_file_content(c, *op, in, "bf16");
  for (const char* name : {"out.q.e4m3", "out.scales.f32", "out.q.f64", "out.scales.f64"}) {
    EXPECT_EQ(g.tensors.count(name), 1u) << name;
  }
  EXPECT_EQ(g.tensors.at("out.q.e4m3"), outs.at("q"));
  outs.at("q") = float_tensor(Format::bf16, {2, 8}, floats(outs.at("q")));
  try {
    (void)check_outputs(c, outs);
    ADD_FAILURE() << "q in bf16 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("expected e4m3"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lmo::oracle
