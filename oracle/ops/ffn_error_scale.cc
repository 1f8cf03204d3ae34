#include "oracle/ops/ffn_error_scale.h"

#include <cmath>
#include <cstddef>

#include "oracle/ops/activations.h"
#include "oracle/ops/dot_rounding.h"
#include "oracle/ops/policy_table.h"
#include "reference/activation_kind.h"
#include "reference/activations.h"
#include "reference/activations_grad.h"

namespace lmo::oracle {
namespace {

using ref::Activation;

// |act'(h)|; for ReLU 1 wherever h lies within 8·2^-24·e_h of the kink or above it (a kernel's
// rounded h may be on the other side of 0), which covers every compute format up to f32.
double slope(Activation act, double h, double e_h) {
  switch (act) {
    case Activation::kGELU:
      return std::fabs(ref::gelu_grad(h));
    case Activation::kGELUTanh:
      return std::fabs(ref::gelu_tanh_grad(h));
    case Activation::kSiLU:
      return std::fabs(ref::silu_grad(h));
    default:
      return h > -8 * 0x1p-24 * e_h ? 1.0 : 0.0;
  }
}

}  // namespace

std::vector<double> ffn_error_scale(const FfnParams& p, const InputSet& in) {
  const auto tokens = static_cast<std::ptrdiff_t>(p.tokens);
  const auto d = static_cast<std::ptrdiff_t>(p.d), d_ff = static_cast<std::ptrdiff_t>(p.d_ff);
  const std::vector<double> x = in.values<double>("x"), w2 = in.values<double>("w2");
  const std::vector<double> w = in.values<double>(p.gated ? "w" : "w1");
  const std::vector<double> v = p.gated ? in.values<double>("v") : std::vector<double>{};
  const std::vector<double> b1 = p.bias ? in.values<double>("b1") : std::vector<double>{};
  const std::vector<double> b2 = p.bias ? in.values<double>("b2") : std::vector<double>{};
  // The activation's own error, relative, in units of u: 2 per ulp of its elementwise policy
  // (an ulp of a is at most 2u·|a|), plus arg_error·κ.
  const Policy& act_policy = policy_for(ref::activation_name(p.act));
  std::vector<double> s(static_cast<size_t>(tokens * d));
  std::vector<double> g(static_cast<size_t>(d_ff)), e2_g(static_cast<size_t>(d_ff));
  for (std::ptrdiff_t t = 0; t < tokens; ++t) {
    const double* xt = x.data() + t * d;
    for (std::ptrdiff_t j = 0; j < d_ff; ++j) {
      const DotRounding h = dot_rounding(xt, 1, w.data() + j, d_ff, d,
                                         p.bias ? &b1[static_cast<size_t>(j)] : nullptr);
      const double a = ref::activate(p.act, h.value);
      const double c = 2 * static_cast<double>(act_policy.ulps_wide) +
                       act_policy.arg_error * activation_condition(p.act, ref::mp(h.value));
      const double l = slope(p.act, h.value, std::sqrt(h.squares));
      const double e2_a = l * l * h.squares + (c * a) * (c * a);
      const auto at = static_cast<size_t>(j);
      if (p.gated) {
        const DotRounding hv = dot_rounding(xt, 1, v.data() + j, d_ff, d, nullptr);
        g[at] = a * hv.value;
        e2_g[at] = hv.value * hv.value * e2_a + a * a * hv.squares + g[at] * g[at];
      } else {
        g[at] = a;
        e2_g[at] = e2_a;
      }
    }
    for (std::ptrdiff_t i = 0; i < d; ++i) {
      const DotRounding y = dot_rounding(g.data(), 1, w2.data() + i, d, d_ff,
                                         p.bias ? &b2[static_cast<size_t>(i)] : nullptr);
      double e2 = y.squares;
      for (std::ptrdiff_t j = 0; j < d_ff; ++j) {
        const double wji = w2[static_cast<size_t>(j * d + i)];
        e2 += wji * wji * e2_g[static_cast<size_t>(j)];
      }
      s[static_cast<size_t>(t * d + i)] = std::sqrt(e2);
    }
  }
  return s;
}

}  // namespace lmo::oracle
