// gelu-bf16: F06 GELU and its tanh approximation over every finite bf16 input, against exact
// GELU. The tanh form is an approximation (C26): its error against GELU dominates the bf16
// rounding near |x| ≈ 2 … 4, and for x ≪ 0 it decays like e^{−(0.0713·x³ + 1.6·x)} instead of
// x·Φ(x), so its relative error reaches 1 (no significant bit left) long before GELU underflows.
#include <cmath>
#include <string>
#include <vector>

#include "oracle/drift/kernels.h"
#include "oracle/drift/support.h"
#include "reference/activations.h"

namespace lmo::oracle::drift {
namespace {

using ref::bfloat16;
using ref::Format;

// Binades of |x| reported one by one; smaller and larger inputs are lumped into the end bins.
constexpr int kLowBinade = -8, kHighBinade = 8;
// Every stride-th bf16 pattern is an input (shared by the run and its cost).
int pattern_stride(const DriftOptions& o) { return o.quick ? 16 : 1; }

int bin_of(double x) {
  const int e = std::ilogb(std::fabs(x));
  return std::clamp(e, kLowBinade, kHighBinade) - kLowBinade;
}

}  // namespace

DriftResult gelu_bf16(const DriftOptions& o, const DriftProgress& progress) {
  DriftResult r;
  r.op = "gelu, gelu_tanh (F06)";
  const int stride = pattern_stride(o);
  r.x_label = "|x| binade";
  r.description = std::string("Error against exact GELU over ") +
                  (o.quick ? "every 16th finite bf16 input" : "every finite bf16 input") +
                  " (outputs in bf16), by binade of |x|: point 2^e holds 2^e ≤ |x| < 2^(e+1); "
                  "the first point also holds every smaller nonzero |x|, the last every larger. "
                  "GELU-tanh is an approximation: its error is the distance to exact GELU.";
  r.panels = {"x < 0", "x > 0"};
  ResultBuilder b(r);
  struct P {
    std::string name;
    std::string desc;
  };
  std::vector<P> policies = {
      {"gelu f32", "exact GELU x/2·erfc(−x/√2) in f32, stored in bf16"},
      {"gelu-tanh f32", "GELU-tanh as x·sigmoid(2u) in f32, stored in bf16"},
      {"gelu-tanh f32 literal", "GELU-tanh as printed, 0.5x(1 + tanh u), in f32, stored in bf16"},
      {"gelu bf16", "exact GELU, every step in bf16"},
      {"gelu-tanh bf16", "GELU-tanh (x·sigmoid(2u)), every step in bf16"},
  };
  constexpr size_t kSimulated = 5;
  // Then per kernel backend (drift_kernels.h): its GELU and its GELU-tanh on bf16 storage.
  std::vector<KernelBackend> kernels = kernel_backends();
  for (const KernelBackend& k : kernels) {
    policies.push_back({k.label + " gelu", k.description + " GELU on bf16 storage"});
    policies.push_back({k.label + " gelu-tanh", k.description + " GELU-tanh on bf16 storage"});
  }
  const size_t kPolicies = policies.size();
  for (const P& p : policies) b.policy(p.name, p.desc);

  constexpr int kBins = kHighBinade - kLowBinade + 1;
  std::vector<std::vector<DriftAccumulator>> acc(
      2 * kBins, std::vector<DriftAccumulator>(kPolicies, DriftAccumulator(Format::bf16)));
  // Every finite nonzero pattern (the stride thins them for the quick sweep).
  std::vector<uint16_t> inputs;
  for (uint32_t bits = 0; bits < 0x10000; bits += static_cast<uint32_t>(stride)) {
    const uint16_t p = static_cast<uint16_t>(bits);
    if (ref::bits_is_nan(Format::bf16, p) || ref::bits_is_inf(Format::bf16, p)) continue;
    if ((p & 0x7FFF) == 0) continue;  // ±0: every policy returns ±0
    inputs.push_back(p);
  }
  const int64_t n = static_cast<int64_t>(inputs.size());
  // The kernels' outputs over all inputs at once, two per backend (gelu, gelu_tanh).
  std::vector<double> values;
  for (uint16_t p : inputs) values.push_back(bfloat16::from_bits(p).value());
  std::vector<ref::Tensor> kernel_out;
  for (KernelBackend& k : kernels) {
    for (const char* op : {"gelu", "gelu_tanh"}) {
      kernel_out.push_back(
          run_kernel(*k.backend, op, {{"n", n}}, Format::bf16, {{"x", values, {}}}).at(0));
    }
  }
  // The exact GELU of every input through the certified evaluation (support.h).
  const std::vector<mp> exact_all = exact_each(
      std::span<const double>(values), [&]<class T>(double x) { return ref::gelu<T>(T(x)); });
  const int64_t chunk = 4096;
  for (int64_t i = 0; i < n; ++i) {
    if (i % chunk == 0) {
      progress(i / chunk, (n + chunk - 1) / chunk,
               "inputs " + std::to_string(i) + " … " + std::to_string(std::min(n, i + chunk)));
    }
    const bfloat16 xb = bfloat16::from_bits(inputs[static_cast<size_t>(i)]);
    const double x = xb.value();
    const mp& exact = exact_all[static_cast<size_t>(i)];
    std::vector<DriftAccumulator>& a = acc[(x < 0 ? 0 : kBins) + bin_of(x)];
    const float xf = static_cast<float>(x);
    a[0].add(exact, ref::gelu<float>(xf));
    a[1].add(exact, ref::gelu_tanh<float>(xf));
    a[2].add(exact, ref::gelu_tanh<float>(xf, true));
    a[3].add(exact, ref::gelu<bfloat16>(xb).value());
    a[4].add(exact, ref::gelu_tanh<bfloat16>(xb).value());
    for (size_t k = 0; k < kernel_out.size(); ++k)
      a[kSimulated + k].add_bits(exact, kernel_out[k].bits(i));
  }
  for (int side = 0; side < 2; ++side) {
    for (int bin = 0; bin < kBins; ++bin) {
      const double xv = std::ldexp(1.0, bin + kLowBinade);
      for (size_t k = 0; k < kPolicies; ++k) {
        const DriftAccumulator& a = acc[static_cast<size_t>(side * kBins + bin)][k];
        if (a.result().compared + a.result().nonfinite == 0) continue;
        b.add(r.panels[static_cast<size_t>(side)], policies[k].name, xv, a);
      }
    }
  }
  b.finish();
  return r;
}

double gelu_bf16_cost(const DriftOptions& o) {
  // At most 2^16 / stride inputs × the exact GELU and GELU-tanh (an erfc, a tanh and a few
  // products and sums: ~10 operations).
  return 10.0 * 65536.0 / pattern_stride(o);
}

}  // namespace lmo::oracle::drift
