// sinusoidal-identity: claim C01, PE(p₁)·PE(p₂) = Σ_i cos((p₁ − p₂)·ω_i), evaluated the way the
// claims registry does (oracle/claims/positional.cc: F07's sinusoidal_pe at a position rounded
// once to N, dot product in N, the right side with ω_i = 1/10000^(2i/d) formed in N), here as a
// function of the position. Exactly, both sides are equal; in f32 the left side's angles p·ω
// carry an absolute error ~p·2^-24, so the dot product drifts away from the right side (which
// depends only on the small offset Δ = p₁ − p₂ and stays accurate) as p grows: the position from
// which the f32 identity no longer holds to a given number of bits is where the two curves part.
#include <cmath>
#include <string>

#include "oracle/drift/support.h"
#include "reference/linalg.h"
#include "reference/positional.h"
#include "reference/rope.h"

namespace lmo::oracle::drift {
namespace {

using ref::bfloat16;
using ref::Format;

// Left side: PE(p₁)·PE(p₂), everything in N.
template <class N>
N lhs(int64_t p1, int64_t p2, int64_t d) {
  const std::vector<N> a = ref::sinusoidal_pe(ref::rope_position<N>(p1), d);
  const std::vector<N> b = ref::sinusoidal_pe(ref::rope_position<N>(p2), d);
  return ref::dot<N>(std::span<const N>(a), std::span<const N>(b));
}

// Right side: Σ_i cos(Δ / 10000^(2i/d)), everything in N (as eval_c01 forms it).
template <class N>
N rhs(int64_t delta, int64_t d) {
  using std::cos;
  using std::pow;
  const N diff = ref::rope_position<N>(delta);
  const N base(10000);
  N s(0);
  for (int64_t i = 0; i < d / 2; ++i) s = s + N(cos(N(diff / N(pow(base, N(N(2 * i) / N(d)))))));
  return s;
}

// Left side from a table of PE rows computed in f64 and stored in f32 (the careful route), dot
// product in f32.
float lhs_f64_table(int64_t p1, int64_t p2, int64_t d) {
  const auto row = [&](int64_t p) {
    const std::vector<double> pe = ref::sinusoidal_pe(static_cast<double>(p), d);
    return std::vector<float>(pe.begin(), pe.end());
  };
  const std::vector<float> a = row(p1), b = row(p2);
  return ref::dot<float>(std::span<const float>(a), std::span<const float>(b));
}

// The sweep, shared by the run and its cost: width d, positions per octave [2^k, 2^(k+1)),
// k = 0 … kLastOctave.
int64_t model_width(const DriftOptions& o) { return o.quick ? 16 : 64; }
int64_t positions_per_octave(const DriftOptions& o) { return o.quick ? 2 : 16; }
constexpr int kLastOctave = 19;

}  // namespace

DriftResult sinusoidal_identity(const DriftOptions& o, const DriftProgress& progress) {
  DriftResult r;
  r.op = "sinusoidal_pe (F07), claim C01";
  const int64_t d = model_width(o);
  const int64_t per_octave = positions_per_octave(o);
  const int last_octave = kLastOctave;
  r.x_label = "position";
  r.description =
      "Both sides of C01, PE(p)·PE(p − Δ) and Σ_i cos(Δ·ω_i) (d = " + std::to_string(d) +
      ", Δ uniform in [0, 64)), each against the exact value of the identity, at " +
      std::to_string(per_octave) +
      " positions p per octave [2^k, 2^(k+1)); x = 2^k. The f32 right side depends on Δ only "
      "and stays accurate; the f32 left side loses bits as p grows: the residual of the "
      "identity in f32 is the gap between the two curves.";
  r.panels = {"C01, d = " + std::to_string(d)};
  const std::string& panel = r.panels[0];
  ResultBuilder b(r);
  b.policy("PE·PE f32", "left side: PE rows and dot product in f32 (angles p·ω in f32)");
  b.policy("Σcos f32", "right side: Σ cos(Δ·ω_i) in f32");
  b.policy("PE·PE f64 table", "left side: PE rows computed in f64, stored in f32, dot in f32");
  b.policy("PE·PE f64", "left side entirely in f64 (measured in f64)");
  b.policy("PE·PE bf16", "left side entirely in bf16 (positions held in bf16)");

  int first_below_12 = -1, first_below_4 = -1;
  for (int oct = 0; oct <= last_octave; ++oct) {
    progress(oct, last_octave + 1,
             "positions [2^" + std::to_string(oct) + ", 2^" + std::to_string(oct + 1) + ")");
    const int64_t lo = int64_t{1} << oct;
    const std::string key = "sinusoidal." + std::to_string(oct);
    const std::vector<int64_t> ps = uniform_ints(o.seed, key + ".p", per_octave, lo, 2 * lo);
    const std::vector<int64_t> ds = uniform_ints(o.seed, key + ".delta", per_octave, 0, 64);
    DriftAccumulator l32(Format::f32), r32(Format::f32), ltab(Format::f32), l64(Format::f64),
        lbf(Format::bf16);
    for (int64_t j = 0; j < per_octave; ++j) {
      const int64_t p1 = ps[static_cast<size_t>(j)];
      const int64_t p2 = std::max<int64_t>(0, p1 - ds[static_cast<size_t>(j)]);
      const mp exact = rhs<mp>(p1 - p2, d);
      l32.add(exact, lhs<float>(p1, p2, d));
      r32.add(exact, rhs<float>(p1 - p2, d));
      ltab.add(exact, lhs_f64_table(p1, p2, d));
      l64.add(exact, lhs<double>(p1, p2, d));
      lbf.add(exact, lhs<bfloat16>(p1, p2, d).value());
    }
    const double xv = static_cast<double>(lo);
    b.add(panel, "PE·PE f32", xv, l32);
    b.add(panel, "Σcos f32", xv, r32);
    b.add(panel, "PE·PE f64 table", xv, ltab);
    b.add(panel, "PE·PE f64", xv, l64);
    b.add(panel, "PE·PE bf16", xv, lbf);
    const double bits = l32.result().sig_bits;
    if (first_below_12 < 0 && bits < 12) first_below_12 = oct;
    if (first_below_4 < 0 && bits < 4) first_below_4 = oct;
  }
  const auto where = [](int oct, const char* what) {
    return oct < 0
               ? std::string("f32 left side keeps ") + what + " up to position 2^20"
               : std::string("f32 left side keeps fewer than ") + what + " from positions in [2^" +
                     std::to_string(oct) + ", 2^" + std::to_string(oct + 1) + ") on";
  };
  r.notes.push_back(where(first_below_12, "12 significant bits"));
  r.notes.push_back(where(first_below_4, "4 significant bits"));
  b.finish();
  return r;
}

double sinusoidal_identity_cost(const DriftOptions& o) {
  // Every octave's positions × the exact right side Σ cos(Δ·ω_i) over d/2 frequencies (a power,
  // a quotient, a cosine and a sum each).
  return (kLastOctave + 1) * static_cast<double>(positions_per_octave(o)) * 4.0 *
         static_cast<double>(model_width(o) / 2);
}

}  // namespace lmo::oracle::drift
