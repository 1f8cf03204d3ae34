// C10–C12 and E02: softmax, cross-entropy, z-loss and soft-capping (000 §3; 001 §4-1).
#include <algorithm>
#include <boost/multiprecision/mpfr.hpp>
#include <cmath>

#include "oracle/claims/eval.h"
#include "reference/softmax.h"

namespace lmo::oracle::claims {
namespace {

using mp100 = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<100>,
                                            boost::multiprecision::et_off>;

constexpr int64_t kVocab = 8;

template <class N>
std::vector<N> shifted(const std::vector<N>& z, const N& c) {
  std::vector<N> out;
  for (const N& v : z) out.push_back(v + c);
  return out;
}

// C10 on a kernel backend, as cross_entropy and softmax runs with the rows z and z + c: CE =
// −z_y + log Z (the kernel's log Z) = −log softmax_y, shift invariance of softmax and CE, and
// the z-loss's change λ(2c·log Z + c²) under the shift. z and c lie on the 2^-12 grid, so z + c
// is exact in f32; λ = 2^-13 is exact in every format (the reference trial's 1e-4 is not).
void kernel_c10(const ClaimContext& ctx, int t, KernelRunner& k, IdentityCheck& c) {
  std::vector<double> z = f32_uniform(ctx.seed, key("C10", "z", t), kVocab, -4, 4);
  for (double& v : z) v = on_grid(v, 12);
  const double shift = on_grid(f32_uniform(ctx.seed, key("C10", "c", t), 1, -8, 8)[0], 12);
  const int64_t y = uniform_ints(ctx.seed, key("C10", "y", t), 1, 0, kVocab)[0];
  std::vector<double> rows = z;
  for (double v : z) rows.push_back(v + shift);
  const std::vector<double> targets{static_cast<double>(y), static_cast<double>(y)};
  const double lambda = std::ldexp(1.0, -13);
  const nlohmann::json ce_params = {{"rows", 2}, {"vocab", kVocab}};
  const KernelOutputs ce = k.run("cross_entropy", ce_params, {{"z", rows}, {"target", targets}});
  const auto& loss = ce.at("loss");
  const auto& logz = ce.at("logz");
  const auto p = k.run("softmax", {{"rows", 2}, {"n", kVocab}}, {{"z", rows}}).at("p");
  nlohmann::json zl_params = ce_params;
  zl_params["z_loss"] = lambda;
  const auto zl = k.run("cross_entropy", zl_params, {{"z", rows}, {"target", targets}}).at("loss");
  const mp scale = 1 + abs(loss[0].exact);
  const mp zy(z[static_cast<size_t>(y)]);
  c.add(loss[0], neg_log(p[static_cast<size_t>(y)]), scale);
  c.add(loss[0], KernelValue{-zy, -zy, 0} + logz[0], scale);
  for (int64_t j = 0; j < kVocab; ++j) {
    c.add(p[static_cast<size_t>(kVocab + j)], p[static_cast<size_t>(j)], mp(1));
  }
  c.add(loss[1], loss[0], scale);
  const mp cm(shift), lm(lambda);
  const KernelValue penalty_change =
      scaled(logz[0], 2 * lm * cm) + KernelValue{lm * cm * cm, lm * cm * cm, 0};
  c.add(zl[1] - zl[0], penalty_change, scale);
}

// C10: CE = −z_y + log Z = −log softmax_y; softmax and CE are shift-invariant; z-loss is not
// (it changes by exactly λ(2c·log Z + c²)), and its penalty λ(log Z)² is 0 when Z = 1.
ClaimEvidence eval_c10(const ClaimContext& ctx) {
  return run_identity(ctx, 12, FloatBound::kAnalysis, [&]<class N>(int t, IdentityCheck& c) {
    using std::log;
    using S = std::span<const N>;
    const auto z = uniform<N>(ctx.seed, key("C10", "z", t), kVocab, -4, 4);
    const N shift = uniform<N>(ctx.seed, key("C10", "c", t), 1, -8, 8)[0];
    const int64_t y = uniform_ints(ctx.seed, key("C10", "y", t), 1, 0, kVocab)[0];
    const auto zs = shifted(z, shift);
    const N ce = ref::cross_entropy<N>(S(z), y);
    const mp scale = 1 + abs(value_of(ce));
    c.add(ce, N(-N(log(ref::softmax<N>(S(z))[y]))), scale);
    c.add_all(ref::softmax<N>(S(zs)), ref::softmax<N>(S(z)), mp(1));
    c.add(ref::cross_entropy<N>(S(zs), y), ce, scale);
    if constexpr (is_mp_v<N>) {
      const mp lambda("1e-4"), lse = ref::logsumexp<mp>(S(z));
      c.add(mp(ref::z_loss<mp>(S(zs), y, lambda) - ref::z_loss<mp>(S(z), y, lambda)),
            mp(lambda * (2 * shift * lse + shift * shift)), scale);
      // Z = 1: logits log p_i of a distribution p.
      std::vector<mp> logp;
      const auto p = ref::softmax<mp>(S(z));
      for (const mp& v : p) logp.push_back(log(v));
      c.add(mp(ref::z_loss<mp>(S(logp), y, lambda) - ref::cross_entropy<mp>(S(logp), y)), mp(0),
            mp(1));
    }
  },
      [&](int t, KernelRunner& k, IdentityCheck& c) { kernel_c10(ctx, t, k, c); });
}

// The z-loss as a function of the logits, in mp100, for central differences.
mp100 z_loss100(const std::vector<mp100>& z, int64_t y, const mp100& lambda) {
  mp100 s = 0;
  for (const mp100& v : z) s += exp(v);
  const mp100 lse = log(s);
  return -z[static_cast<size_t>(y)] + lse + lambda * lse * lse;
}

// ∂L/∂z_j by central differences in mp100 with h = 1e-24: truncation h²·|L'''|/6 ≈ 1e-48 and
// rounding 1e-100/1e-24 = 1e-76, far below the 1e-40 the identity is held to.
std::vector<mp> z_loss_derivative(const std::vector<mp>& z, int64_t y, const mp& lambda) {
  const mp100 h("1e-24"), lam(lambda);
  std::vector<mp100> w(z.begin(), z.end());
  std::vector<mp> g;
  for (size_t k = 0; k < w.size(); ++k) {
    const mp100 center = w[k];
    w[k] = center + h;
    const mp100 fp = z_loss100(w, y, lam);
    w[k] = center - h;
    const mp100 fm = z_loss100(w, y, lam);
    w[k] = center;
    g.push_back(mp((fp - fm) / (2 * h)));
  }
  return g;
}

// C11 on a kernel backend: the gradient output of cross_entropy with z-loss against the
// derivative of the exact loss (λ = 2^-10, exact in every format, so the kernel and the
// derivative use the same λ).
void kernel_c11(const ClaimContext& ctx, int t, KernelRunner& k, IdentityCheck& c) {
  const auto z = f32_uniform(ctx.seed, key("C11", "z", t), kVocab, -4, 4);
  const int64_t y = uniform_ints(ctx.seed, key("C11", "y", t), 1, 0, kVocab)[0];
  const double lambda = std::ldexp(1.0, -10);
  const auto g = k.run("cross_entropy", {{"rows", 1}, {"vocab", kVocab}, {"z_loss", lambda}},
                       {{"z", z}, {"target", {static_cast<double>(y)}}})
                     .at("grad");
  const auto d = z_loss_derivative(std::vector<mp>(z.begin(), z.end()), y, mp(lambda));
  for (size_t j = 0; j < g.size(); ++j) c.add_exact(g[j], d[j], mp(1));
}

// C11: the F13 gradient p_j − [j = y] + 2λ·log Z·p_j equals the derivative of the loss.
ClaimEvidence eval_c11(const ClaimContext& ctx) {
  return run_identity(ctx, 8, FloatBound::kAnalysis, [&]<class N>(int t, IdentityCheck& c) {
    using S = std::span<const N>;
    const auto z = uniform<N>(ctx.seed, key("C11", "z", t), kVocab, -4, 4);
    const int64_t y = uniform_ints(ctx.seed, key("C11", "y", t), 1, 0, kVocab)[0];
    const N lambda = rounded<N>(mp("1e-3"));
    const auto g = ref::z_loss_grad<N>(S(z), y, lambda);
    std::vector<mp> zm;
    for (const N& v : z) zm.push_back(value_of(v));
    const auto d = z_loss_derivative(zm, y, mp("1e-3"));
    for (size_t j = 0; j < g.size(); ++j) c.add_exact(g[j], d[j], mp(1));
  },
      [&](int t, KernelRunner& k, IdentityCheck& c) { kernel_c11(ctx, t, k, c); });
}

// C12 on a kernel backend: one softcap run over z, −z and the small values; the same four
// properties, each value with its allowance.
void kernel_c12(const ClaimContext& ctx, int t, KernelRunner& k, IdentityCheck& c) {
  using std::abs;
  const double cap = t % 2 == 0 ? 50 : 30;
  const mp cap_exact(cap);
  auto z = f32_uniform(ctx.seed, key("C12", "z", t), 16, -200, 200);
  std::sort(z.begin(), z.end());
  const auto small = f32_uniform(ctx.seed, key("C12", "small", t), 16, -5, 5);
  std::vector<double> in = z;
  for (double v : z) in.push_back(-v);
  in.insert(in.end(), small.begin(), small.end());
  const auto f = k.run("softcap", {{"n", in.size()}, {"cap", cap}}, {{"z", in}}).at("y");
  const size_t n = z.size();
  for (size_t i = 0; i < n; ++i) {
    c.add(f[n + i], -f[i], cap_exact);                                // odd
    c.add_le(abs(f[i].value), f[i].allowance, cap_exact, cap_exact);  // bounded
    if (i + 1 < n) {                                                  // monotone
      c.add_le(f[i].value, f[i].allowance + f[i + 1].allowance, f[i + 1].value, cap_exact);
    }
  }
  for (size_t i = 0; i < small.size(); ++i) {
    const KernelValue& fv = f[2 * n + i];
    const mp zv(small[i]);
    c.add_le(abs(fv.value - zv), fv.allowance, abs(zv * zv * zv) / (3 * cap_exact * cap_exact),
             mp(1));
  }
}

// C12: cap·tanh(z/cap) is odd, monotone, bounded by cap, and within |z|³/(3 cap²) of z
// (|tanh u − u| ≤ |u|³/3): ≈ identity for |z| ≪ cap.
ClaimEvidence eval_c12(const ClaimContext& ctx) {
  return run_identity(ctx, 8, FloatBound::kAnalysis, [&]<class N>(int t, IdentityCheck& c) {
    using std::abs;
    const mp cap_exact = t % 2 == 0 ? mp(50) : mp(30);  // Gemma 2: attention, final logits
    const N cap = rounded<N>(cap_exact);
    auto z = uniform<N>(ctx.seed, key("C12", "z", t), 16, -200, 200);
    std::sort(z.begin(), z.end(), [](const N& a, const N& b) { return a < b; });
    std::vector<N> f;
    for (const N& v : z) f.push_back(ref::softcap(v, cap));
    for (size_t i = 0; i < z.size(); ++i) {
      c.add(ref::softcap(N(-z[i]), cap), N(-f[i]), cap_exact);                       // odd
      c.add_le(abs(value_of(f[i])), error_of(f[i]), cap_exact, cap_exact);            // bounded
      if (i + 1 < z.size()) {                                                         // monotone
        c.add_le(value_of(f[i]), error_of(f[i]) + error_of(f[i + 1]), value_of(f[i + 1]),
                 cap_exact);
      }
    }
    for (const N& v : uniform<N>(ctx.seed, key("C12", "small", t), 16, -5, 5)) {
      const N fv = ref::softcap(v, cap);
      const mp zv = value_of(v);
      c.add_le(abs(value_of(fv) - zv), error_of(fv), abs(zv * zv * zv) / (3 * cap_exact * cap_exact),
               mp(1));
    }
  },
      [&](int t, KernelRunner& k, IdentityCheck& c) { kernel_c12(ctx, t, k, c); });
}

// E02: the notes' ((log Z)² − 0)² is (log Z)⁴, not the (log Z − 0)² = (log Z)² PaLM penalizes.
ClaimEvidence eval_e02(const ClaimContext& ctx) {
  using S = std::span<const mp>;
  const auto z = uniform<mp>(ctx.seed, key("E02", "z", 0), kVocab, -4, 4);
  const mp lambda("1e-4"), lse = ref::logsumexp<mp>(S(z));
  const mp penalty = ref::z_loss<mp>(S(z), 0, lambda) - ref::cross_entropy<mp>(S(z), 0);
  const mp correct = (lse - 0) * (lse - 0), notes = (lse * lse - 0) * (lse * lse - 0);
  const mp agree = abs(penalty - lambda * correct) / (lambda * correct);
  const mp gap = relative_difference(correct, notes);
  Counterexample cx{"logits z = " + show_vector(z) + ", log Z = " + show(lse, 12),
                    "(log Z - 0)^2 (F13, as z_loss computes)", show(correct),
                    "((log Z)^2 - 0)^2 (the notes' middle expression)", show(notes)};
  return counterexample_evidence(agree < mp("1e-40") && gap > mp("1e-3"), cx, 1,
                                 ClaimStatus::kErratumShown, static_cast<double>(gap),
                                 "z_loss - CE = lambda (log Z)^2 to relative " + show(agree, 3));
}

}  // namespace

std::vector<Claim> softmax_claims() {
  return {
      {"C10", "000 §3",
       "CE = -z_y + log Z = -log softmax_y; softmax and CE are shift-invariant; z-loss is not, and "
       "is 0 iff Z = 1",
       ClaimKind::kIdentity, std::string(kAnalysisSource) + "; " + kKernelSource, eval_c10},
      {"C11", "000 §3",
       "the z-loss gradient formula (F13) equals the derivative of the loss (mp100 central "
       "differences)",
       ClaimKind::kIdentity, std::string(kAnalysisSource) + "; " + kKernelSource, eval_c11},
      {"C12", "001 §4-1",
       "soft-capping is odd, monotone, bounded by cap, and within |z|^3/(3 cap^2) of z (~identity "
       "for |z| << cap)",
       ClaimKind::kBound, std::string(kAnalysisSource) + "; " + kKernelSource, eval_c12},
      {"E02", "000 §3",
       "notes: Loss_z = ((log Z)^2 - 0)^2 = (log Z)^2; the middle expression is (log Z)^4",
       ClaimKind::kCounterexample, "n/a: the two forms compared in exact arithmetic", eval_e02},
  };
}

}  // namespace lmo::oracle::claims
