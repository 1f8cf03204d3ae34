// What the claim evaluators (oracle/claims_*.cc) share: the number type of each backend, the
// seeded inputs, the identity check with its two kinds of float bound, and counterexample
// printing. Internal to the registry.
#pragma once

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "oracle/claims/claims.h"
#include "oracle/claims/kernel.h"
#include "oracle/claims/tracked.h"
#include "oracle/core/inputs.h"
#include "reference/linalg.h"
#include "reference/numeric.h"

namespace lmo::oracle::claims {

using ref::Mat;
using ref::mp;

// How a float format is held to an identity.
enum class FloatBound {
  kBitwise,   // both sides perform the same operations in the same order: equal values
  kAnalysis,  // |A − B| ≤ bound(A) + bound(B), running error analysis (claims_tracked.h)
};

inline const char* kBitwiseSource =
    "0: both sides perform the same operations in the same order (bitwise equal in every format)";
inline const char* kAnalysisSource =
    "running error analysis (claims_tracked.h): |A - B| <= bound(A) + bound(B), each derived per "
    "operation from the format's unit roundoff (u per rounding, 8 ulp per libm call)";

// The number type a reference backend evaluates on: mp for `ref`, Tracked<T> for `ref-<format>`.
// Kernel backends (b.kernel) run ops instead: run_identity's kernel trial.
template <class Fn>
void for_backend(const ClaimBackend& b, Fn&& fn) {
  if (!b.format) return fn.template operator()<mp>();
  switch (*b.format) {
    case ref::Format::f64:
      return fn.template operator()<Tracked<double>>();
    case ref::Format::f32:
      return fn.template operator()<Tracked<float>>();
    case ref::Format::tf32:
      return fn.template operator()<Tracked<ref::tf32>>();
    case ref::Format::bf16:
      return fn.template operator()<Tracked<ref::bfloat16>>();
    case ref::Format::f16:
      return fn.template operator()<Tracked<ref::float16>>();
    case ref::Format::e4m3:
      return fn.template operator()<Tracked<ref::fp8_e4m3>>();
    case ref::Format::e5m2:
      return fn.template operator()<Tracked<ref::fp8_e5m2>>();
  }
}

template <class N>
inline constexpr bool is_mp_v = std::is_same_v<N, mp>;

// The storage format a backend's inputs are drawn in (f64 for mp).
template <class N>
ref::Format input_format() {
  if constexpr (is_mp_v<N>) {
    return ref::Format::f64;
  } else {
    using T = typename N::value_type;
    if constexpr (std::is_same_v<T, double>) return ref::Format::f64;
    if constexpr (std::is_same_v<T, float>) return ref::Format::f32;
    if constexpr (ref::is_sim_v<T>) return T::format;
  }
}

// The largest finite value of N's format.
template <class N>
double max_finite() {
  return ref::decode<double>(input_format<N>(), ref::max_finite_bits(input_format<N>()));
}

// An exact input of N: x is a value of N's format.
template <class N>
N exact(double x) {
  if constexpr (is_mp_v<N>) {
    return mp(x);
  } else {
    return N::exact(ref::convert<typename N::value_type>(x));
  }
}

// x rounded once to N's format and then taken as an exact input (a table a kernel loads, for
// claims that hold for any value of it).
template <class N>
N exact_input(const mp& x) {
  if constexpr (is_mp_v<N>) {
    return x;
  } else {
    return N::exact(ref::from_mp<typename N::value_type>(x));
  }
}

// An exact mp value rounded to N (a constant: its rounding error is tracked).
template <class N>
N rounded(const mp& x) {
  return ref::from_mp<N>(x);
}

// n uniform values in [a, b) drawn in N's storage format from the stream (seed, name).
template <class N>
std::vector<N> uniform(uint64_t seed, const std::string& name, int64_t n, double a, double b) {
  const ref::Tensor t = oracle::uniform(seed, name, ref::format_dtype(input_format<N>()), {n}, a, b);
  std::vector<N> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out.push_back(exact<N>(t.get(i)));
  return out;
}

template <class N>
Mat<N> uniform_mat(uint64_t seed, const std::string& name, int64_t rows, int64_t cols, double a,
                   double b) {
  return Mat<N>(rows, cols, uniform<N>(seed, name, rows * cols, a, b));
}

// Integers in [lo, hi) from the stream (seed, name).
std::vector<int64_t> uniform_ints(uint64_t seed, const std::string& name, int64_t n, int64_t lo,
                                  int64_t hi);

// "C05/q/3": the stream name of one input of one trial.
inline std::string key(const std::string& id, const std::string& what, int trial) {
  return id + "/" + what + "/" + std::to_string(trial);
}

template <class N>
mp value_of(const N& x) {
  if constexpr (is_mp_v<N>) {
    return x;
  } else {
    return ref::to_mp(x.value());
  }
}

template <class N>
double error_of(const N& x) {
  if constexpr (is_mp_v<N>) {
    return 0;
  } else {
    return x.error();
  }
}

// A kernel's value: its allowance is its error bound (claims_kernel.h).
inline mp value_of(const KernelValue& x) { return x.value; }
inline double error_of(const KernelValue& x) { return x.allowance; }

// Accumulates the pairs (A, B) of one backend's trials and judges them.
class IdentityCheck {
 public:
  IdentityCheck(std::string backend, bool is_mp, FloatBound mode)
      : is_mp_(is_mp), mode_(mode) {
    ev_.backend = std::move(backend);
  }

  // One pair A, B equal in exact arithmetic; scale normalizes the residual (a magnitude the
  // claim names: Σ|terms|, a norm, 1 for probabilities).
  template <class N>
  void add(const N& a, const N& b, const mp& scale) {
    add_values(value_of(a), value_of(b), error_of(a) + error_of(b), scale);
  }
  template <class N>
  void add_all(const std::vector<N>& a, const std::vector<N>& b, const mp& scale) {
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) add(a[i], b[i], scale);
    if (a.size() != b.size()) size_mismatch_ = true;
  }
  // A computed value against the exact value it must approximate.
  template <class N>
  void add_exact(const N& a, const mp& exact_value, const mp& scale) {
    add_values(value_of(a), exact_value, error_of(a), scale);
  }
  // A bound claim: value ≤ limit (both exact), with the value's tracked error allowed on top.
  void add_le(const mp& value, double value_error, const mp& limit, const mp& scale);
  // A trial that this format cannot evaluate (overflow of an input, a constant out of range).
  void skip(const std::string& why) {
    skip_this_ = true;
    if (skip_note_.empty()) skip_note_ = why;
  }
  void end_trial() {
    if (skip_this_) {
      ++skipped_;
    } else {
      ++ev_.trials;
    }
    skip_this_ = false;
  }
  BackendEvidence result() const;

 private:
  void add_values(const mp& a, const mp& b, double err, const mp& scale);

  bool is_mp_;
  FloatBound mode_;
  BackendEvidence ev_;
  int skipped_ = 0;
  bool skip_this_ = false;
  bool size_mismatch_ = false;
  std::string skip_note_;
};

// A claim not run on kernel backends, and why (a kernel backend gets an n/a row saying so).
struct ReferenceOnly {
  std::string why;
};

// The evidence of one kernel backend: `kernel_trial(t, runner, check)` for t < trials, each
// trial running the claim's computations as ops on the backend (claims_kernel.h). A NoKernel
// from the runner makes the row not applicable, naming the op the backend lacks.
template <class KernelTrial>
BackendEvidence run_kernel_trials(const ClaimBackend& b, int trials, KernelTrial&& kernel_trial) {
  KernelRunner runner(*b.kernel);
  IdentityCheck check(b.name, false, FloatBound::kAnalysis);
  try {
    for (int t = 0; t < trials; ++t) {
      kernel_trial(t, runner, check);
      check.end_trial();
    }
  } catch (const NoKernel& e) {
    BackendEvidence na;
    na.backend = b.name;
    na.applicable = false;
    na.note = "n/a: " + std::string(e.what()) + " (the claim needs it)";
    return na;
  }
  BackendEvidence ev = check.result();
  const std::string ran = "kernels run: " + runner.ops_run() + " (f32 storage)";
  ev.note = ev.note.empty() ? ran : ran + "; " + ev.note;
  return ev;
}

// Runs `trial.template operator()<N>(t, check)` for t < trials on every reference backend of ctx
// and `kernel_trial` on every kernel backend, and returns the evidence, status kHolds when every
// backend is ok, kFails otherwise.
template <class Trial, class KernelTrial>
ClaimEvidence run_identity(const ClaimContext& ctx, int trials, FloatBound mode, Trial&& trial,
                           KernelTrial&& kernel_trial) {
  ClaimEvidence ev;
  ev.trials = trials;
  bool all_ok = true;
  for (const ClaimBackend& b : ctx.backends) {
    if (b.kernel) {
      if constexpr (std::is_same_v<std::decay_t<KernelTrial>, ReferenceOnly>) {
        BackendEvidence na;
        na.backend = b.name;
        na.applicable = false;
        na.note = "n/a: reference only: " + kernel_trial.why;
        ev.backends.push_back(na);
      } else {
        ev.backends.push_back(run_kernel_trials(b, trials, kernel_trial));
      }
    } else {
      for_backend(b, [&]<class N>() {
        IdentityCheck check(b.name, is_mp_v<N>, mode);
        for (int t = 0; t < trials; ++t) {
          trial.template operator()<N>(t, check);
          check.end_trial();
        }
        ev.backends.push_back(check.result());
      });
    }
    all_ok = all_ok && ev.backends.back().ok;
  }
  ev.status = all_ok ? ClaimStatus::kHolds : ClaimStatus::kFails;
  return ev;
}

// Printing for counterexamples: enough digits to tell the values apart.
std::string show(const mp& x, int digits = 20);
std::string show_vector(const std::vector<mp>& v, size_t max_items = 4);

template <class T>
std::vector<mp> widen(const std::vector<T>& v) {
  std::vector<mp> out;
  for (const T& x : v) out.push_back(ref::to_mp(x));
  return out;
}

// |a − b| / max(|a|, |b|, tiny): relative difference for counterexample searches.
mp relative_difference(const mp& a, const mp& b);

// Σ|a_i b_i| in mp: the magnitude of a dot product.
template <class N>
mp abs_dot(const std::vector<N>& a, const std::vector<N>& b) {
  using std::abs;
  mp s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += abs(value_of(a[i]) * value_of(b[i]));
  return s;
}

template <class N>
mp max_abs(const std::vector<N>& v) {
  using std::abs;
  mp m = 0;
  for (const N& x : v) m = std::max(m, mp(abs(value_of(x))));
  return m;
}

// Whether every value is finite (an overflow in a narrow format makes a trial inapplicable).
template <class N>
bool all_finite(const std::vector<N>& v) {
  using std::isfinite;
  for (const N& x : v) {
    if (!isfinite(x)) return false;
  }
  return true;
}

// Families (one file each); claims.cc concatenates them.
std::vector<Claim> positional_claims();  // C01–C04
std::vector<Claim> rope_claims();        // C05–C08, E08
std::vector<Claim> norm_claims();        // C09, E01
std::vector<Claim> softmax_claims();     // C10–C12, E02
std::vector<Claim> attention_claims();   // C13–C17, E03
std::vector<Claim> count_claims();       // C18, C19, C23, E06, E07
std::vector<Claim> block_claims();       // C20, C27
std::vector<Claim> activation_claims();  // C26
std::vector<Claim> mla_claims();         // C21, C22, E05
std::vector<Claim> moe_claims();         // C24, C25, E04

}  // namespace lmo::oracle::claims

namespace lmo::oracle::claims {

// Positions a backend's trials draw from [0, max_position): 2^20 in mp (the catalog's long
// context), and no more than a quarter of the largest finite value in a float format (so p + s
// stays finite; bf16 and f16 still round such positions, and the tracked bound accounts for it).
template <class N>
int64_t max_position() {
  constexpr int64_t kLong = int64_t{1} << 20;
  if constexpr (is_mp_v<N>) {
    return kLong;
  } else {
    return static_cast<int64_t>(std::min(static_cast<double>(kLong), max_finite<N>() / 4));
  }
}

// Evidence of a claim decided by a counterexample in exact arithmetic (mp): `found` says whether
// the evaluator found one; `status_if_found` is kHolds for claims that a property fails (C03,
// C04, C22) and kErratumShown for errata. relative_gap is |first − second| / max(|·|).
ClaimEvidence counterexample_evidence(bool found, Counterexample cx, int trials,
                                      ClaimStatus status_if_found, double relative_gap,
                                      std::string summary);

}  // namespace lmo::oracle::claims
