// softmax-vocab: F12 softmax and cross-entropy and F13 z-loss against the vocabulary size. A
// sum of V terms accumulated in a narrow format stagnates once the partial sum's ulp exceeds the
// terms (bf16: after ~2^8 terms of similar size), so low-precision accumulation loses accuracy as
// V grows; without max-subtraction e^{z} overflows f16 at z > 11.09.
#include <string>

#include "oracle/drift/kernels.h"
#include "oracle/drift/support.h"
#include "reference/softmax.h"

namespace lmo::oracle::drift {
namespace {

using ref::bfloat16;
using ref::float16;
using ref::Format;

constexpr double kLambda = 1e-4;  // PaLM's z-loss weight (M08)
// The sweep of vocabulary sizes, shared by the run and its cost.
std::vector<int64_t> vocab_sweep(const DriftOptions& o) {
  return doubling(1024, o.quick ? 8192 : 262144);
}

struct Exact {
  std::vector<mp> p;
  mp ce, zl;
};

struct Accs {
  DriftAccumulator p, ce, zl;
  explicit Accs(Format out) : p(out), ce(Format::f32), zl(Format::f32) {}
};

// One row under the policy (T, Acc): softmax, and the loss terms from one log Z with the
// reference's expressions (cross_entropy: −z_t + log Z; z_loss: CE + λ·(log Z)², every step in T).
template <class T, class Acc>
void row(const std::vector<double>& z, int64_t target, bool subtract_max, const Exact& ex,
         Accs& a) {
  const std::vector<T> zt = as<T>(z);
  const std::span<const T> zs(zt);
  add_all(a.p, ex.p, ref::softmax<T, Acc>(zs, subtract_max));
  const T lse = ref::logsumexp<T, Acc>(zs, subtract_max);
  const T ce = T(-zt[static_cast<size_t>(target)]) + lse;
  const T zl = ce + T(ref::from_mp<T>(mp(kLambda)) * T(lse * lse));
  a.ce.add(ex.ce, ref::to_double(ce));
  a.zl.add(ex.zl, ref::to_double(zl));
}

// A kernel backend's row (drift_kernels.h) in storage s: its softmax, then its cross_entropy
// with λ = 0 and with λ, each loss as the kernel stores it (in s).
void kernel_row(KernelBackend& k, Format s, const std::vector<double>& z, int64_t target,
                const Exact& ex, Accs& a) {
  const int64_t n = static_cast<int64_t>(z.size());
  const ref::Tensor p =
      run_kernel(*k.backend, "softmax", {{"rows", 1}, {"n", n}}, s, {{"z", z, {}}}).at(0);
  for (int64_t i = 0; i < n; ++i) a.p.add_bits(ex.p[static_cast<size_t>(i)], p.bits(i));
  const std::vector<KernelInput> in = {{"z", z, {}}, {"target", {}, {target}}};
  const auto loss = [&](double lambda) {
    return run_kernel(*k.backend, "cross_entropy", {{"rows", 1}, {"vocab", n}, {"z_loss", lambda}},
                      s, in)
        .at(0)
        .get(0);
  };
  a.ce.add(ex.ce, loss(0.0));
  a.zl.add(ex.zl, loss(kLambda));
}

}  // namespace

DriftResult softmax_vocab(const DriftOptions& o, const DriftProgress& progress) {
  DriftResult r;
  r.op = "softmax, cross_entropy, z_loss (F12, F13)";
  const std::vector<int64_t> vocab = vocab_sweep(o);
  const int rows = 1;  // the bf16/f16 policies' exponentials cost ~1 µs each (MPFR)
  r.x_label = "vocabulary";
  r.description =
      "Error of softmax probabilities (in the storage format), and of the cross-entropy and "
      "z-loss (λ = 1e-4; measured in f32, except the kernels' bf16 rows, whose losses are stored "
      "in bf16 as the ops define them) of one row of logits z = scale·u, u uniform in [-1, 1), "
      "against the exact values, for "
      "vocabulary sizes 1K … " +
      std::to_string(vocab.back() / 1024) +
      "K. Sums accumulated in bf16 or f16 stagnate and their error grows with the vocabulary; "
      "f32 sums stay flat. Without max-subtraction f16 overflows at scale 16 (nonfinite).";
  const double scales[] = {1, 16};
  for (const char* op : {"softmax", "cross-entropy", "z-loss"}) {
    for (double sc : scales)
      r.panels.push_back(std::string(op) + ", scale " + std::to_string(int(sc)));
  }
  ResultBuilder b(r);
  struct P {
    std::string name;
    std::string desc;
    Format out;
  };
  std::vector<P> policies = {
      {"f32/f32/f32", "f32 logits, arithmetic and sums", Format::f32},
      {"bf16/f32/f32", "bf16 logits and probabilities, f32 arithmetic and sums", Format::bf16},
      {"bf16/bf16/f32", "bf16 arithmetic (each exp, each quotient), sums in f32", Format::bf16},
      {"bf16/bf16/bf16", "all bf16, sums in bf16", Format::bf16},
      {"f16/f16/f32", "f16 arithmetic, sums in f32", Format::f16},
      {"f16/f16/f16", "all f16, sums in f16", Format::f16},
      {"f32 no max-sub", "f32/f32/f32 computing e^z without subtracting max z", Format::f32},
      {"f16/f16/f32 no max-sub", "f16/f16/f32 computing e^z without subtracting max z",
       Format::f16},
  };
  constexpr size_t kSimulated = 8;
  // Then per kernel backend (drift_kernels.h): f32, then bf16 storage.
  std::vector<KernelBackend> kernels = kernel_backends();
  for (const KernelBackend& k : kernels) {
    policies.push_back({k.label + " f32", k.description + " on f32 storage", Format::f32});
    policies.push_back({k.label + " bf16",
                        k.description + " on bf16 storage (losses stored in bf16)", Format::bf16});
  }
  for (const P& p : policies) b.policy(p.name, p.desc);

  const int64_t total = static_cast<int64_t>(vocab.size()) * 2;
  int64_t done = 0;
  for (int si = 0; si < 2; ++si) {
    const double sc = scales[si];
    const std::string tag = ", scale " + std::to_string(int(sc));
    for (int64_t v : vocab) {
      progress(done++, total, "vocabulary " + std::to_string(v) + tag);
      std::vector<Accs> accs;
      for (const P& p : policies) accs.emplace_back(p.out);
      for (int rw = 0; rw < rows; ++rw) {
        const std::string key = "softmax." + std::to_string(v) + "." + std::to_string(rw);
        std::vector<double> z = bf16_uniform(o.seed, key, v, -1, 1);
        for (double& x : z) x *= sc;  // a power of two: exact
        const int64_t target = uniform_ints(o.seed, key + ".target", 1, 0, v)[0];
        Exact ex;
        ex.p = exact_values([&]<class T>() {
          const std::vector<T> zt = as<T>(z);
          return ref::softmax<T>(std::span<const T>(zt));
        });
        // CE = −log p_target (C10) and log Z = z_target + CE: exact to ~160 bits from the mp
        // softmax, without a second pass of V exponentials.
        ex.ce = -log(ex.p[static_cast<size_t>(target)]);
        const mp lse = mp(z[static_cast<size_t>(target)]) + ex.ce;
        ex.zl = ex.ce + mp(kLambda) * lse * lse;
        row<float, float>(z, target, true, ex, accs[0]);
        // f32 results stored in bf16: the accumulator rounds the probabilities to its format.
        row<float, float>(z, target, true, ex, accs[1]);
        row<bfloat16, float>(z, target, true, ex, accs[2]);
        row<bfloat16, bfloat16>(z, target, true, ex, accs[3]);
        row<float16, float>(z, target, true, ex, accs[4]);
        row<float16, float16>(z, target, true, ex, accs[5]);
        row<float, float>(z, target, false, ex, accs[6]);
        row<float16, float>(z, target, false, ex, accs[7]);
        for (size_t k = 0; k < kernels.size(); ++k) {
          kernel_row(kernels[k], Format::f32, z, target, ex, accs[kSimulated + 2 * k]);
          kernel_row(kernels[k], Format::bf16, z, target, ex, accs[kSimulated + 2 * k + 1]);
        }
      }
      for (size_t i = 0; i < accs.size(); ++i) {
        const double xv = static_cast<double>(v);
        b.add("softmax" + tag, policies[i].name, xv, accs[i].p);
        b.add("cross-entropy" + tag, policies[i].name, xv, accs[i].ce);
        b.add("z-loss" + tag, policies[i].name, xv, accs[i].zl);
      }
    }
  }
  b.finish();
  return r;
}

double softmax_vocab_cost(const DriftOptions& o) {
  // Two scales × one row per vocabulary size × the exact softmax (an exponential, a sum and a
  // quotient per logit).
  double sum = 0;
  for (int64_t v : vocab_sweep(o)) sum += static_cast<double>(v);
  return 2.0 * 3.0 * sum;
}

}  // namespace lmo::oracle::drift
