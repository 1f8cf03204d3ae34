// C26: GELU-tanh against exact GELU; SiLU = Swish₁ (004; 002).
#include <cmath>

#include "oracle/claims/eval.h"
#include "reference/activations.h"

namespace lmo::oracle::claims {
namespace {

// D(x) = GELU-tanh(x) − GELU(x) in mp.
mp gelu_gap(const mp& x) { return ref::gelu_tanh(x) - ref::gelu(x); }

struct Peak {
  mp x, gap;  // where |D| is largest, and |D| there
};

// The largest |D| on [−8, 8]: a grid of step 1/64, then a ternary search on |D| within one step
// of the best grid point (|D| is unimodal there: its extrema are at least 0.3 apart).
Peak gelu_tanh_peak() {
  static const Peak peak = [] {
    Peak best{mp(0), mp(0)};
    for (int i = -512; i <= 512; ++i) {
      const mp x = mp(i) / 64, g = abs(gelu_gap(x));
      if (g > best.gap) best = {x, g};
    }
    mp lo = best.x - mp(1) / 64, hi = best.x + mp(1) / 64;
    for (int it = 0; it < 200; ++it) {
      const mp a = lo + (hi - lo) / 3, b = hi - (hi - lo) / 3;
      if (abs(gelu_gap(a)) < abs(gelu_gap(b))) {
        lo = a;
      } else {
        hi = b;
      }
    }
    const mp x = (lo + hi) / 2;
    return Peak{x, mp(abs(gelu_gap(x)))};
  }();
  return peak;
}

// C26 on a kernel backend: gelu_tanh and gelu runs on the same f32 inputs (the trial's values
// and the peak rounded to f32), |GELU-tanh − GELU| ≤ M with both allowances on top. SiLU =
// Swish_1 stays on the reference: no op computes Swish_β, so a kernel has nothing to compare.
void kernel_c26(const ClaimContext& ctx, const Peak& peak, int t, KernelRunner& k,
                IdentityCheck& c) {
  auto x = f32_uniform(ctx.seed, key("C26", "x", t), 32, -10, 10);
  x.push_back(static_cast<float>(static_cast<double>(peak.x)));
  const nlohmann::json params = {{"n", x.size()}};
  const auto gt = k.run("gelu_tanh", params, {{"x", x}}).at("y");
  const auto g = k.run("gelu", params, {{"x", x}}).at("y");
  for (size_t i = 0; i < x.size(); ++i) {
    c.add_le(abs(gt[i].value - g[i].value), gt[i].allowance + g[i].allowance, peak.gap, peak.gap);
  }
}

// C26: |GELU-tanh(x) − GELU(x)| ≤ M, M the measured maximum (found above, reported with where it
// is reached); SiLU(x) = Swish_1(x).
ClaimEvidence eval_c26(const ClaimContext& ctx) {
  const Peak peak = gelu_tanh_peak();
  ClaimEvidence ev =
      run_identity(ctx, 8, FloatBound::kAnalysis, [&]<class N>(int t, IdentityCheck& c) {
        for (const N& x : uniform<N>(ctx.seed, key("C26", "x", t), 32, -10, 10)) {
          const N gt = ref::gelu_tanh(x), g = ref::gelu(x);
          c.add_le(abs(value_of(gt) - value_of(g)), error_of(gt) + error_of(g), peak.gap, peak.gap);
          c.add(ref::silu(x), ref::swish(x, N(1)), mp(1) + abs(value_of(x)));
        }
        // At the peak itself (rounded to the format): the bound is attained, not exceeded.
        const N xp = rounded<N>(peak.x);
        const N gt = ref::gelu_tanh(xp), g = ref::gelu(xp);
        c.add_le(abs(value_of(gt) - value_of(g)), error_of(gt) + error_of(g), peak.gap, peak.gap);
      },
      [&](int t, KernelRunner& k, IdentityCheck& c) { kernel_c26(ctx, peak, t, k, c); });
  ev.summary = "max |GELU-tanh - GELU| = " + show(peak.gap, 10) + " at x = " + show(peak.x, 10) +
               " and at -x (D(-x) = D(x)); trials on [-10, 10)";
  return ev;
}

}  // namespace

std::vector<Claim> activation_claims() {
  return {
      {"C26", "004; 002",
       "GELU-tanh stays within the measured maximum distance M of exact GELU (M and where it is "
       "reached are reported); SiLU = Swish_1",
       ClaimKind::kBound,
       std::string(kAnalysisSource) + "; " + kKernelSource + " (SiLU = Swish_1: reference only)",
       eval_c26},
  };
}

}  // namespace lmo::oracle::claims
