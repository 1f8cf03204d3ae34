// Measures the f32 errors of the fast activations SiLU, GELU-tanh and GELU (fast/activations.h)
// against a long-double reference on dense sweeps, on every target this CPU supports: the
// figures of the error analyses in fast/math-inl.h (SiluF, GeluTanhF, GeluF). Not a test (about
// 3½ minutes of CPU per target at the default strides): a measurement to read and report.
//
// Every `stride`-th f32 x of [−b, b] (SiLU: [−88, 88], past which its result is x or the scaled
// deep form; GELU-tanh: [−20, 20]; GELU: every `gelu_stride`-th of [−16, 16]), split at x = 0:
// the largest error in ulps of the exact value, and the largest share of the policy's allowance
// (the records in oracle/ops/activations.cc: k ulps plus, for the GELUs, arg·κ·u·|y|/ulp(y), κ the
// condition of the inner function as oracle/ops/activations.cc computes it: |v|(1 − σ(v)) for
// GELU-tanh's v = 2√(2/π)(x + 0.044715x³), |a|·2e^{−a²}/(√π·erfc a) for GELU's a = −x/√2). Usage:
// activation_error_sweep [stride = 3] [gelu_stride = 61] [target names, e.g. AVX2 SSE4: all]
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fast/activations.h"
#include "tools/error_sweep.h"

namespace {

using lmo::fast::Activation;
using lmo::tools::from_bits;
using lmo::tools::to_bits;
using lmo::tools::ulp_f32;
using lmo::tools::ulps;
using lmo::tools::Worst;

struct Exact {
  long double y;
  long double kappa;  // the inner function's condition (0 where the policy has no argument term)
};

Exact exact_silu(long double x) { return {x / (1 + std::exp(-x)), 0}; }

Exact exact_gelu_tanh(long double x) {
  const long double v = 2 * std::sqrt(2 / std::acos(-1.0L)) * (x + 0.044715L * x * x * x);
  const long double s = 1 / (1 + std::exp(-v));
  return {x * s, std::fabs(v) * (1 - s)};
}

Exact exact_gelu(long double x) {
  const long double a = -x / std::sqrt(2.0L);
  const long double e = std::erfc(a);
  const long double kappa =
      e == 0 ? 0 : std::fabs(a) * 2 * std::exp(-a * a) / (std::sqrt(std::acos(-1.0L)) * e);
  return {x * e / 2, kappa};
}

struct Row {
  const char* name;
  Activation act;
  Exact (*exact)(long double);
  float bound;  // the sweep covers [−bound, bound]
  double k;     // the policy's ulps
  double arg;   // the policy's argument error in u (0: none)
};

void sweep(const Row& row, uint32_t stride) {
  const uint32_t top = to_bits(row.bound);
  const size_t chunk = size_t{1} << 22;
  std::vector<float> x, y(chunk);
  Worst err[2], share[2];  // [0]: x < 0, [1]: x ≥ 0
  for (uint64_t u = 0; u <= top;) {
    x.clear();
    for (; u <= top && x.size() + 2 <= chunk; u += stride) {
      x.push_back(from_bits(static_cast<uint32_t>(u)));
      if (u != 0) x.push_back(-x.back());
    }
    lmo::fast::activation(row.act, lmo::fast::Storage::f32, x.data(), y.data(),
                          static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      const Exact e = row.exact(x[i]);
      const double ulp_err = ulps(y[i], e.y);
      const double allowance =
          row.k + row.arg * static_cast<double>(e.kappa * 0x1p-24L * std::fabs(e.y) / ulp_f32(e.y));
      const int side = x[i] >= 0;
      err[side].add(ulp_err, x[i]);
      share[side].add(ulp_err / allowance, x[i]);
    }
  }
  std::printf(
      "  %-9s x < 0: %.3f ulp (x = %.9g), %.3f of the policy (x = %.9g); x ≥ 0: %.3f ulp"
      " (x = %.9g), %.3f of the policy (x = %.9g)\n",
      row.name, err[0].err, err[0].at, share[0].err, share[0].at, err[1].err, err[1].at,
      share[1].err, share[1].at);
}

}  // namespace

int main(int argc, char** argv) {
  const long stride = argc > 1 ? std::atol(argv[1]) : 3;
  const long gelu_stride = argc > 2 ? std::atol(argv[2]) : 61;
  if (stride < 1 || gelu_stride < 1) {
    std::fprintf(stderr, "activation_error_sweep: strides must be ≥ 1\n");
    return 2;
  }
  const Row rows[] = {{"silu", Activation::silu, exact_silu, 88.0f, 3, 0},
                      {"gelu_tanh", Activation::gelu_tanh, exact_gelu_tanh, 20.0f, 4, 7},
                      {"gelu", Activation::gelu, exact_gelu, 16.0f, 4, 2}};
  lmo::tools::for_each_chosen_target(argc, argv, 3, [&] {
    for (const Row& row : rows) {
      sweep(row, static_cast<uint32_t>(row.act == Activation::gelu ? gelu_stride : stride));
    }
  });
  return 0;
}
