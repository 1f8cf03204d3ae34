// norm-width: F02 RMSNorm and F01 LayerNorm against the row width, at mean offsets 0 and 64.
// Two effects: mean(x²) and mean(x) accumulated in bf16/f16 stagnate (and f16 sums of squares
// overflow) as the width grows; a one-pass variance E[x²] − μ² cancels catastrophically when the
// mean offset dwarfs the spread, at every width, where the two-pass definition does not.
#include <algorithm>
#include <string>

#include "oracle/drift/kernels.h"
#include "oracle/drift/support.h"
#include "reference/norms.h"

namespace lmo::oracle::drift {
namespace {

using ref::bfloat16;
using ref::float16;
using ref::Format;

// 2^-17 ≈ 7.6e-6: an ε that every format from f16 up holds exactly (as a subnormal in f16).
constexpr double kEps = 0x1p-17;
// The sweep (widths, rows per width), shared by the run and its cost.
std::vector<int64_t> width_sweep(const DriftOptions& o) {
  return doubling(64, o.quick ? 4096 : 65536);
}
constexpr int kRows = 2;

// LayerNorm with the one-pass variance σ² = E[x²] − μ² (clamped at 0, as kernels do), every
// step in T, both means accumulated in Acc: the shortcut the reference never takes (it defines
// the two-pass variance), simulated here to show what it costs.
template <class T, class Acc>
std::vector<T> layernorm_one_pass(std::span<const T> x, std::span<const T> gamma,
                                  std::span<const T> beta, const T& eps) {
  using std::sqrt;
  const T mu = ref::detail::mean_of<T, Acc>(x, [](const T& v) { return v; });
  const T ms = ref::detail::mean_of<T, Acc>(x, [](const T& v) { return T(v * v); });
  T var = ms - T(mu * mu);
  if (var < T(0)) var = T(0);
  const T denom = sqrt(T(var + eps));
  std::vector<T> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = T(T(T(x[i] - mu) / denom) * gamma[i]) + beta[i];
  return y;
}

struct Row {
  std::vector<double> x, gamma, beta;
};

template <class T, class Acc>
void policy(const Row& in, bool layer, const std::vector<mp>& exact, DriftAccumulator& a) {
  const std::vector<T> x = as<T>(in.x), g = as<T>(in.gamma), be = as<T>(in.beta);
  const T eps = ref::from_mp<T>(mp(kEps));
  add_all(a, exact,
          layer ? ref::layernorm<T, Acc>(x, g, be, eps) : ref::rmsnorm<T, Acc>(x, g, eps));
}

// A kernel backend's run of the row (drift_kernels.h) in storage s (f32 or bf16).
void kernel_policy(KernelBackend& k, Format s, const Row& in, bool layer,
                   const std::vector<mp>& exact, DriftAccumulator& a) {
  const int64_t d = static_cast<int64_t>(in.x.size());
  std::vector<KernelInput> inputs = {{"x", in.x, {}}, {"gamma", in.gamma, {}}};
  if (layer) inputs.push_back({"beta", in.beta, {}});
  const std::vector<ref::Tensor> y = run_kernel(*k.backend, layer ? "layernorm" : "rmsnorm",
                                                {{"rows", 1}, {"d", d}, {"eps", kEps}}, s, inputs);
  for (int64_t i = 0; i < d; ++i) a.add_bits(exact[static_cast<size_t>(i)], y[0].bits(i));
}

}  // namespace

DriftResult norm_width(const DriftOptions& o, const DriftProgress& progress) {
  DriftResult r;
  r.op = "rmsnorm (F02), layernorm (F01)";
  const std::vector<int64_t> widths = width_sweep(o);
  const int rows = kRows;
  r.x_label = "width";
  r.description =
      "Error of " + std::to_string(rows) +
      " normalized rows (x uniform in [offset − 1, offset + 1), γ in [0.5, 1.5), β in "
      "[-0.5, 0.5), ε = 2^-17) against the exact values, for widths 64 … " +
      std::to_string(widths.back()) +
      ". bf16/f16 sums stagnate as the width grows (f16 sums of squares overflow at offset 64); "
      "the one-pass variance of LayerNorm fails at offset 64 at every width.";
  r.panels = {"RMSNorm, offset 0", "RMSNorm, offset 64", "LayerNorm, offset 0",
              "LayerNorm, offset 64"};
  ResultBuilder b(r);
  b.policy("f32/f32/f32", "f32 inputs, arithmetic and sums (two-pass variance)");
  b.policy("bf16/f32/f32", "bf16 inputs and outputs, f32 arithmetic and sums");
  b.policy("bf16/bf16/f32", "bf16 arithmetic (squares, deviations, quotients), sums in f32");
  b.policy("bf16/bf16/bf16", "all bf16, sums in bf16");
  b.policy("f16/f16/f32", "f16 arithmetic, sums in f32");
  b.policy("f16/f16/f16", "all f16, sums in f16");
  b.policy("f32 one-pass", "LayerNorm only: f32, variance E[x²] − μ² in one pass");
  b.policy("bf16/f32/f32 one-pass", "LayerNorm only: bf16 storage, f32 one-pass variance");
  std::vector<KernelBackend> kernels = kernel_backends();
  for (const KernelBackend& k : kernels) {
    b.policy(k.label + " f32", k.description + " on f32 storage (two-pass)");
    b.policy(k.label + " bf16", k.description + " on bf16 storage (two-pass)");
  }

  const int64_t total = static_cast<int64_t>(widths.size()) * 4;
  int64_t done = 0;
  for (const std::string& panel : r.panels) {
    const bool layer = panel.rfind("LayerNorm", 0) == 0;
    const double offset = panel.find("offset 64") != std::string::npos ? 64 : 0;
    for (int64_t d : widths) {
      progress(done++, total, panel + ", width " + std::to_string(d));
      DriftAccumulator f32(Format::f32), bf32(Format::bf16), bbf(Format::bf16), bbb(Format::bf16),
          hhf(Format::f16), hhh(Format::f16), one(Format::f32), bone(Format::bf16);
      // Per kernel backend: f32, then bf16 storage.
      std::vector<std::pair<DriftAccumulator, DriftAccumulator>> kacc(
          kernels.size(), {DriftAccumulator(Format::f32), DriftAccumulator(Format::bf16)});
      for (int rw = 0; rw < rows; ++rw) {
        const std::string key = "norm." + std::to_string(d) + "." + std::to_string(rw);
        Row in{bf16_uniform(o.seed, key + ".x", d, offset - 1, offset + 1),
               bf16_uniform(o.seed, key + ".gamma", d, 0.5, 1.5),
               bf16_uniform(o.seed, key + ".beta", d, -0.5, 0.5)};
        if (!layer) std::fill(in.beta.begin(), in.beta.end(), 0.0);
        const std::vector<mp> exact = exact_values([&]<class T>() {
          const std::vector<T> x = as<T>(in.x), g = as<T>(in.gamma), be = as<T>(in.beta);
          const T eps = ref::from_mp<T>(mp(kEps));
          return layer ? ref::layernorm<T>(x, g, be, eps) : ref::rmsnorm<T>(x, g, eps);
        });
        policy<float, float>(in, layer, exact, f32);
        policy<float, float>(in, layer, exact, bf32);  // stored to bf16 by the accumulator
        policy<bfloat16, float>(in, layer, exact, bbf);
        policy<bfloat16, bfloat16>(in, layer, exact, bbb);
        policy<float16, float>(in, layer, exact, hhf);
        policy<float16, float16>(in, layer, exact, hhh);
        if (layer) {
          const std::vector<float> xf = as<float>(in.x), gf = as<float>(in.gamma),
                                   bf = as<float>(in.beta);
          const std::vector<float> y =
              layernorm_one_pass<float, float>(xf, gf, bf, static_cast<float>(kEps));
          add_all(one, exact, y);
          add_all(bone, exact, y);
        }
        for (size_t k = 0; k < kernels.size(); ++k) {
          kernel_policy(kernels[k], Format::f32, in, layer, exact, kacc[k].first);
          kernel_policy(kernels[k], Format::bf16, in, layer, exact, kacc[k].second);
        }
      }
      const double xv = static_cast<double>(d);
      b.add(panel, "f32/f32/f32", xv, f32);
      b.add(panel, "bf16/f32/f32", xv, bf32);
      b.add(panel, "bf16/bf16/f32", xv, bbf);
      b.add(panel, "bf16/bf16/bf16", xv, bbb);
      b.add(panel, "f16/f16/f32", xv, hhf);
      b.add(panel, "f16/f16/f16", xv, hhh);
      if (layer) {
        b.add(panel, "f32 one-pass", xv, one);
        b.add(panel, "bf16/f32/f32 one-pass", xv, bone);
      }
      for (size_t k = 0; k < kernels.size(); ++k) {
        b.add(panel, kernels[k].label + " f32", xv, kacc[k].first);
        b.add(panel, kernels[k].label + " bf16", xv, kacc[k].second);
      }
    }
  }
  b.finish();
  return r;
}

double norm_width_cost(const DriftOptions& o) {
  // Four panels × kRows rows per width × the exact norm (LayerNorm's two passes: a sum, a
  // deviation, a square, a sum, a quotient, a product and a sum per element: ~7).
  double sum = 0;
  for (int64_t v : width_sweep(o)) sum += static_cast<double>(v);
  return 4.0 * kRows * 7.0 * sum;
}

}  // namespace lmo::oracle::drift
