// C05–C08 and E08: RoPE (000 §1.5.4; 001 §2-4; 002).
#include <cmath>

#include "oracle/claims/eval.h"
#include "reference/linalg.h"
#include "reference/rope.h"

namespace lmo::oracle::claims {
namespace {

using ref::RopeLayout;

constexpr int64_t kHead = 8;  // head dimension: four rotated pairs

// θ_k = 10000^(−2k/d) exactly, rounded once to N and taken as the exact frequencies (every claim
// here holds for any θ; fp8 E4M3 cannot even hold the base 10000).
template <class N>
std::vector<N> thetas(int64_t d = kHead) {
  std::vector<N> th;
  for (int64_t k = 0; k < d / 2; ++k) th.push_back(exact_input<N>(pow(mp(10000), mp(-2 * k) / d)));
  return th;
}

template <class N>
std::vector<N> rot(const std::vector<N>& x, int64_t p, const std::vector<N>& th,
                   RopeLayout layout = RopeLayout::kInterleaved) {
  return ref::rope(std::span<const N>(x), ref::rope_position<N>(p), std::span<const N>(th), layout);
}

template <class N>
N dot(const std::vector<N>& a, const std::vector<N>& b) {
  return ref::dot<N>(std::span<const N>(a), std::span<const N>(b));
}

template <class N>
mp norm2(const std::vector<N>& v) {
  mp s = 0;
  for (const N& x : v) s += value_of(x) * value_of(x);
  return sqrt(s);
}

void kernel_c05(const ClaimContext& ctx, int t, KernelRunner& k, IdentityCheck& c);
void kernel_c06(const ClaimContext& ctx, int t, KernelRunner& k, IdentityCheck& c);

// C05: ⟨f(q, m), f(k, n)⟩ = ⟨f(q, m + s), f(k, n + s)⟩.
ClaimEvidence eval_c05(const ClaimContext& ctx) {
  return run_identity(ctx, 12, FloatBound::kAnalysis, [&]<class N>(int t, IdentityCheck& c) {
    const auto q = uniform<N>(ctx.seed, key("C05", "q", t), kHead, -1, 1);
    const auto k = uniform<N>(ctx.seed, key("C05", "k", t), kHead, -1, 1);
    const auto mns = uniform_ints(ctx.seed, key("C05", "mns", t), 3, 0, max_position<N>() / 2);
    const auto th = thetas<N>();
    const N a = dot(rot(q, mns[0], th), rot(k, mns[1], th));
    const N b = dot(rot(q, mns[0] + mns[2], th), rot(k, mns[1] + mns[2], th));
    c.add(a, b, norm2(q) * norm2(k));
  },
      [&](int t, KernelRunner& k, IdentityCheck& c) { kernel_c05(ctx, t, k, c); });
}

// C06: ‖R(p)x‖ = ‖x‖, R(b)R(a)x = R(a + b)x, R(0)x = x.
ClaimEvidence eval_c06(const ClaimContext& ctx) {
  return run_identity(ctx, 12, FloatBound::kAnalysis, [&]<class N>(int t, IdentityCheck& c) {
    const auto x = uniform<N>(ctx.seed, key("C06", "x", t), kHead, -1, 1);
    const auto ab = uniform_ints(ctx.seed, key("C06", "ab", t), 2, 0, max_position<N>() / 2);
    const auto th = thetas<N>();
    const mp n2 = norm2(x) * norm2(x);
    const auto rx = rot(x, ab[0], th);
    c.add(dot(rx, rx), dot(x, x), n2);
    c.add_all(rot(rx, ab[1], th), rot(x, ab[0] + ab[1], th), norm2(x));
    c.add_all(rot(x, 0, th), x, norm2(x));
  },
      [&](int t, KernelRunner& k, IdentityCheck& c) { kernel_c06(ctx, t, k, c); });
}

// C07: the complex form (x_2k + i x_2k+1)·e^{ipθ_k} and the block-diagonal matrix product
// x·R(p)ᵀ equal the elementwise cos/sin implementation.
ClaimEvidence eval_c07(const ClaimContext& ctx) {
  return run_identity(ctx, 12, FloatBound::kBitwise, [&]<class N>(int t, IdentityCheck& c) {
    using std::cos;
    using std::sin;
    const auto x = uniform<N>(ctx.seed, key("C07", "x", t), kHead, -1, 1);
    const auto p = uniform_ints(ctx.seed, key("C07", "p", t), 1, 0, max_position<N>())[0];
    const auto th = thetas<N>();
    const N pos = ref::rope_position<N>(p);
    const auto elementwise = rot(x, p, th);
    std::vector<N> complex_form(kHead);
    Mat<N> r_t(kHead, kHead);  // R(p)ᵀ for row vectors: y = x R(p)ᵀ
    for (int64_t k = 0; k < kHead / 2; ++k) {
      const N angle = pos * th[k];
      const N cr = cos(angle), ci = sin(angle);  // e^{iθ} = cr + i·ci
      const N &re = x[2 * k], &im = x[2 * k + 1];
      complex_form[2 * k] = N(re * cr) - N(im * ci);  // Re((re + i·im)(cr + i·ci))
      complex_form[2 * k + 1] = N(re * ci) + N(im * cr);
      r_t(2 * k, 2 * k) = cr;
      r_t(2 * k + 1, 2 * k) = -ci;
      r_t(2 * k, 2 * k + 1) = ci;
      r_t(2 * k + 1, 2 * k + 1) = cr;
    }
    const auto matrix_form = ref::vecmat<N>(std::span<const N>(x), r_t);
    c.add_all(complex_form, elementwise, norm2(x));
    c.add_all(matrix_form, elementwise, norm2(x));
  },
      ReferenceOnly{
          "the complex, matrix and elementwise forms are three reference formulations of one "
          "rotation; the rope op computes only one of them"});
}

// The half-split layout's position of interleaved dimension i: 2k → k, 2k + 1 → k + d/2.
int64_t half_index(int64_t i, int64_t d) { return i % 2 == 0 ? i / 2 : i / 2 + d / 2; }

template <class N>
std::vector<N> to_half_split(const std::vector<N>& v) {
  std::vector<N> out(v.size());
  const int64_t d = static_cast<int64_t>(v.size());
  for (int64_t i = 0; i < d; ++i) out[half_index(i, d)] = v[i];
  return out;
}

// Kernel trials (claims_kernel.h): rope runs, one head of kHead dimensions per token row, on
// the ref-f32 trial's f32 inputs and positions; the op's own θ_k = 10000^(−2k/d) (every claim
// here holds for any θ). Scores and norms are formed from the kernel's outputs in exact
// arithmetic, their allowances propagated.
constexpr int64_t kMaxKernelPosition = int64_t{1} << 20;

std::vector<KernelValue> kernel_rope(KernelRunner& k, const std::vector<double>& rows,
                                     const std::vector<int64_t>& positions,
                                     const char* layout = "interleaved") {
  const nlohmann::json params = {{"tokens", positions.size()}, {"heads", 1},
                                 {"head_dim", kHead},         {"layout", layout},
                                 {"max_position", kMaxKernelPosition}};
  return k.run("rope", params, {{"x", rows}, {"positions", {positions.begin(), positions.end()}}})
      .at("y");
}

std::vector<KernelValue> row(const std::vector<KernelValue>& m, int64_t r) {
  return {m.begin() + r * kHead, m.begin() + (r + 1) * kHead};
}

std::vector<double> stacked(std::initializer_list<std::vector<double>> rows) {
  std::vector<double> out;
  for (const auto& r : rows) out.insert(out.end(), r.begin(), r.end());
  return out;
}

mp norm2(const std::vector<double>& v) {
  mp s = 0;
  for (double x : v) s += mp(x) * mp(x);
  return sqrt(s);
}

void kernel_c05(const ClaimContext& ctx, int t, KernelRunner& k, IdentityCheck& c) {
  const auto q = f32_uniform(ctx.seed, key("C05", "q", t), kHead, -1, 1);
  const auto kk = f32_uniform(ctx.seed, key("C05", "k", t), kHead, -1, 1);
  const auto mns = uniform_ints(ctx.seed, key("C05", "mns", t), 3, 0, kMaxKernelPosition / 2);
  const auto y = kernel_rope(k, stacked({q, kk, q, kk}),
                             {mns[0], mns[1], mns[0] + mns[2], mns[1] + mns[2]});
  c.add(kernel_dot(row(y, 0), row(y, 1)), kernel_dot(row(y, 2), row(y, 3)), norm2(q) * norm2(kk));
}

// C06 on a kernel: ‖R(p)x‖ = ‖x‖ and R(0)x = x. R(b)R(a) = R(a + b) would feed a kernel's
// output back as its input, whose allowance the op's contract does not cover: reference only.
void kernel_c06(const ClaimContext& ctx, int t, KernelRunner& k, IdentityCheck& c) {
  const auto x = f32_uniform(ctx.seed, key("C06", "x", t), kHead, -1, 1);
  const auto ab = uniform_ints(ctx.seed, key("C06", "ab", t), 2, 0, kMaxKernelPosition / 2);
  const auto y = kernel_rope(k, stacked({x, x}), {ab[0], 0});
  const mp n = norm2(x);
  const auto rx = row(y, 0), r0 = row(y, 1);
  c.add_exact(kernel_dot(rx, rx), n * n, n * n);
  for (int64_t i = 0; i < kHead; ++i) c.add_exact(r0[i], mp(x[i]), n);
}

void kernel_c08(const ClaimContext& ctx, int t, KernelRunner& k, IdentityCheck& c) {
  const auto q = f32_uniform(ctx.seed, key("C08", "q", t), kHead, -1, 1);
  const auto kk = f32_uniform(ctx.seed, key("C08", "k", t), kHead, -1, 1);
  const auto mn = uniform_ints(ctx.seed, key("C08", "mn", t), 2, 0, kMaxKernelPosition);
  const auto yi = kernel_rope(k, stacked({q, kk}), {mn[0], mn[1]});
  const auto yh =
      kernel_rope(k, stacked({to_half_split(q), to_half_split(kk)}), {mn[0], mn[1]}, "half_split");
  c.add_all(to_half_split(row(yi, 0)), row(yh, 0), norm2(q));
  c.add(kernel_dot(row(yi, 0), row(yi, 1)), kernel_dot(row(yh, 0), row(yh, 1)),
        norm2(q) * norm2(kk));
}

// C08: interleaved RoPE on q, k gives the same scores as half-split RoPE on the permuted q, k
// (the projection rows permuted); the rotated vectors are that permutation of each other.
ClaimEvidence eval_c08(const ClaimContext& ctx) {
  return run_identity(ctx, 12, FloatBound::kAnalysis, [&]<class N>(int t, IdentityCheck& c) {
    const auto q = uniform<N>(ctx.seed, key("C08", "q", t), kHead, -1, 1);
    const auto k = uniform<N>(ctx.seed, key("C08", "k", t), kHead, -1, 1);
    const auto mn = uniform_ints(ctx.seed, key("C08", "mn", t), 2, 0, max_position<N>());
    const auto th = thetas<N>();
    const auto qi = rot(q, mn[0], th), ki = rot(k, mn[1], th);
    const auto qh = rot(to_half_split(q), mn[0], th, RopeLayout::kHalfSplit);
    const auto kh = rot(to_half_split(k), mn[1], th, RopeLayout::kHalfSplit);
    c.add_all(to_half_split(qi), qh, norm2(q));
    c.add(dot(qi, ki), dot(qh, kh), norm2(q) * norm2(k));
  },
      [&](int t, KernelRunner& k, IdentityCheck& c) { kernel_c08(ctx, t, k, c); });
}

// E08: the notes' inverse frequencies 1/base^(2k/d_model), k = 1 … d_model/2, against F10's
// per-head θ_k = base^(−2k/d_head), k = 0 … d_head/2 − 1.
ClaimEvidence eval_e08(const ClaimContext& ctx) {
  const int64_t d_model = 32, d_head = kHead, p = 1000;
  std::vector<mp> notes, correct;
  for (int64_t k = 1; k <= d_model / 2; ++k) notes.push_back(1 / pow(mp(10000), mp(2 * k) / d_model));
  for (int64_t k = 0; k < d_head / 2; ++k) correct.push_back(pow(mp(10000), mp(-2 * k) / d_head));
  // The reference's own frequencies are the correct ones, to 1e-40.
  const std::vector<mp> f10 = ref::rope_inv_freq<mp>(d_head, mp(10000));
  mp worst = 0;
  for (size_t k = 0; k < correct.size(); ++k) worst = std::max(worst, mp(abs(f10[k] - correct[k])));
  const auto x = uniform<mp>(ctx.seed, key("E08", "x", 0), d_head, -1, 1);
  const std::vector<mp> head_notes(notes.begin(), notes.begin() + d_head / 2);
  const auto a = rot(x, p, head_notes), b = rot(x, p, correct);
  const mp gap = relative_difference(a[0], b[0]);
  const bool shown = worst < mp("1e-40") && gap > mp("1e-6") &&
                     static_cast<int64_t>(notes.size()) != d_head / 2;
  Counterexample cx{"d_model = 32, d_head = 8, base 10000, position 1000, x = " + show_vector(x) +
                        "; notes: " + std::to_string(notes.size()) + " frequencies " +
                        show_vector(notes) + ", F10: " + std::to_string(correct.size()) + " " +
                        show_vector(correct),
                    "RoPE(x)_0 with the notes' first d_head/2 frequencies", show(a[0]),
                    "RoPE(x)_0 with theta_k = base^(-2k/d_head)", show(b[0])};
  return counterexample_evidence(shown, cx, 1, ClaimStatus::kErratumShown,
                                 static_cast<double>(gap),
                                 "the notes' list starts at k = 1 (theta != 1) and spans d_model; "
                                 "F10 uses k = 0 ... d_head/2 - 1 per head; rope_inv_freq matches "
                                 "F10 to " + show(worst, 3));
}

}  // namespace

std::vector<Claim> rope_claims() {
  return {
      {"C05", "000 §1.5.4; 002",
       "RoPE: <f(q, m), f(k, n)> depends only on m - n (shift both positions by s: unchanged)",
       ClaimKind::kIdentity, std::string(kAnalysisSource) + "; " + kKernelSource, eval_c05},
      {"C06", "000 §1.5.4", "RoPE is orthogonal (norm-preserving), R(b)R(a) = R(a + b), R(0) = I",
       ClaimKind::kIdentity,
       std::string(kAnalysisSource) + "; " + kKernelSource +
           " (on kernels: the norm and R(0) = I; R(b)R(a) = R(a + b) is reference only)",
       eval_c06},
      {"C07", "000 §1.5.4; 001",
       "RoPE complex form (x_2k + i x_2k+1) e^{ip theta_k} and the block-diagonal matrix product "
       "equal the elementwise cos/sin implementation",
       ClaimKind::kIdentity, kBitwiseSource, eval_c07},
      {"C08", "001 vs 002",
       "interleaved and half-split RoPE give identical scores once the q/k projection rows are "
       "permuted",
       ClaimKind::kIdentity, std::string(kAnalysisSource) + "; " + kKernelSource, eval_c08},
      {"E08", "001 §2-4 code notes",
       "notes: inverse frequencies for k = 1 ... d_model/2; correct: k = 0 ... d_head/2 - 1, per "
       "head",
       ClaimKind::kCounterexample, "n/a: a counterexample in exact arithmetic", eval_e08},
  };
}

}  // namespace lmo::oracle::claims
