// C09 and E01: RMSNorm and LayerNorm (000 §1.2; 002; 003).
#include <cmath>

#include "oracle/claims/eval.h"
#include "reference/norms.h"

namespace lmo::oracle::claims {
namespace {

constexpr int64_t kDim = 8;

template <class N>
std::vector<N> scaled(const std::vector<N>& x, const N& c, const N& b) {
  std::vector<N> y;
  for (const N& v : x) y.push_back(N(c * v) + b);
  return y;
}

// C09 on a kernel backend: the same three identities, as rmsnorm and layernorm runs (two rows
// each: the two sides). x and the shift lie on the 2^-12 grid and c in [0.5, 4) on the 2^-8
// grid, so c·x is a multiple of 2^-20 below 2^3 (23 bits) and c·x + shift one below 10: exact
// in f32, both sides see exactly the inputs the identity relates. (A power-of-two c would make
// the kernel's two rows differ by an exact scaling only, and the identity trivially bitwise.)
void kernel_c09(const ClaimContext& ctx, int t, KernelRunner& k, IdentityCheck& c) {
  using std::abs;
  std::vector<double> x = f32_uniform(ctx.seed, key("C09", "x", t), kDim, -2, 2);
  for (double& v : x) v = on_grid(v, 12);
  const auto g = f32_uniform(ctx.seed, key("C09", "gamma", t), kDim, 0.5, 1.5);
  const auto beta = f32_uniform(ctx.seed, key("C09", "beta", t), kDim, -1, 1);
  const auto cb = f32_uniform(ctx.seed, key("C09", "cb", t), 2, 0.5, 4);
  const double scale_c = on_grid(cb[0], 8), shift = on_grid(cb[1] - 2, 12);
  mp g_max = 0, beta_max = 0;
  for (int64_t i = 0; i < kDim; ++i) {
    g_max = std::max(g_max, mp(abs(mp(g[i]))));
    beta_max = std::max(beta_max, mp(abs(mp(beta[i]))));
  }
  const mp scale = sqrt(mp(kDim)) * g_max + beta_max;
  std::vector<double> rms_in = x, ln_in = x, z(x.begin(), x.begin() + kDim / 2);
  for (int64_t i = 0; i < kDim; ++i) {
    rms_in.push_back(scale_c * x[i]);
    ln_in.push_back(scale_c * x[i] + shift);
  }
  for (int64_t i = 0; i < kDim / 2; ++i) z.push_back(-x[i]);
  const nlohmann::json two = {{"rows", 2}, {"d", kDim}, {"eps", 0.0}};
  const auto r = k.run("rmsnorm", two, {{"x", rms_in}, {"gamma", g}}).at("y");
  const auto l = k.run("layernorm", two, {{"x", ln_in}, {"gamma", g}, {"beta", beta}}).at("y");
  const nlohmann::json one = {{"rows", 1}, {"d", kDim}, {"eps", 1e-5}};
  const auto rz = k.run("rmsnorm", one, {{"x", z}, {"gamma", g}}).at("y");
  const auto lz =
      k.run("layernorm", one, {{"x", z}, {"gamma", g}, {"beta", std::vector<double>(kDim, 0.0)}})
          .at("y");
  for (int64_t i = 0; i < kDim; ++i) {
    const auto j = static_cast<size_t>(i);
    c.add(r[j + kDim], r[j], scale);
    c.add(l[j + kDim], l[j], scale);
    c.add(rz[j], lz[j], scale);
  }
}

// C09: RMSNorm(c·x) = RMSNorm(x) (ε = 0, c > 0); LayerNorm(c·x + b) = LayerNorm(x) (ε = 0);
// RMSNorm(x) = LayerNorm(x) with β = 0 on zero-mean input (any common ε).
ClaimEvidence eval_c09(const ClaimContext& ctx) {
  return run_identity(ctx, 12, FloatBound::kAnalysis, [&]<class N>(int t, IdentityCheck& c) {
    using S = std::span<const N>;
    const auto x = uniform<N>(ctx.seed, key("C09", "x", t), kDim, -2, 2);
    const auto g = uniform<N>(ctx.seed, key("C09", "gamma", t), kDim, 0.5, 1.5);
    const auto beta = uniform<N>(ctx.seed, key("C09", "beta", t), kDim, -1, 1);
    const auto cb = uniform<N>(ctx.seed, key("C09", "cb", t), 2, 0.5, 4);
    const N zero(0), shift = N(cb[1] - N(2));
    const mp scale = sqrt(mp(kDim)) * max_abs(g) + max_abs(beta);
    const auto rx = ref::rmsnorm<N>(S(x), S(g), zero);
    const auto rcx = scaled(x, cb[0], zero);
    c.add_all(ref::rmsnorm<N>(S(rcx), S(g), zero), rx, scale);
    const auto lcx = scaled(x, cb[0], shift);
    c.add_all(ref::layernorm<N>(S(lcx), S(g), S(beta), zero),
              ref::layernorm<N>(S(x), S(g), S(beta), zero), scale);
    // Zero mean: the values and their negatives.
    std::vector<N> z(x.begin(), x.begin() + kDim / 2);
    for (int64_t i = 0; i < kDim / 2; ++i) z.push_back(-x[i]);
    const N eps = rounded<N>(mp("1e-5"));
    const std::vector<N> no_beta(kDim, N(0));
    c.add_all(ref::rmsnorm<N>(S(z), S(g), eps), ref::layernorm<N>(S(z), S(g), S(no_beta), eps),
              scale);
  },
      [&](int t, KernelRunner& k, IdentityCheck& c) { kernel_c09(ctx, t, k, c); });
}

// E01: the notes' x / sqrt(‖x‖² + ε) is F02 divided by √d (ε = 0).
ClaimEvidence eval_e01(const ClaimContext& ctx) {
  using S = std::span<const mp>;
  const int trials = 8;
  mp worst = 0, gap = 0;
  Counterexample cx;
  for (int t = 0; t < trials; ++t) {
    const auto x = uniform<mp>(ctx.seed, key("E01", "x", t), kDim, -2, 2);
    const std::vector<mp> g(kDim, mp(1));
    const auto f02 = ref::rmsnorm<mp>(S(x), S(g), mp(0));
    const auto lit = ref::rmsnorm_literal_e01<mp>(S(x), S(g), mp(0));
    for (int64_t i = 0; i < kDim; ++i) {
      worst = std::max(worst, mp(abs(f02[i] - sqrt(mp(kDim)) * lit[i]) / abs(f02[i])));
    }
    if (t == 0) {
      gap = relative_difference(f02[0], lit[0]);
      cx = {"d = 8, gamma = 1, eps = 0, x = " + show_vector(x), "F02 x/sqrt(mean(x^2))",
            show(f02[0]), "notes x/sqrt(||x||^2)", show(lit[0])};
    }
  }
  const bool shown = worst < mp("1e-40") && gap > mp("0.5");
  return counterexample_evidence(shown, cx, trials, ClaimStatus::kErratumShown,
                                 static_cast<double>(gap),
                                 "F02 = sqrt(d) * literal to relative " + show(worst, 3) +
                                     " (sqrt(8) = 2.83 here)");
}

}  // namespace

std::vector<Claim> norm_claims() {
  return {
      {"C09", "000 §1.2",
       "RMSNorm(c x) = RMSNorm(x) (c > 0, eps = 0); LayerNorm is shift- and scale-invariant; "
       "RMSNorm = LayerNorm (beta = 0) on zero-mean input",
       ClaimKind::kIdentity, std::string(kAnalysisSource) + "; " + kKernelSource, eval_c09},
      {"E01", "000 §1.2, 002, 003",
       "notes: RMSNorm x / sqrt(||x||^2 + eps); correct: x / sqrt(mean(x^2) + eps), off by "
       "sqrt(d)",
       ClaimKind::kCounterexample, "n/a: the two forms compared in exact arithmetic", eval_e01},
  };
}

}  // namespace lmo::oracle::claims
