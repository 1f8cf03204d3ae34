// rope-position: F10 RoPE error against position, the long-context failure modes found in
// widely used frameworks: angles p·θ_k formed in f32 (an f32 angle near 10^6 carries an absolute
// error of ~2^-5 rad), inverse frequencies held in bf16 (a model cast to bf16 casts its
// inv_freq buffer too), cos/sin tables stored in bf16/f16, positions held in bf16 (8 significant
// bits: position 1000001 becomes 999424).
#include <cmath>
#include <string>

#include "oracle/drift/support.h"
#include "reference/rope.h"

namespace lmo::oracle::drift {
namespace {

using ref::bfloat16;
using ref::float16;
using ref::RopeLayout;

constexpr RopeLayout kLayout = RopeLayout::kHalfSplit;
// The sweep, shared by the run and its cost: head width d, positions drawn per octave, octaves
// [2^k, 2^(k+1)) for k = 0 … kLastOctave (positions up to 2^20 − 1).
int64_t head_width(const DriftOptions& o) { return o.quick ? 64 : 128; }
int64_t positions_per_octave(const DriftOptions& o) { return o.quick ? 2 : 8; }
constexpr int kLastOctave = 19;

// cos and sin of p·θ_k with the angle and both functions in double, then rounded to T (the
// table a careful framework precomputes in f64).
template <class T>
void f64_table(int64_t p, std::span<const double> inv, std::vector<float>& c,
               std::vector<float>& s) {
  c.resize(inv.size());
  s.resize(inv.size());
  for (size_t k = 0; k < inv.size(); ++k) {
    const double angle = static_cast<double>(p) * inv[k];
    c[k] = static_cast<float>(ref::to_double(ref::from_mp<T>(mp(std::cos(angle)))));
    s[k] = static_cast<float>(ref::to_double(ref::from_mp<T>(mp(std::sin(angle)))));
  }
}

}  // namespace

DriftResult rope_position(const DriftOptions& o, const DriftProgress& progress) {
  DriftResult r;
  r.op = "rope (F10, half-split layout)";
  const int64_t d = head_width(o);
  const int64_t per_octave = positions_per_octave(o);
  const int last_octave = kLastOctave;
  r.x_label = "position";
  r.description =
      "Error of one rotated head (d = " + std::to_string(d) + ", x uniform in [-1, 1)) against " +
      "exact RoPE, at " + std::to_string(per_octave) +
      " positions drawn in each octave [2^k, 2^(k+1)); x = 2^k. Policies whose angle p·θ is " +
      "formed in f32 (or whose position is held in bf16) lose accuracy as the position grows; " +
      "tables from f64 angles stay at their storage format's rounding error at every position.";
  r.panels = {"base 1e4", "base 5e5"};
  ResultBuilder b(r);
  b.policy("f32 angle", "f32/f32/f32: inv_freq, position, angle p·θ, cos/sin and rotation in f32");
  b.policy("f64 angle", "f32/f32/f32 with cos/sin of an f64 angle, table stored in f32");
  b.policy("bf16 inv_freq", "inv_freq computed in f32, held in bf16; angle and rotation in f32");
  b.policy("bf16 table", "cos/sin of an f64 angle stored in bf16; rotation in f32, output f32");
  b.policy("f16 table", "cos/sin of an f64 angle stored in f16; rotation in f32, output f32");
  b.policy("bf16 position", "position held in bf16; angle, cos/sin and rotation in f32");
  b.policy("bf16/bf16/bf16", "everything in bf16 (angle, cos/sin, rotation), output bf16");
  r.notes.push_back("fast policy: no fast RoPE kernel exists (fast/ has none)");

  const std::vector<double> x = bf16_uniform(o.seed, "rope.x", d, -1, 1);
  const std::vector<mp> x_mp = as<mp>(x);
  const std::vector<ref::Ball> x_ball = as<ref::Ball>(x);
  const std::vector<float> x_f = as<float>(x);
  const std::vector<bfloat16> x_b = as<bfloat16>(x);
  const double bases[] = {1e4, 5e5};
  const int64_t total = 2 * (last_octave + 1);
  int64_t done = 0;
  for (int bi = 0; bi < 2; ++bi) {
    const std::string& panel = r.panels[static_cast<size_t>(bi)];
    const std::vector<mp> inv_mp = ref::rope_inv_freq<mp>(d, mp(bases[bi]));
    const std::vector<ref::Ball> inv_ball = ref::rope_inv_freq<ref::Ball>(d, ref::Ball(bases[bi]));
    const std::vector<double> inv_d = ref::rope_inv_freq<double>(d, bases[bi]);
    const std::vector<float> inv_f = ref::rope_inv_freq<float>(d, static_cast<float>(bases[bi]));
    std::vector<float> inv_fb(inv_f.size());
    for (size_t k = 0; k < inv_f.size(); ++k) {
      inv_fb[k] = static_cast<float>(bfloat16(inv_f[k]).value());
    }
    const std::vector<bfloat16> inv_b = ref::rope_inv_freq<bfloat16>(d, bfloat16(bases[bi]));
    for (int oct = 0; oct <= last_octave; ++oct) {
      progress(
          done++, total,
          panel + ", positions [2^" + std::to_string(oct) + ", 2^" + std::to_string(oct + 1) + ")");
      const int64_t lo = int64_t{1} << oct;
      const std::vector<int64_t> positions =
          uniform_ints(o.seed, "rope.p." + std::to_string(oct), per_octave, lo, 2 * lo);
      DriftAccumulator a_f32(ref::Format::f32), a_f64(ref::Format::f32), a_invb(ref::Format::f32),
          a_tb(ref::Format::f32), a_th(ref::Format::f32), a_pos(ref::Format::f32),
          a_bf(ref::Format::bf16);
      for (int64_t p : positions) {
        const std::vector<mp> exact = exact_values([&]<class T>() {
          if constexpr (std::is_same_v<T, mp>) {
            return ref::rope<T>(x_mp, T(p), inv_mp, kLayout);
          } else {
            return ref::rope<T>(x_ball, T(p), inv_ball, kLayout);
          }
        });
        const float pf = ref::rope_position<float>(p);
        add_all(a_f32, exact, ref::rope<float>(x_f, pf, inv_f, kLayout));
        add_all(a_invb, exact, ref::rope<float>(x_f, pf, inv_fb, kLayout));
        const float pb = static_cast<float>(ref::rope_position<bfloat16>(p).value());
        add_all(a_pos, exact, ref::rope<float>(x_f, pb, inv_f, kLayout));
        std::vector<float> c, s;
        f64_table<float>(p, inv_d, c, s);
        add_all(a_f64, exact, ref::rope_from_table<float>(x_f, c, s, kLayout));
        f64_table<bfloat16>(p, inv_d, c, s);
        add_all(a_tb, exact, ref::rope_from_table<float>(x_f, c, s, kLayout));
        f64_table<float16>(p, inv_d, c, s);
        add_all(a_th, exact, ref::rope_from_table<float>(x_f, c, s, kLayout));
        add_all(a_bf, exact,
                ref::rope<bfloat16>(x_b, ref::rope_position<bfloat16>(p), inv_b, kLayout));
      }
      const double xv = static_cast<double>(lo);
      b.add(panel, "f32 angle", xv, a_f32);
      b.add(panel, "f64 angle", xv, a_f64);
      b.add(panel, "bf16 inv_freq", xv, a_invb);
      b.add(panel, "bf16 table", xv, a_tb);
      b.add(panel, "f16 table", xv, a_th);
      b.add(panel, "bf16 position", xv, a_pos);
      b.add(panel, "bf16/bf16/bf16", xv, a_bf);
    }
  }
  b.finish();
  return r;
}

double rope_position_cost(const DriftOptions& o) {
  // Two bases × every octave's positions × one exact rotation of d elements (an angle, its cos
  // and sin, two products and a sum per element: ~6 operations).
  return 2.0 * (kLastOctave + 1) * static_cast<double>(positions_per_octave(o)) * 6.0 *
         static_cast<double>(head_width(o));
}

}  // namespace lmo::oracle::drift
