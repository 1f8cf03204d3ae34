// What the drift audits share: deterministic bf16 inputs, conversions of a policy's values, the
// accumulation of a policy's outputs against the exact values, and the sweeps. Internal to
// oracle/drift*.cc.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "oracle/drift/drift.h"
#include "reference/ball.h"
#include "reference/numeric.h"

namespace lmo::oracle::drift {

using ref::mp;

// n values uniform in [a, b), generated (oracle/core/inputs.h) as bfloat16 and returned as doubles,
// with magnitudes below 2^-14 set to 0: every format from bf16 up (tf32, f16 for |a|, |b| ≤
// 65504, f32, f64, mp) then holds them exactly, so every policy reads the same inputs.
std::vector<double> bf16_uniform(uint64_t seed, std::string_view name, int64_t n, double a,
                                 double b);
// n integers uniform in [lo, hi).
std::vector<int64_t> uniform_ints(uint64_t seed, std::string_view name, int64_t n, int64_t lo,
                                  int64_t hi);

// The values as T (each rounded once to T; exact for the inputs above).
template <class T>
std::vector<T> as(std::span<const double> v) {
  std::vector<T> out;
  out.reserve(v.size());
  for (double x : v) out.push_back(ref::from_mp<T>(mp(x)));
  return out;
}
template <class T>
std::vector<T> as(const std::vector<double>& v) {
  return as<T>(std::span<const double>(v));
}

// Whether a ball serves as a drift audit's exact value: its radius below 2^-60 of its value.
inline bool tight(const ref::Ball& b) { return b.rad() <= std::fabs(b.hi()) * 0x1p-60; }

// The exact values of a formula through the certified evaluation ([certified]): f on balls
// (reference/ball.h), accepted when no comparison was undecided and every radius is below 2^-60
// of its value (2^-7 of a double's last place: invisible in any drift statistic); otherwise f in
// mp. f is generic: f.template operator()<T>() returns std::vector<T>.
template <class F>
std::vector<mp> exact_values(F&& f) {
  const uint64_t before = ref::ball_undecided();
  const std::vector<ref::Ball> balls = f.template operator()<ref::Ball>();
  bool all_tight = ref::ball_undecided() == before;
  std::vector<mp> out;
  out.reserve(balls.size());
  for (const ref::Ball& b : balls) {
    all_tight = all_tight && tight(b);
    out.push_back(ref::to_mp(b));
  }
  if (all_tight) return out;
  return f.template operator()<mp>();
}

// exact_values for a formula of one argument, decided element by element: f.template
// operator()<T>(x) on balls, and in mp only for the elements whose ball is not tight (a GELU
// far in its tail underflows double's range, where mp does not).
template <class X, class F>
std::vector<mp> exact_each(std::span<const X> xs, F&& f) {
  std::vector<mp> out;
  out.reserve(xs.size());
  for (const X& x : xs) {
    const uint64_t before = ref::ball_undecided();
    const ref::Ball b = f.template operator()<ref::Ball>(x);
    if (ref::ball_undecided() == before && tight(b)) {
      out.push_back(ref::to_mp(b));
    } else {
      out.push_back(f.template operator()<mp>(x));
    }
  }
  return out;
}

// Adds got[i] against exact[i] for every i (same lengths).
template <class T>
void add_all(DriftAccumulator& acc, std::span<const mp> exact, const std::vector<T>& got) {
  for (size_t i = 0; i < exact.size(); ++i) acc.add(exact[i], ref::to_double(got[i]));
}

// Geometric sweep lo, 2·lo, 4·lo, … ≤ hi (powers of two times lo).
std::vector<int64_t> doubling(int64_t lo, int64_t hi);

// Records rows and checks that each (panel, policy) is declared.
class ResultBuilder {
 public:
  explicit ResultBuilder(DriftResult& r) : r_(r) {}
  void policy(std::string name, std::string description);
  void add(const std::string& panel, const std::string& policy, double x,
           const DriftAccumulator& acc);
  // Sorts rows panel-major (panel order as declared), then policy (declared order), then x.
  void finish();

 private:
  DriftResult& r_;
};

// Audit runners (one file each).
DriftResult rope_position(const DriftOptions& o, const DriftProgress& progress);
DriftResult softmax_vocab(const DriftOptions& o, const DriftProgress& progress);
DriftResult norm_width(const DriftOptions& o, const DriftProgress& progress);
DriftResult gelu_bf16(const DriftOptions& o, const DriftProgress& progress);
DriftResult sinusoidal_identity(const DriftOptions& o, const DriftProgress& progress);
DriftResult fp8_activations(const DriftOptions& o, const DriftProgress& progress);
DriftResult attention_length(const DriftOptions& o, const DriftProgress& progress);
DriftResult mla_absorption(const DriftOptions& o, const DriftProgress& progress);
// Their cost estimates (DriftAudit::cost), next to each runner.
double rope_position_cost(const DriftOptions& o);
double softmax_vocab_cost(const DriftOptions& o);
double norm_width_cost(const DriftOptions& o);
double gelu_bf16_cost(const DriftOptions& o);
double sinusoidal_identity_cost(const DriftOptions& o);
double fp8_activations_cost(const DriftOptions& o);
double attention_length_cost(const DriftOptions& o);
double mla_absorption_cost(const DriftOptions& o);

}  // namespace lmo::oracle::drift
