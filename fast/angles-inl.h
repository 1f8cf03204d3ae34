// Per-target cos and sin of large angles p·θ for the position kernels (fast/rope.cc,
// fast/sinusoidal_pe.cc), in f64 lanes. The angle is given as an integer position p (exact in
// a double: |p| ≤ 2^53) and a frequency in turns f = hi + lo (kernels/api/turns.h):
//   1. p·f = P + e exactly up to p·lo's rounding: P = p·hi rounded, e = (p·hi − P) (TwoProdLo)
//      + p·lo;
//   2. whole turns dropped: r = (P − round(P)) + e, |r| ≤ ½ (+ e); P − round(P) is exact
//      (Sterbenz), so r's only errors are its one rounding and e's;
//   3. the quadrant: q = round(4r) ∈ {−2, …, 2}, z = r − q/4 exact (Sterbenz again), |z| ≤ 1/8
//      turn; x = 2π·z, |x| ≤ π/4;
//   4. sin x and cos x by fdlibm's kernel polynomials (__kernel_sin / __kernel_cos, Sun
//      Microsystems 1993: minimax on [−π/4, π/4], error below 2^-58), then the quadrant's swap
//      and signs.
// Highway's own Sin/Cos are valid only on [−39000, 39000] rad, far below the angles of long
// context (p·θ_0 = p up to 2^40).
//
// Included once per Highway target (the toggle guard below) from a kernel .cc after
// foreach_target.h.
#if defined(LMO_FAST_ANGLES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LMO_FAST_ANGLES_INL_H_
#undef LMO_FAST_ANGLES_INL_H_
#else
#define LMO_FAST_ANGLES_INL_H_
#endif

#include "fast/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// cos and sin of 2π·p·(hi + lo) in f64 lanes (see above).
template <class DD, class V = hn::Vec<DD>>
HWY_INLINE void CosSinOfTurns(DD dd, V p, V hi, V lo, V& c, V& s) {
  const V prod = hn::Mul(p, hi);
  const V e = hn::MulAdd(p, lo, TwoProdLo(dd, p, hi, prod));
  const V r = hn::Add(hn::Sub(prod, hn::Round(prod)), e);
  const V q = hn::Round(hn::Mul(r, hn::Set(dd, 4.0)));
  const V z = hn::Sub(r, hn::Mul(q, hn::Set(dd, 0.25)));
  // 2π = 6.283185307179586 + 2.4492935982947064e-16 (the double nearest 2π and the remainder).
  const V x = hn::MulAdd(z, hn::Set(dd, 6.283185307179586),
                         hn::Mul(z, hn::Set(dd, 2.4492935982947064e-16)));
  const V x2 = hn::Mul(x, x);
  V ps = hn::Set(dd, 1.58969099521155010221e-10);
  ps = hn::MulAdd(ps, x2, hn::Set(dd, -2.50507602534068634195e-08));
  ps = hn::MulAdd(ps, x2, hn::Set(dd, 2.75573137070700676789e-06));
  ps = hn::MulAdd(ps, x2, hn::Set(dd, -1.98412698298579493134e-04));
  ps = hn::MulAdd(ps, x2, hn::Set(dd, 8.33333333332248946124e-03));
  ps = hn::MulAdd(ps, x2, hn::Set(dd, -1.66666666666666324348e-01));
  const V sin_x = hn::MulAdd(hn::Mul(x, x2), ps, x);
  V pc = hn::Set(dd, -1.13596475577881948265e-11);
  pc = hn::MulAdd(pc, x2, hn::Set(dd, 2.08757232129817482790e-09));
  pc = hn::MulAdd(pc, x2, hn::Set(dd, -2.75573143513906633035e-07));
  pc = hn::MulAdd(pc, x2, hn::Set(dd, 2.48015872894767294178e-05));
  pc = hn::MulAdd(pc, x2, hn::Set(dd, -1.38888888888741095749e-03));
  pc = hn::MulAdd(pc, x2, hn::Set(dd, 4.16666666666666019037e-02));
  // cos x = 1 − x²/2 + x⁴·P(x²); 1 − x²/2 ≥ 0.69 on the interval, so the sum loses nothing.
  const V cos_x =
      hn::MulAdd(hn::Mul(x2, x2), pc, hn::NegMulAdd(hn::Set(dd, 0.5), x2, hn::Set(dd, 1.0)));
  // angle = x + q·π/2: q = ±1 swaps sin and cos; sin is negated for q ∈ {−1, ±2}, cos for
  // q ∈ {1, ±2}.
  const V aq = hn::Abs(q);
  const auto odd = hn::Eq(aq, hn::Set(dd, 1.0));
  const auto half_turn = hn::Eq(aq, hn::Set(dd, 2.0));
  const V sv = hn::IfThenElse(odd, cos_x, sin_x);
  const V cv = hn::IfThenElse(odd, sin_x, cos_x);
  s = hn::IfThenElse(hn::Or(half_turn, hn::Eq(q, hn::Set(dd, -1.0))), hn::Neg(sv), sv);
  c = hn::IfThenElse(hn::Or(half_turn, hn::Eq(q, hn::Set(dd, 1.0))), hn::Neg(cv), cv);
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#endif  // LMO_FAST_ANGLES_INL_H_
