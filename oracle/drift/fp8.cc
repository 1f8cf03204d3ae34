// fp8-activations: storing RMSNorm outputs (F02) and SwiGLU activations silu(a)·b (F05) in fp8
// e4m3 (max 448, 4 significant bits) or e5m2 (max 57344, 3 bits), against the activations'
// magnitude. Without scaling, activations outside the format's range saturate or flush to zero;
// with a per-tensor power-of-two scale 2^k (the largest with amax·2^k ≤ the format's max, as with
// MX-style E8M0 scales) the stored values are the same at every magnitude.
//
// The activations are computed in f32, multiplied by 2^k (exact), rounded once to fp8 with
// saturation (the "satfinite" conversion of fp8 kernels) and compared, in the scaled domain, with
// the exact activation times 2^k: ulps count fp8 steps; dequantizing by 2^-k is exact and changes
// no relative error.
#include <cmath>
#include <string>

#include "oracle/drift/support.h"
#include "reference/activations.h"
#include "reference/norms.h"

namespace lmo::oracle::drift {
namespace {

using ref::Format;

// Stores y (the exact values are `exact`) in f, scaled per tensor when asked.
void store(DriftAccumulator& acc, std::span<const mp> exact, const std::vector<float>& y, Format f,
           bool scaled) {
  int k = 0;
  if (scaled) {
    double amax = 0;
    for (float v : y) amax = std::max(amax, std::fabs(static_cast<double>(v)));
    const double max_finite = ref::decode<double>(f, ref::max_finite_bits(f));
    if (amax > 0) k = static_cast<int>(std::floor(std::log2(max_finite / amax)));
  }
  for (size_t i = 0; i < y.size(); ++i) {
    const double v = std::ldexp(static_cast<double>(y[i]), k);
    acc.add_bits(ldexp(exact[i], k), ref::encode(f, v, ref::Overflow::kSaturate));
  }
}

// The sweep, shared by the run and its cost: d activations at scales 2^e, e = −16, −16 + step,
// … 16 (step: log2 of the ratio between sweep points).
int64_t activation_count(const DriftOptions& o) { return o.quick ? 1024 : 4096; }
int scale_step(const DriftOptions& o) { return o.quick ? 4 : 2; }
constexpr int kScaleExponent = 16;

}  // namespace

DriftResult fp8_activations(const DriftOptions& o, const DriftProgress& progress) {
  DriftResult r;
  r.op = "rmsnorm (F02) and SwiGLU activation (F05) stored in fp8";
  const int64_t d = activation_count(o);
  const int step = scale_step(o);
  r.x_label = "activation scale";
  r.description =
      "Error of " + std::to_string(d) +
      " activations computed in f32 and stored in fp8 (saturating), against the exact values, "
      "as the activations' scale s sweeps 2^-16 … 2^16: RMSNorm with weights γ = s·[0.5, 1.5), "
      "SwiGLU silu(a)·b with a in [-4, 4), b = s·[-1, 1). Ulps count fp8 steps in the scaled "
      "domain. Unscaled fp8 flushes small activations to zero (relative error 1, 0 significant "
      "bits) and saturates large ones; per-tensor power-of-two scaling gives the same error at "
      "every scale.";
  r.panels = {"RMSNorm output", "SwiGLU activation"};
  ResultBuilder b(r);
  b.policy("e4m3 scaled", "e4m3 storage, per-tensor power-of-two scale");
  b.policy("e4m3 unscaled", "e4m3 storage, no scale");
  b.policy("e5m2 scaled", "e5m2 storage, per-tensor power-of-two scale");
  b.policy("e5m2 unscaled", "e5m2 storage, no scale");
  b.policy("bf16", "bf16 storage (for comparison)");
  r.notes.push_back("fast policy: the fast kernels have no fp8 storage (f32, bf16, f16 only)");

  const std::vector<double> x = bf16_uniform(o.seed, "fp8.x", d, -1, 1);
  const std::vector<double> gamma = bf16_uniform(o.seed, "fp8.gamma", d, 0.5, 1.5);
  const std::vector<double> a = bf16_uniform(o.seed, "fp8.a", d, -4, 4);
  const std::vector<double> bu = bf16_uniform(o.seed, "fp8.b", d, -1, 1);
  const std::vector<float> x_f = as<float>(x), a_f = as<float>(a);
  const double eps = 0x1p-17;
  std::vector<int> exps;
  for (int e = -kScaleExponent; e <= kScaleExponent; e += step) exps.push_back(e);
  const int64_t total = static_cast<int64_t>(exps.size()) * 2;
  int64_t done = 0;
  for (const std::string& panel : r.panels) {
    const bool norm = panel == "RMSNorm output";
    for (int e : exps) {
      progress(done++, total, panel + ", scale 2^" + std::to_string(e));
      std::vector<mp> exact(static_cast<size_t>(d));
      std::vector<float> y(static_cast<size_t>(d));
      if (norm) {
        std::vector<double> g(gamma);
        for (double& v : g) v = std::ldexp(v, e);
        const std::vector<float> g_f = as<float>(g);
        exact = exact_values([&]<class T>() {
          return ref::rmsnorm<T>(as<T>(x), as<T>(g), ref::from_mp<T>(mp(eps)));
        });
        y = ref::rmsnorm<float>(x_f, g_f, static_cast<float>(eps));
      } else {
        exact = exact_values([&]<class T>() {
          std::vector<T> out;
          for (size_t i = 0; i < a.size(); ++i) {
            out.push_back(ref::silu(ref::from_mp<T>(mp(a[i]))) *
                          ref::from_mp<T>(mp(std::ldexp(bu[i], e))));
          }
          return out;
        });
        for (size_t i = 0; i < exact.size(); ++i) {
          y[i] = ref::silu(a_f[i]) * static_cast<float>(std::ldexp(bu[i], e));
        }
      }
      DriftAccumulator e4s(Format::e4m3), e4u(Format::e4m3), e5s(Format::e5m2), e5u(Format::e5m2),
          bf(Format::bf16);
      store(e4s, exact, y, Format::e4m3, true);
      store(e4u, exact, y, Format::e4m3, false);
      store(e5s, exact, y, Format::e5m2, true);
      store(e5u, exact, y, Format::e5m2, false);
      add_all(bf, exact, y);
      const double xv = std::ldexp(1.0, e);
      b.add(panel, "e4m3 scaled", xv, e4s);
      b.add(panel, "e4m3 unscaled", xv, e4u);
      b.add(panel, "e5m2 scaled", xv, e5s);
      b.add(panel, "e5m2 unscaled", xv, e5u);
      b.add(panel, "bf16", xv, bf);
    }
  }
  b.finish();
  return r;
}

double fp8_activations_cost(const DriftOptions& o) {
  // Two panels × every scale × the exact RMSNorm or SwiGLU of d activations (~5 operations each:
  // a square and a sum, a quotient and two products; or an exponential, a sum, two quotients).
  const double scales = 2 * kScaleExponent / scale_step(o) + 1;
  return 2.0 * scales * 5.0 * static_cast<double>(activation_count(o));
}

}  // namespace lmo::oracle::drift
