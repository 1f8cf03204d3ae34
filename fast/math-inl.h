// Per-target f32 elementary functions of the fast kernels, with the special values the
// reference gives (NaN propagates; exp(+inf) = inf; exp(-inf) = 0) and the accuracy the
// activation policies need. Highway 1.0.3's contrib Exp is used for the core exponential (its
// documented error: 1 ulp; here the argument checks it lacks are added); tanh, sigmoid and erfc
// are written here because Highway's tanh (4 ulp) is too coarse and it has no erf/erfc.
//
// Error analysis (u = 2^-24, errors in ulps of the result):
//  - TanhF: |t| < 0.625: t + t³·P(t²), P a degree-5 Chebyshev fit of (tanh t − t)/t³ (fit error
//    1.6e-9, i.e. < 0.01 ulp after the factor t² ≤ 0.39); the sum rounds once: ≤ 0.6 ulp.
//    |t| ≥ 0.625: e = exp(−2|t|) ≤ 0.29 (1 ulp), (1 − e)/(1 + e): the two sums carry ≤ 0.5 +
//    0.4 ulp each, the quotient 0.5: ≤ 2.2 ulp.
//  - SigmoidF: e = exp(−|x|) (1 ulp; its argument is exact), 1 + e (0.5), one division (0.5), for
//    x < 0 the numerator e (1): ≤ 2.5 ulp.
//  - Erfc (N. Juffa's erfcf after Shepherd & Laframboise, Math. Comp. 36 (1981)):
//    erfc(a) = r(a)·exp(−a²), r(a) = (1 + p(q))/(1 + 2a), q = (a − 2)/(a + 2), p a degree-9
//    polynomial; Juffa measured 2.65 ulp with a correctly rounded exp, and our replay with
//    mpmath measured 2.79 ulp on [−4, 10]. exp(−a²) is evaluated as exp(−s)·(1 + t), s = a²
//    rounded and t = s − a² exact (an FMA residual, or Dekker's product where the target has no
//    FMA): without t the rounding of s alone would cost a²/2 ulp (25 ulp at a = 7). With
//    Highway's 1-ulp exp the bound becomes ≈ 3.3 ulp. The argument a = |x|/√2 of GELU carries
//    its low part too (a = a_hi + a_lo), folded into t as −2·a_hi·a_lo: erfc's condition number
//    is ≈ 2a², so a rounded a would cost up to a² ulp.
#if defined(LMO_FAST_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LMO_FAST_MATH_INL_H_
#undef LMO_FAST_MATH_INL_H_
#else
#define LMO_FAST_MATH_INL_H_
#endif

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D>
HWY_INLINE hn::Vec<D> InfF(D d) {
  return hn::BitCast(d, hn::Set(hn::RebindToUnsigned<D>(), 0x7F800000u));
}

// e^x: Highway's Exp (1 ulp on [−FLT_MAX, 104]) plus NaN → NaN and overflow → +inf (Highway
// returns 0 for NaN and garbage beyond 104). e^x for x ≥ 88.7228394 is above FLT_MAX.
template <class D, class V>
HWY_INLINE V ExpF(D d, V x) {
  V y = hn::Exp(d, x);
  y = hn::IfThenElse(hn::Gt(x, hn::Set(d, 88.75f)), InfF(d), y);
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

// 2^64·e^x for x ≤ 0, finite or −inf (no NaN), for the reductions that only need e^x
// relative to a sum (softmax, log-sum-exp, cross-entropy): the kernels form e^{x}·2^64, whose
// normal range reaches x = −131, so that every term whose quotient by the sum (≥ 2^64) is not
// 0 in f32 is a normal number computed to full relative accuracy (a subnormal e^x would carry
// an absolute error instead) and a single exponent construction suffices. x is clamped to
// −128 (e^x·2^64 ≈ 5e-37 there: the quotient by the sum is < 2^-150 and the sum does not move).
//
// x = k·ln 2 + r, k = round(x·log2 e) by the 1.5·2^23 trick (its significand's low bits hold k),
// |r| ≤ ln2/2 (plus 2^-22 where MulAdd is not fused); r = x − k·kLn2Hi is exact (kLn2Hi has 9
// significant bits, |k| < 2^8: the product is exact, and Sterbenz's lemma makes the difference
// exact), then − k·kLn2Lo rounds once (≤ ½ ulp of r: ≤ 0.18 ulp of e^r). e^r ≈ 1 + r + r²·q(r),
// q a degree-4 minimax fit of (e^r − 1 − r)/r² on |r| ≤ 0.354 (relative error 3.5e-9 = 0.06
// ulp); r + r²·q rounds once (≤ ¼ ulp of a result below 1) and the last addition once (½ ulp).
// Bound ≈ 1 ulp. Measured over every f32 in [−128, 0] against a double exp, on the code of a
// target without FMA (the larger error): at most 1.006 ulp, where Highway's Exp measured 1.032
// on the same inputs; tests/fast_exp_test.cc checks every target. The scaling by 2^(k + 64) is
// exact (k ≥ −185 for x ≥ −128: the exponent stays normal).
template <class D, class V>
HWY_INLINE V ExpNonPosTimes2Pow64F(D d, V x) {
  const hn::RebindToSigned<D> di;
  const V magic = hn::Set(d, 12582912.0f);  // 1.5·2^23
  x = hn::Max(x, hn::Set(d, -128.0f));
  const V t = hn::MulAdd(x, hn::Set(d, 1.44269502162933349609375f), magic);
  const V k = hn::Sub(t, magic);
  V r = hn::NegMulAdd(k, hn::Set(d, 0.693359375f), x);
  r = hn::NegMulAdd(k, hn::Set(d, -2.12194440e-4f), r);
  V q = hn::Set(d, 0.0013811651151627302f);
  q = hn::MulAdd(q, r, hn::Set(d, 0.008370140567421913f));
  q = hn::MulAdd(q, r, hn::Set(d, 0.04166853055357933f));
  q = hn::MulAdd(q, r, hn::Set(d, 0.16666509211063385f));
  q = hn::MulAdd(q, r, hn::Set(d, 0.4999999403953552f));
  const V p = hn::Add(hn::MulAdd(hn::Mul(r, r), q, r), hn::Set(d, 1.0f));
  // t's bits are 0x4B400000 + k; shifted left by 23 the constant part leaves the word.
  const V scale = hn::BitCast(
      d, hn::ShiftLeft<23>(hn::Add(hn::BitCast(di, t), hn::Set(di, 127 + 64))));
  return hn::Mul(p, scale);
}

// a·b − p exactly, for p = a·b rounded (|a·b| far from overflow), f32 or f64 lanes: one FMA
// where the target has it, else Dekker's product with Veltkamp's split (4097 = 2^12 + 1 splits a
// 24-bit significand into two 12-bit halves whose products are exact; 2^27 + 1 a 53-bit one).
template <class D, class V>
HWY_INLINE V TwoProdLo(D d, V a, V b, V p) {
#if HWY_NATIVE_FMA
  (void)d;
  return hn::MulSub(a, b, p);
#else
  using T = hn::TFromD<D>;
  const V k = hn::Set(d, sizeof(T) == 4 ? T(4097.0f) : T(134217729.0));
  const V ta = hn::Mul(a, k), tb = hn::Mul(b, k);
  const V ah = hn::Sub(ta, hn::Sub(ta, a)), bh = hn::Sub(tb, hn::Sub(tb, b));
  const V al = hn::Sub(a, ah), bl = hn::Sub(b, bh);
  V r = hn::Sub(hn::Mul(ah, bh), p);
  r = hn::Add(r, hn::Mul(ah, bl));
  r = hn::Add(r, hn::Mul(al, bh));
  return hn::Add(r, hn::Mul(al, bl));
#endif
}

// tanh(|t|) for |t| < 0.625: t + t³·P(t²).
template <class D, class V>
HWY_INLINE V TanhSmall(D d, V at) {
  const V s = hn::Mul(at, at);
  V p = hn::Set(d, 0.002292744816178142f);
  p = hn::MulAdd(p, s, hn::Set(d, -0.008343945515839153f));
  p = hn::MulAdd(p, s, hn::Set(d, 0.02176891865102821f));
  p = hn::MulAdd(p, s, hn::Set(d, -0.053959259577204544f));
  p = hn::MulAdd(p, s, hn::Set(d, 0.1333330355691574f));
  p = hn::MulAdd(p, s, hn::Set(d, -0.3333333317214036f));
  return hn::MulAdd(hn::Mul(at, s), p, at);
}

// tanh(|t|) for |t| ≥ 0.625 from e = exp(−2|t|): (1 − e)/(1 + e).
template <class D, class V>
HWY_INLINE V TanhBig(D d, V e) {
  const V one = hn::Set(d, 1.0f);
  return hn::Div(hn::Sub(one, e), hn::Add(one, e));
}

// tanh(t), each lane from the branch its |t| selects (TanhSmall below 0.625, else TanhBig; the
// cross-entropy's soft-cap in fast/softmax.cc branches the same way). The exponential and division
// of |t| ≥ 0.625 are evaluated only when some lane needs them: logits and attention scores are
// mostly far below the cap, so whole vectors skip them (3× faster; a vector with lanes on both
// sides measured ≈ 12 % slower than the branch-free form on AVX2). A lane's value never depends
// on its neighbours.
template <class D, class V>
HWY_INLINE V TanhF(D d, V t) {
  const V at = hn::Abs(t);
  const auto small = hn::Lt(at, hn::Set(d, 0.625f));  // false for NaN: the big branch keeps it
  V y = TanhSmall(d, at);
  if (!hn::AllTrue(d, small)) {
    const V e = ExpF(d, hn::Mul(hn::Set(d, -2.0f), at));
    y = hn::IfThenElse(small, y, TanhBig(d, e));
  }
  return hn::CopySign(y, t);
}

// Soft-cap z' = cap·tanh(z/cap). For |z| < 2^-40·cap, tanh(t) = t(1 − t²/3 + …) with
// t²/3 < 2^-81, so the correctly rounded z' is z itself; returning z there also avoids the
// subnormal quotient z/cap for tiny z, which would lose bits.
template <class D, class V>
HWY_INLINE V SoftcapF(D d, V z, V cap) {
  const V y = hn::Mul(cap, TanhF(d, hn::Div(z, cap)));
  return hn::IfThenElse(hn::Lt(hn::Abs(z), hn::Mul(cap, hn::Set(d, 0x1p-40f))), z, y);
}

// sigmoid(x) = 1/(1 + e^{−x}) for x ≥ 0, e^{x}/(1 + e^{x}) for x < 0 (the reference's stable
// form); NaN propagates through e.
template <class D, class V>
HWY_INLINE V SigmoidF(D d, V x) {
  const V one = hn::Set(d, 1.0f);
  const V e = ExpF(d, hn::Neg(hn::Abs(x)));
  return hn::Div(hn::IfThenElse(hn::Lt(x, hn::Zero(d)), e, one), hn::Add(one, e));
}

// erfc(a) for a = a_hi + a_lo ≥ 0 (a_lo tiny), returned as r·(1 + t) and s: erfc(a) ≈
// r·(1 + t)·exp(−s). The caller applies exp(−s) so that it can avoid an early underflow.
template <class D, class V>
HWY_INLINE void ErfcParts(D d, V a, V a_lo, V& scaled, V& s) {
  const V one = hn::Set(d, 1.0f), two = hn::Set(d, 2.0f);
  // q = (a − 2)/(a + 2), then corrected by the residual of the division.
  V p = hn::Add(a, two);
  V r = hn::Div(one, p);
  V q = hn::MulAdd(hn::Set(d, -4.0f), r, one);
  V t = hn::MulAdd(hn::Add(q, one), hn::Set(d, -2.0f), a);  // a − 2(q + 1), exact product
  const V aq = hn::Mul(a, q);
  V e = hn::Sub(hn::Sub(t, aq), TwoProdLo(d, a, q, aq));  // t − a·q
  q = hn::MulAdd(r, e, q);
  // (1 + 2a)·exp(a²)·erfc(a) ≈ 1 + p(q), q in [−1, 0.668] for a in [0, 10.05]. Estrin's scheme
  // (q² and q⁴ beside the pairs of coefficients): a short dependency chain, so that several
  // vectors' evaluations overlap.
  const V q2 = hn::Mul(q, q);
  const V q4 = hn::Mul(q2, q2);
  const V c01 = hn::MulAdd(hn::Set(d, -9.27639827e-2f), q, hn::Set(d, 2.76978403e-1f));
  const V c23 = hn::MulAdd(hn::Set(d, 1.64055392e-1f), q, hn::Set(d, -1.66031361e-1f));
  const V c45 = hn::MulAdd(hn::Set(d, -8.05991981e-3f), q, hn::Set(d, -5.42046614e-2f));
  const V c67 = hn::MulAdd(hn::Set(d, 1.31355342e-3f), q, hn::Set(d, 8.63227434e-3f));
  const V c89 = hn::MulAdd(hn::Set(d, -4.01139259e-4f), q, hn::Set(d, -1.23075210e-3f));
  const V c03 = hn::MulAdd(c23, q2, c01);
  const V c47 = hn::MulAdd(c67, q2, c45);
  p = hn::MulAdd(hn::MulAdd(c89, q4, c47), q4, c03);
  // (1 + p)/(1 + 2a), with one residual correction.
  r = hn::Mul(hn::Div(one, hn::Add(a, hn::Set(d, 0.5f))), hn::Set(d, 0.5f));
  q = hn::MulAdd(p, r, r);
  t = hn::Add(q, q);
  const V ta = hn::Mul(t, a);
  e = hn::Add(hn::Sub(p, q), hn::Sub(hn::Sub(one, ta), TwoProdLo(d, t, a, ta)));  // 1 − t·a
  r = hn::MulAdd(e, r, q);
  // exp(−a²) = exp(−s)·(1 + t), t = s − a² = (s − a_hi²) − 2·a_hi·a_lo.
  s = hn::Mul(a, a);
  t = hn::Sub(hn::Neg(TwoProdLo(d, a, a, s)), hn::Mul(hn::Add(a, a), a_lo));
  scaled = hn::MulAdd(r, t, r);
}

// GELU(x) = x/2·erfc(−x/√2) (the reference's stable form).
template <class D, class V>
HWY_INLINE V GeluF(D d, V x) {
  const V half_x = hn::Mul(x, hn::Set(d, 0.5f));
  const V ax = hn::Abs(x);
  // 1/√2 = kC + kCLo, kC = 0x3F3504F3.
  const V c = hn::Set(d, 0.707106769084930419921875f);
  const V a = hn::Mul(ax, c);
  const V a_lo = hn::MulAdd(ax, hn::Set(d, 1.2101617485882343e-08f), TwoProdLo(d, ax, c, a));
  V scaled, s;
  ErfcParts(d, a, a_lo, scaled, s);
  const V zero = hn::Zero(d);
  // x < 0: x/2·erfc(a) = (x/2·scaled)·exp(−s). Where exp(−s) would be subnormal (s > 80),
  // exp(−s/2) is applied twice so that only the last product rounds into the subnormal range.
  // The split's exponential is only evaluated when some lane needs it (lanes choose their
  // value as before, so the results do not depend on their neighbours).
  // −s ≤ 0: Highway's Exp needs no overflow check, and NaN lanes are replaced at the end.
  const V exp_s = hn::Exp(d, hn::Neg(s));
  const V head = hn::Mul(half_x, scaled);
  V neg = hn::Mul(head, exp_s);
  const auto deep = hn::Gt(s, hn::Set(d, 80.0f));
  if (HWY_UNLIKELY(!hn::AllFalse(d, deep))) {
    const V h = ExpF(d, hn::Mul(s, hn::Set(d, -0.5f)));
    neg = hn::IfThenElse(deep, hn::Mul(hn::Mul(head, h), h), neg);
  }
  // a > 20: erfc(a) = 0 in f32 after the factor x/2; x/2·0 keeps −0 and makes −inf·0 = NaN, as
  // the reference computes.
  const auto far = hn::Gt(a, hn::Set(d, 20.0f));
  neg = hn::IfThenElse(far, hn::Mul(half_x, zero), neg);
  // x ≥ 0: x/2·(2 − erfc(a)).
  const V erfc_a = hn::IfThenElse(far, zero, hn::Mul(scaled, exp_s));
  const V pos = hn::Mul(half_x, hn::Sub(hn::Set(d, 2.0f), erfc_a));
  const V y = hn::IfThenElse(hn::Lt(x, zero), neg, pos);
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

// GELU-tanh(x) = x·sigmoid(2u), u = √(2/π)·(x + 0.044715·x³) (the reference's stable form).
// For x < 0 sigmoid(v) ≈ e^{v} has relative condition |v|, so v = 2u is carried as a
// double-float v_hi + v_lo (each product with its exact residual) and e^{v} = e^{v_hi}·(1 + v_lo).
template <class D, class V>
HWY_INLINE V GeluTanhF(D d, V x) {
  const V one = hn::Set(d, 1.0f), zero = hn::Zero(d);
  const V ch = hn::Set(d, 0.044714998453855515f), cl = hn::Set(d, 1.5461444347053543e-09f);
  const V kh = hn::Set(d, 1.5957691669464111f), kl = hn::Set(d, -4.534068054340423e-08f);  // 2√(2/π)
  const V x2 = hn::Mul(x, x);
  const V x2l = TwoProdLo(d, x, x, x2);
  const V w = hn::Mul(ch, x2);
  const V wl = hn::Add(TwoProdLo(d, ch, x2, w), hn::MulAdd(ch, x2l, hn::Mul(cl, x2)));
  // 1 + w with its rounding error (w ≥ 0, so |1| ≥ … only when w ≤ 1: use the general TwoSum).
  const V sh = hn::Add(one, w);
  const V bb = hn::Sub(sh, one);
  const V sl = hn::Add(hn::Add(hn::Sub(one, hn::Sub(sh, bb)), hn::Sub(w, bb)), wl);
  const V mh = hn::Mul(x, sh);
  const V ml = hn::MulAdd(x, sl, TwoProdLo(d, x, sh, mh));
  const V vh = hn::Mul(kh, mh);
  const V vl = hn::Add(TwoProdLo(d, kh, mh, vh), hn::MulAdd(kh, ml, hn::Mul(kl, mh)));
  // x < 0: sigmoid(v) = e/(1 + e), e = e^{v}; x ≥ 0: 1/(1 + e^{−v}). v has the sign of x, so one
  // exponential e^{−|v|} serves both; its argument is ≤ 0 (no overflow check needed, and NaN
  // lanes are replaced at the end).
  const auto neg_x = hn::Lt(x, zero);
  const V ev = hn::Exp(d, hn::Neg(hn::Abs(vh)));
  const V en = hn::MulAdd(ev, vl, ev);
  V y = hn::Mul(
      x, hn::Div(hn::IfThenElse(neg_x, en, one), hn::Add(one, hn::IfThenElse(neg_x, en, ev))));
  // v < −80: e^{v} < 2^-115 would be subnormal and 1 + e^{v} = 1; apply e^{v/2} twice so that
  // only the last product rounds into the subnormal range (evaluated only when a lane needs it).
  const auto deep = hn::Lt(vh, hn::Set(d, -80.0f));
  if (HWY_UNLIKELY(!hn::AllFalse(d, deep))) {
    const V h = ExpF(d, hn::Mul(vh, hn::Set(d, 0.5f)));
    y = hn::IfThenElse(deep, hn::Mul(hn::Mul(hn::Mul(x, h), hn::Add(one, vl)), h), y);
  }
  // x < −20: sigmoid(v) underflows (v < −500); x·0 keeps −0 and gives NaN for −inf, as the
  // reference computes (and keeps the residual arithmetic away from x² overflow).
  y = hn::IfThenElse(hn::Lt(x, hn::Set(d, -20.0f)), hn::Mul(x, zero), y);
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

// SiLU(x) = x·sigmoid(x), SigmoidF's form. Its exponential's argument −|x| is ≤ 0, so Highway's
// Exp needs no overflow check here, nor the NaN one: Exp(NaN) = 0 gives x·1 = NaN.
template <class D, class V>
HWY_INLINE V SiluF(D d, V x) {
  const V one = hn::Set(d, 1.0f);
  const V e = hn::Exp(d, hn::Neg(hn::Abs(x)));
  return hn::Mul(x, hn::Div(hn::IfThenElse(hn::Lt(x, hn::Zero(d)), e, one), hn::Add(one, e)));
}

// ReLU(x) = max(0, x); NaN stays NaN, −0 becomes +0.
template <class D, class V>
HWY_INLINE V ReluF(D d, V x) {
  const V y = hn::IfThenElseZero(hn::Gt(x, hn::Zero(d)), x);
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#endif  // LMO_FAST_MATH_INL_H_
