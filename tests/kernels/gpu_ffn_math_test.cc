// The GPU FFN kernels' per-element math (gpu/activation_math.h, gpu/ffn_math.h) on the host,
// where no device is needed: the very functions gpu/ffn.cuh runs, compiled by the host compiler
// (with -ffp-contract=off; the device's contraction changes nothing here, the dot products'
// terms being exact). Against independent truth:
//   - each activation in double against the reference's in mp: relative error within 2^-44
//     (absolute 2^-1000 near zero) over a sweep of f32 arguments with |x| ≤ 10 (there the
//     double argument's rounding, amplified by erfc's and exp's condition numbers ≤ 2^7, stays
//     below 2^-45), and the reference's special values (±0, ±inf, NaN);
//   - the built-in ffn and glu_ffn cases evaluated as the kernels evaluate them (inputs widened
//     exactly, the hidden layer rounded to f32, the output rounded to f32 and then to the
//     storage), judged by the oracle's run_and_judge (the exact reference and the policy table)
//     in every storage each case lists.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/activation_math.h"
#include "gpu/ffn_math.h"
#include "oracle/backends/backend.h"
#include "oracle/cases/case.h"
#include "oracle/ops/ffn.h"
#include "reference/activations.h"
#include "reference/numeric.h"
#include "tests/support/oracle_harness.h"

namespace lmo::gpu {
namespace {

using ref::mp;

// The functor of gpu/activation_math.h for a reference activation, called on x.
double gpu_activation(ref::Activation a, double x) {
  switch (a) {
    case ref::Activation::kReLU:
      return ReluFn{}(x);
    case ref::Activation::kGELU:
      return GeluFn{}(x);
    case ref::Activation::kGELUTanh:
      return GeluTanhFn{}(x);
    case ref::Activation::kSiLU:
      return SiluFn{}(x);
  }
  return NAN;
}

constexpr ref::Activation kActivations[] = {ref::Activation::kReLU, ref::Activation::kGELU,
                                            ref::Activation::kGELUTanh, ref::Activation::kSiLU};

TEST(GpuFfnMath, ActivationsMatchTheReference) {
  for (ref::Activation a : kActivations) {
    double worst = 0;
    // f32 arguments from −10 to 10 in steps off the binary grid, and tiny ones.
    for (int k = -1000; k <= 1000; ++k) {
      for (const double scale : {1e-2, 1e-30}) {
        const auto x = static_cast<double>(static_cast<float>(k * scale * 1.0009765625));
        const double got = gpu_activation(a, x);
        const mp want = ref::activate(a, mp(x));
        const double err = std::abs(static_cast<double>(mp(got) - want));
        const double mag = std::abs(static_cast<double>(want));
        EXPECT_LE(err, std::max(mag * 0x1p-44, 0x1p-1000))
            << ref::activation_name(a) << "(" << x << "): got " << got << ", exact "
            << static_cast<double>(want);
        if (mag > 0) worst = std::max(worst, err / mag);
      }
    }
    RecordProperty(std::string("worst_rel_error_log2 ") + ref::activation_name(a),
                   std::to_string(worst > 0 ? std::log2(worst) : -1100));
  }
}

TEST(GpuFfnMath, ActivationSpecialValuesAreTheReferences) {
  for (ref::Activation a : kActivations) {
    for (const double x : {0.0, -0.0, double{INFINITY}, -double{INFINITY}, double{NAN}}) {
      const double got = gpu_activation(a, x);
      const double want = static_cast<double>(ref::activate(a, mp(x)));
      const std::string what = std::string(ref::activation_name(a)) + "(" + std::to_string(x) + ")";
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << what << ": got " << got;
      } else {
        EXPECT_EQ(got, want) << what;
        EXPECT_EQ(std::signbit(got), std::signbit(want)) << what;
      }
    }
  }
}

// One built-in ffn or glu_ffn case evaluated as gpu/ffn.cuh does: every output the f32 value
// the kernel would store (store_outputs then rounds it to the storage, nearest-even).
oracle::Outputs<double> ffn_as_the_kernels(const oracle::RunContext& ctx) {
  const oracle::FfnParams& p = dynamic_cast<const oracle::FfnOp&>(ctx.op).params();
  // Stored values widened exactly (f32 holds every bf16 and f16 value).
  const auto floats = [&](const char* name) {
    const ref::Tensor& t = ctx.in.at(name);
    std::vector<float> v(static_cast<size_t>(t.numel()));
    for (int64_t i = 0; i < t.numel(); ++i)
      v[static_cast<size_t>(i)] = static_cast<float>(t.get(i));
    return v;
  };
  const auto widen = [](float v) { return static_cast<double>(v); };
  const std::vector<float> x = floats("x"), up = floats(p.gated ? "w" : "w1"), w2 = floats("w2");
  const std::vector<float> v = p.gated ? floats("v") : std::vector<float>{};
  const std::vector<float> b1 = p.bias ? floats("b1") : std::vector<float>{};
  const std::vector<float> b2 = p.bias ? floats("b2") : std::vector<float>{};
  std::vector<float> h(static_cast<size_t>(p.tokens * p.d_ff));
  for (int64_t t = 0; t < p.tokens; ++t) {
    for (int64_t c = 0; c < p.d_ff; ++c) {
      const float* xr = x.data() + t * p.d;
      const double xw = ffn_math::column_dot(xr, up.data() + c, p.d, p.d_ff, widen);
      double hv = 0;
      const auto run = [&](auto act) {
        if (p.gated) {
          return ffn_math::glu_hidden(act, xw,
                                      ffn_math::column_dot(xr, v.data() + c, p.d, p.d_ff, widen));
        }
        return p.bias ? ffn_math::ffn_hidden(act, xw, b1[static_cast<size_t>(c)]) : act(xw);
      };
      switch (p.act) {
        case ref::Activation::kReLU:
          hv = run(ReluFn{});
          break;
        case ref::Activation::kGELU:
          hv = run(GeluFn{});
          break;
        case ref::Activation::kGELUTanh:
          hv = run(GeluTanhFn{});
          break;
        case ref::Activation::kSiLU:
          hv = run(SiluFn{});
          break;
      }
      h[static_cast<size_t>(t * p.d_ff + c)] = static_cast<float>(hv);  // the f32 hidden layer
    }
  }
  oracle::Outputs<double> out(1);
  for (int64_t t = 0; t < p.tokens; ++t) {
    for (int64_t j = 0; j < p.d; ++j) {
      double s = ffn_math::column_dot(h.data() + t * p.d_ff, w2.data() + j, p.d_ff, p.d, widen);
      if (p.bias) s += b2[static_cast<size_t>(j)];
      out[0].values.push_back(static_cast<float>(s));
    }
  }
  return out;
}

TEST(GpuFfnMath, BuiltinFfnCasesPassOnTheHost) {
  int judged = 0;
  for (const oracle::Case& c : oracle::load_case_file(oracle::builtin_cases_dir() + "/ffn.json")) {
    for (ref::Format f : c.formats) {
      if (f != ref::Format::f32 && f != ref::Format::bf16 && f != ref::Format::f16) continue;
      lmo::testing::Harness h(c.source, f);
      const oracle::VerifyRow row = h.judge("gpu-math", ffn_as_the_kernels);
      EXPECT_TRUE(row.pass) << c.id << " " << ref::format_name(f) << ": " << row.detail;
      ++judged;
    }
  }
  EXPECT_GE(judged, 9);
}

}  // namespace
}  // namespace lmo::gpu
