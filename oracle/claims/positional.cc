// C01–C04: sinusoidal and learned absolute position encodings (000 §1.5.1, §1.5.4).
#include <cmath>

#include "oracle/claims/eval.h"
#include "reference/linalg.h"
#include "reference/positional.h"
#include "reference/rope.h"

namespace lmo::oracle::claims {
namespace {

constexpr int64_t kDim = 8;  // d: four frequencies, from 1 down to 10000^(-3/4)

// PE(p) in N at the integer position p (rounded once to N, its rounding tracked).
template <class N>
std::vector<N> pe(int64_t p) {
  return ref::sinusoidal_pe(ref::rope_position<N>(p), kDim);
}

// Kernel trials (claims_kernel.h): sinusoidal_pe runs at the ref-f32 trial's positions; the
// dot products and rotations are formed from the kernel's outputs in exact arithmetic, their
// allowances propagated.
constexpr int64_t kMaxKernelPosition = int64_t{1} << 20;

std::vector<std::vector<KernelValue>> kernel_pe(KernelRunner& k,
                                                const std::vector<int64_t>& positions) {
  const nlohmann::json params = {
      {"tokens", positions.size()}, {"d", kDim}, {"max_position", kMaxKernelPosition}};
  const auto pe = k.run("sinusoidal_pe", params,
                        {{"positions", {positions.begin(), positions.end()}}})
                      .at("pe");
  std::vector<std::vector<KernelValue>> rows;
  for (size_t r = 0; r < positions.size(); ++r) {
    rows.emplace_back(pe.begin() + static_cast<int64_t>(r) * kDim,
                      pe.begin() + static_cast<int64_t>(r + 1) * kDim);
  }
  return rows;
}

void kernel_c01(const ClaimContext& ctx, int t, KernelRunner& k, IdentityCheck& c) {
  const auto p = uniform_ints(ctx.seed, key("C01", "p", t), 2, 0, kMaxKernelPosition);
  const auto pe = kernel_pe(k, p);
  mp rhs = 0;
  for (int64_t i = 0; i < kDim / 2; ++i) {
    rhs += cos(mp(p[0] - p[1]) / pow(mp(10000), mp(2 * i) / kDim));
  }
  c.add(kernel_dot(pe[0], pe[1]), exact_value(rhs), mp(kDim / 2));
}

void kernel_c02(const ClaimContext& ctx, int t, KernelRunner& k, IdentityCheck& c) {
  const auto pk = uniform_ints(ctx.seed, key("C02", "pk", t), 2, 0, kMaxKernelPosition / 2);
  const auto pe = kernel_pe(k, {pk[0] + pk[1], pk[0], pk[1]});
  const auto &lhs = pe[0], &at_p = pe[1], &at_k = pe[2];
  std::vector<KernelValue> rhs(kDim);
  for (size_t i = 0; i < static_cast<size_t>(kDim); i += 2) {
    const KernelValue &sp = at_p[i], &cp = at_p[i + 1], &sk = at_k[i], &ck = at_k[i + 1];
    rhs[i] = sp * ck + cp * sk;
    rhs[i + 1] = cp * ck - sp * sk;
  }
  c.add_all(lhs, rhs, mp(1));
}

// C01: PE(p1)·PE(p2) = Σ_i cos((p1 − p2)·ω_i), ω_i = 1/10000^(2i/d) (formed as in F07).
ClaimEvidence eval_c01(const ClaimContext& ctx) {
  return run_identity(ctx, 12, FloatBound::kAnalysis, [&]<class N>(int t, IdentityCheck& c) {
    using std::cos;
    using std::pow;
    const auto p = uniform_ints(ctx.seed, key("C01", "p", t), 2, 0, max_position<N>());
    const std::vector<N> a = pe<N>(p[0]), b = pe<N>(p[1]);
    if (!all_finite(a) || !all_finite(b)) return c.skip("10000 is not finite in this format");
    const N lhs = ref::dot<N>(std::span<const N>(a), std::span<const N>(b));
    const N diff = ref::rope_position<N>(p[0] - p[1]);
    const N base(10000);
    N rhs(0);
    for (int64_t i = 0; i < kDim / 2; ++i) {
      rhs = rhs + N(cos(N(diff / N(pow(base, N(N(2 * i) / N(kDim)))))));
    }
    c.add(lhs, rhs, mp(kDim / 2));
  },
      [&](int t, KernelRunner& k, IdentityCheck& c) { kernel_c01(ctx, t, k, c); });
}

// C02: PE(p + k) = M_k PE(p): (sin, cos) of each frequency rotated by the angle k·ω_i,
//   sin((p+k)ω) = sin(pω)cos(kω) + cos(pω)sin(kω),  cos((p+k)ω) = cos(pω)cos(kω) − sin(pω)sin(kω).
ClaimEvidence eval_c02(const ClaimContext& ctx) {
  return run_identity(ctx, 12, FloatBound::kAnalysis, [&]<class N>(int t, IdentityCheck& c) {
    const int64_t top = max_position<N>() / 2;
    const auto pk = uniform_ints(ctx.seed, key("C02", "pk", t), 2, 0, top);
    const std::vector<N> lhs = pe<N>(pk[0] + pk[1]), at_p = pe<N>(pk[0]), at_k = pe<N>(pk[1]);
    if (!all_finite(lhs) || !all_finite(at_p) || !all_finite(at_k)) {
      return c.skip("10000 is not finite in this format");
    }
    std::vector<N> rhs(kDim);
    for (int64_t i = 0; i < kDim; i += 2) {
      const N &sp = at_p[i], &cp = at_p[i + 1], &sk = at_k[i], &ck = at_k[i + 1];
      rhs[i] = N(sp * ck) + N(cp * sk);
      rhs[i + 1] = N(cp * ck) - N(sp * sk);
    }
    c.add_all(lhs, rhs, mp(1));
  },
      [&](int t, KernelRunner& k, IdentityCheck& c) { kernel_c02(ctx, t, k, c); });
}

// ⟨v_x + E_i, v_y + E_j⟩ for two token vectors and two position rows.
mp embed_dot(const std::vector<mp>& vx, const std::vector<mp>& vy, const std::vector<mp>& ei,
             const std::vector<mp>& ej) {
  mp s = 0;
  for (size_t c = 0; c < vx.size(); ++c) s += (vx[c] + ei[c]) * (vy[c] + ej[c]);
  return s;
}

// C03: with token embeddings added, the product at (i, j) and at (i + s, j + s) differ.
ClaimEvidence eval_c03(const ClaimContext& ctx) {
  const int trials = 8;
  for (int t = 0; t < trials; ++t) {
    const auto vx = uniform<mp>(ctx.seed, key("C03", "vx", t), kDim, -1, 1);
    const auto vy = uniform<mp>(ctx.seed, key("C03", "vy", t), kDim, -1, 1);
    const auto ijs = uniform_ints(ctx.seed, key("C03", "ijs", t), 3, 0, 4096);
    const int64_t i = ijs[0], j = ijs[1], s = ijs[2] + 1;
    const mp a = embed_dot(vx, vy, pe<mp>(i), pe<mp>(j));
    const mp b = embed_dot(vx, vy, pe<mp>(i + s), pe<mp>(j + s));
    const mp gap = relative_difference(a, b);
    if (gap > mp("1e-6")) {
      Counterexample cx{"d = 8, v_x = " + show_vector(vx) + ", v_y = " + show_vector(vy) +
                            ", i = " + std::to_string(i) + ", j = " + std::to_string(j) +
                            ", shift s = " + std::to_string(s),
                        "<v_x + E_i, v_y + E_j>", show(a),
                        "<v_x + E_(i+s), v_y + E_(j+s)>", show(b)};
      return counterexample_evidence(true, cx, t + 1, ClaimStatus::kHolds,
                                     static_cast<double>(gap),
                                     "same i - j, different inner product: the cross terms "
                                     "<v_x, E_j> + <E_i, v_y> depend on absolute positions");
    }
  }
  return counterexample_evidence(false, {}, trials, ClaimStatus::kHolds, 0, "");
}

// C04: learned absolute embeddings: ⟨v_x + u_i, v_y + u_j⟩ is not a function of i − j.
ClaimEvidence eval_c04(const ClaimContext& ctx) {
  const int trials = 8;
  const int64_t positions = 64;
  for (int t = 0; t < trials; ++t) {
    const Mat<mp> tokens = uniform_mat<mp>(ctx.seed, key("C04", "V", t), 2, kDim, -1, 1);
    const Mat<mp> table = uniform_mat<mp>(ctx.seed, key("C04", "U", t), positions, kDim, -1, 1);
    const auto ijs = uniform_ints(ctx.seed, key("C04", "ijs", t), 3, 0, positions / 2);
    const int64_t i = ijs[0], j = ijs[1], s = ijs[2] + 1;
    const std::vector<int64_t> ids{0, 1, 0, 1};
    const std::vector<int64_t> pos{i, j, i + s, j + s};
    const Mat<mp> e = ref::learned_position_embed(tokens, table, std::span<const int64_t>(ids),
                                                  std::span<const int64_t>(pos));
    const mp a = ref::dot<mp>(e.row(0), e.row(1)), b = ref::dot<mp>(e.row(2), e.row(3));
    const mp gap = relative_difference(a, b);
    if (gap > mp("1e-6")) {
      Counterexample cx{"d = 8, a learned table U of 64 uniform[-1, 1) rows, tokens x = 0, y = 1, "
                        "i = " + std::to_string(i) + ", j = " + std::to_string(j) +
                            ", shift s = " + std::to_string(s) + ", u_i = " +
                            show_vector(widen(std::vector<mp>(table.row(i).begin(),
                                                              table.row(i).end()))),
                        "<f(x, i), f(y, j)>", show(a), "<f(x, i+s), f(y, j+s)>", show(b)};
      return counterexample_evidence(true, cx, t + 1, ClaimStatus::kHolds,
                                     static_cast<double>(gap),
                                     "rows u_i are free parameters: nothing ties <u_i, u_j> to "
                                     "i - j");
    }
  }
  return counterexample_evidence(false, {}, trials, ClaimStatus::kHolds, 0, "");
}

}  // namespace

std::vector<Claim> positional_claims() {
  return {
      {"C01", "000 §1.5.1",
       "PE(p1).PE(p2) = sum_i cos((p1 - p2) w_i): the sinusoidal dot product depends only on "
       "p1 - p2",
       ClaimKind::kIdentity, std::string(kAnalysisSource) + "; " + kKernelSource, eval_c01},
      {"C02", "Vaswani et al. §3.5, behind 000 §1.5.1",
       "PE(p + k) is a fixed linear map (block rotation by k w_i) of PE(p), for every p",
       ClaimKind::kIdentity, std::string(kAnalysisSource) + "; " + kKernelSource, eval_c02},
      {"C03", "000 §1.5.4",
       "with token embeddings added, <v_x + E_i, v_y + E_j> is not a function of i - j alone",
       ClaimKind::kCounterexample, "n/a: a counterexample in exact arithmetic", eval_c03},
      {"C04", "000 §1.5.4",
       "learned absolute embeddings do not satisfy <f(x,i), f(y,j)> = g(x, y, i - j)",
       ClaimKind::kCounterexample, "n/a: a counterexample in exact arithmetic", eval_c04},
  };
}

}  // namespace lmo::oracle::claims
