// The GPU MoE layer kernels' per-element math (gpu/activation_f32.h, gpu/moe_layer_math.h, and the
// routing of gpu/moe_route.h on the f32 logits) on the host, where no device is needed: the very
// functions gpu/moe_layer.cuh runs, compiled by the host compiler (with -ffp-contract=off, so
// that every f32 operation rounds once as gpu/f32_ops.h's device intrinsics do; the host's expf
// and double erfc stand in for CUDA's, gpu/f32_math.h). Against independent truth:
//   - each f32 activation against the reference's in mp over f32 arguments with |x| ≤ 8, within
//     bounds derived from its roundings (below), and the reference's special values;
//   - the built-in moe_layer cases evaluated as the kernels evaluate them, judged by the
//     oracle's run_and_judge (the exact reference and the policy table) in every storage each
//     case lists.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/activation_f32.h"
#include "gpu/moe_layer_math.h"
#include "gpu/moe_route.h"
#include "kernels/api/router_config.h"
#include "oracle/backends/moe_adapters.h"
#include "oracle/cases/case.h"
#include "oracle/ops/moe_layer.h"
#include "reference/activations.h"
#include "tests/support/float_tensors.h"
#include "tests/support/oracle_harness.h"

namespace lmo::gpu {
namespace {

using ref::mp;

// Calls fn with the f32 functor of a reference activation.
template <class Fn>
auto with_f32_activation(ref::Activation a, Fn fn) {
  switch (a) {
    case ref::Activation::kReLU:
      return fn(f32::ReluFn<>{});
    case ref::Activation::kGELU:
      return fn(f32::GeluFn<>{});
    case ref::Activation::kGELUTanh:
      return fn(f32::GeluTanhFn<>{});
    case ref::Activation::kSiLU:
      break;
  }
  return fn(f32::SiluFn<>{});
}

// Relative error bounds, in units of u = 2^-24, for |x| ≤ 8 with a libm expf within 1 ulp (glibc's)
// and erfc in double rounded once to f32, each f32 operation rounding once (≤ u):
//   relu: exact;
//   silu: x/(1 + e): e (≤ 2u), 1 + e and the quotient (u each, the quotient's sensitivity to e
//         at most 1): ≤ 4u, bound 16u;
//   gelu: the argument x/√2 carries √2's rounding and the division's (≤ 2u), amplified by
//         erfc's condition number ≤ 2t² + 1 ≤ 65 at t = x/√2, |t| ≤ 5.7: ≤ 130u, plus erfc's
//         rounding to f32 (≤ u) and the products: bound 2^8 u;
//   gelu_tanh: u = √(2/π)(x + 0.044715x³) carries ≤ 6 roundings (and the constants'), amplified
//         by sigmoid(2u)'s condition number |2u|(1 − σ) ≤ 50 at |x| ≤ 8: ≤ 300u, plus the
//         sigmoid's own (≤ 5u) and the product: bound 2^9 u.
double bound_in_u(ref::Activation a) {
  switch (a) {
    case ref::Activation::kReLU:
      return 0;
    case ref::Activation::kSiLU:
      return 16;
    case ref::Activation::kGELU:
      return 256;
    case ref::Activation::kGELUTanh:
      return 512;
  }
  return 0;
}

constexpr ref::Activation kActivations[] = {ref::Activation::kReLU, ref::Activation::kGELU,
                                            ref::Activation::kGELUTanh, ref::Activation::kSiLU};

TEST(GpuMoeLayerMath, F32ActivationsMatchTheReference) {
  for (ref::Activation a : kActivations) {
    double worst = 0;
    for (int k = -8000; k <= 8000; ++k) {
      for (const double scale : {1e-3, 1e-20}) {
        const auto x = static_cast<float>(k * scale * 1.0009765625);
        const float got = with_f32_activation(a, [&](auto f) { return f(x); });
        const mp want = ref::activate(a, mp(static_cast<double>(x)));
        const double err = std::abs(static_cast<double>(mp(static_cast<double>(got)) - want));
        const double mag = std::abs(static_cast<double>(want));
        // Below f32's normal range an absolute floor of half the least subnormal's spacing.
        EXPECT_LE(err, std::max(mag * bound_in_u(a) * 0x1p-24, 0x1p-150))
            << ref::activation_name(a) << "(" << x << "): got " << got << ", exact "
            << static_cast<double>(want);
        if (mag > 0x1p-126) worst = std::max(worst, err / mag);
      }
    }
    RecordProperty(std::string("worst_rel_error_log2 ") + ref::activation_name(a),
                   std::to_string(worst > 0 ? std::log2(worst) : -200));
  }
}

TEST(GpuMoeLayerMath, F32ActivationSpecialValuesAreTheReferences) {
  for (ref::Activation a : kActivations) {
    for (const float x : {0.0f, -0.0f, INFINITY, -INFINITY, NAN}) {
      const float got = with_f32_activation(a, [&](auto f) { return f(x); });
      const double want = static_cast<double>(ref::activate(a, mp(static_cast<double>(x))));
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

// TokenRouter's Row over the f32 logits and the f32 bias (the kernel's StoredRow<float>).
struct F32Row {
  const float* z;
  const float* c;  // null: no bias
  double logit(int64_t i) const { return z[i]; }
  bool has_bias() const { return c != nullptr; }
  double bias(int64_t i) const { return c[i]; }
};

// The stored values of an input, widened exactly (f32 holds every bf16 and f16 value).
std::vector<float> floats(const oracle::InputSet& in, const char* name) {
  return lmo::testing::floats(in.at(name));
}

// A moe_layer case evaluated as gpu/moe_layer.cu's kernels do: y in f32 (store_outputs rounds it
// to the storage, nearest-even).
oracle::Outputs<double> moe_layer_as_the_kernels(const oracle::RunContext& ctx) {
  const oracle::MoeLayerParams& p = dynamic_cast<const oracle::MoeLayerOp&>(ctx.op).params();
  const oracle::RouterParams& r = p.router;
  const int64_t t_n = r.tokens, n = r.experts, k = r.top_k, d = p.d, ff = p.d_ff, s = p.shared;
  const auto widen = [](float v) { return v; };
  const std::vector<float> x = floats(ctx.in, "x"), router = floats(ctx.in, "router");
  const std::vector<float> bias = r.bias ? floats(ctx.in, "bias") : std::vector<float>{};
  const std::vector<float> w = floats(ctx.in, "w"), v = floats(ctx.in, "v"),
                           w2 = floats(ctx.in, "w2");
  std::vector<float> ws, vs, w2s;
  if (s > 0) ws = floats(ctx.in, "ws"), vs = floats(ctx.in, "vs"), w2s = floats(ctx.in, "w2s");
  // moe_logits_kernel, then moe_route_kernel<float>.
  std::vector<float> logits(static_cast<size_t>(t_n * n));
  for (int64_t t = 0; t < t_n; ++t) {
    for (int64_t i = 0; i < n; ++i) {
      logits[static_cast<size_t>(t * n + i)] =
          moe_layer_math::column_dot(x.data() + t * d, router.data() + i, d, n, widen);
    }
  }
  const moe::RouteShape route =
      moe::route_shape(oracle::op_adapters::router_config<kernels::RouterConfig>(r));
  std::vector<int64_t> experts(static_cast<size_t>(t_n * k));
  std::vector<float> gates(experts.size());
  for (int64_t t = 0; t < t_n; ++t) {
    const moe::TokenRouter<F32Row> router_t(
        F32Row{logits.data() + t * n, r.bias ? bias.data() : nullptr}, route);
    auto emit = [&](int64_t slot, int64_t i, double gate) {
      experts[static_cast<size_t>(t * k + slot)] = i;
      gates[static_cast<size_t>(t * k + slot)] = static_cast<float>(gate);
    };
    router_t.emit(emit);
  }
  // moe_hidden_kernel, then moe_combine_kernel.
  const int64_t slots = s + k;
  std::vector<float> h(static_cast<size_t>(t_n * slots * ff));
  with_f32_activation(p.act, [&](auto act) {
    for (int64_t t = 0; t < t_n; ++t) {
      for (int64_t slot = 0; slot < slots; ++slot) {
        const int64_t ex = moe_layer_math::slot_expert(experts.data() + t * k, s, slot);
        const bool sh = slot < s;
        for (int64_t c = 0; c < ff; ++c) {
          const int64_t off = ex * d * ff + c;
          const float* xr = x.data() + t * d;
          const float xw = moe_layer_math::column_dot(xr, (sh ? ws : w).data() + off, d, ff, widen);
          const float xv = moe_layer_math::column_dot(xr, (sh ? vs : v).data() + off, d, ff, widen);
          h[static_cast<size_t>((t * slots + slot) * ff + c)] =
              moe_layer_math::glu_hidden(act, xw, xv);
        }
      }
    }
    return 0;
  });
  oracle::Outputs<double> out(1);
  for (int64_t t = 0; t < t_n; ++t) {
    for (int64_t j = 0; j < d; ++j) {
      float acc = p.residual ? x[static_cast<size_t>(t * d + j)] : 0.0f;
      for (int64_t slot = 0; slot < slots; ++slot) {
        const int64_t ex = moe_layer_math::slot_expert(experts.data() + t * k, s, slot);
        const bool sh = slot < s;
        const float o =
            moe_layer_math::column_dot(h.data() + (t * slots + slot) * ff,
                                       (sh ? w2s : w2).data() + ex * ff * d + j, ff, d, widen);
        acc = moe_layer_math::combine(acc, sh ? 1.0f : gates[static_cast<size_t>(t * k + slot - s)],
                                      o);
      }
      out[0].values.push_back(acc);
    }
  }
  return out;
}

TEST(GpuMoeLayerMath, BuiltinMoeLayerCasesPassOnTheHost) {
  int judged = 0;
  for (const oracle::Case& c : oracle::load_case_file(oracle::builtin_cases_dir() + "/moe.json")) {
    if (c.op != "moe_layer") continue;
    for (ref::Format f : c.formats) {
      lmo::testing::Harness h(c.source, f);
      const oracle::VerifyRow row = h.judge("gpu-math", moe_layer_as_the_kernels);
      EXPECT_TRUE(row.pass) << c.id << " " << ref::format_name(f) << ": " << row.detail;
      ++judged;
    }
  }
  EXPECT_EQ(judged, 7);  // deepseek-v3 routing: f32, bf16; mixtral: 3; shared + residual: 2
}

}  // namespace
}  // namespace lmo::gpu
