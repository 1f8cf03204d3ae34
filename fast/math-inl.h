// Per-target f32 elementary functions of the fast kernels, with the special values the
// reference gives (NaN propagates; exp(+inf) = inf; exp(-inf) = 0) and the accuracy the
// activation policies need. Highway 1.0.3's contrib Exp is used for ExpF (its documented error:
// 1 ulp; here the argument checks it lacks are added); ExpTimes2PowF, a cheaper exponential
// without range handling, serves the activations whose arguments are bounded; the soft-cap's
// tanh, sigmoid and GELU's Φ are written here because Highway's tanh (4 ulp) is too coarse and it
// has no erf/erfc.
//
// Error analysis (u = 2^-24, errors in ulps of the result):
//  - SoftcapF (and SoftcapGradF, the same z' with cross-entropy's cap'): cap·tanh(z/cap) without a
//    division where |z/cap| < 0.625: z + z·q, q = t²·P(t²), P a degree-5 Chebyshev fit of (tanh t −
//    t)/t³ (fit error 1.6e-9), t = z·(1/cap) (≤ 1 ulp); the exact leading term z and the
//    correction's factor |q| ≤ 0.113 damp t's error, one FMA rounds: ≈ 1 ulp. |t| ≥ 0.625: E =
//    exp(2·min(|t|, 9.5)) ≥ 3.49 (ExpTimes2PowF, ≈ 1 ulp) with t as accurate as the quotient z/cap
//    (two FMAs correct the reciprocal's product), cap − cap·w, w = 2/(1 + E), by one FMA
//    (CapTanhBig): ≈ 2 ulp at the border, less beyond. Measured against cap·tanhl(z/cap) on every
//    7th f32 z in (0, 20·cap] for caps 30, 7.3 and 1 (tools/softcap_error_sweep), AVX2 (SSE4, no
//    FMA): |z/cap| < 0.625: 1.07 (1.14) ulp, where cap·tanh(z/cap) with its quotient, the
//    polynomial t + t³·P(t²) and the product measured 2.31 (2.35); beyond: 1.48 (1.73) ulp, where
//    cap·(1 − e)/(1 + e) from e = e^{−2|t|} measured 2.00 (2.01) and the former quotient form 2.11
//    (2.11) (the policy allows 3). The computed z' is monotone over every f32 of those ranges on
//    both targets (2·e/(1 + e) in place of CapTanhBig's w was more accurate than the quotient form
//    too, but stepped back by an ulp at ~17,000 places in each range).
//  - SigmoidF: e = exp(−|x|) (1 ulp; its argument is exact), 1 + e (0.5), one division (0.5), for
//    x < 0 the numerator e (1): ≤ 2.5 ulp.
//  - GeluF: GELU(x) = x·Φ(x), Φ(−t) = R(t)·e^{−t²/2} (t = |x|), R a rational of degrees 5/6
//    fitted with f32 coefficients to 0.1 ulp (tools/gelu_mills_fit.py): P and Q by Horner (½ ulp
//    each at the last step, less before: positive terms), their quotient (½), e^{−x²/2} from the
//    exact x²/2 (≈ 1 ulp, ExpTimes2PowF, and the residual's correction), the products (½ each).
//    Measured against a long-double reference on every 61st f32 of [−16, 16]: 4.0 ulp for
//    x ≥ 0 (Φ = 1 − Φ(−x) takes Φ(−x)'s absolute error), 4.7–5.9 for x < 0 on AVX2, 5.4–7.5 on
//    the targets without FMA (two roundings per Horner step); the policy adds 2u times the
//    condition ≈ x² for x < 0, the budget of the former erfc-based form, whose rounded argument
//    x/√2 this form does not have.
//  - SiluF: x/(1 + e^{−x}) (see there). Measured against x/(1 + expl(−x)) on every 3rd f32 of
//    [−88, 88] (tools/activation_error_sweep), AVX2 and SSE4: 2.38 ulp for x < 0 (x ≈ −16.71,
//    where the result's significand is 1.94: the errors of e^{−x} and of the sum, 1½ ulp in
//    their own ulps, weigh up to twice as much in ulps of a result with a larger significand),
//    1.50 for x ≥ 0; 0.80 of the policy's 3 ulp.
//  - GeluTanhF: x/(1 + e^{−v}) with v rounded in f32 (≤ 4u relative): ≈ 2 ulp plus 4u·κ, κ =
//    |v|(1 − σ(v)) sigmoid's condition (see there). Measured against a long-double reference on
//    every 3rd f32 of [−20, 20] on AVX2 and SSE4: 1.87 ulp for x > 0; for x < 0 up to 215 ulp
//    (x ≈ −10.04, κ ≈ 88), at most 0.50 of the policy's 4 ulp plus 7u·κ everywhere (x > 0:
//    0.37). The former double-float argument, at 2.3 times the cost, measured 4.1 ulp on AVX2
//    (every 13th f32) and 57 on a target without FMA (every 997th, x ≈ −9.6).
//    tools/activation_error_sweep's every 3rd f32 from 0 outward: 1.87 (AVX2) and 1.90 (SSE4)
//    ulp for x ≥ 0, 211 ulp (x ≈ −9.98) and 0.495 of the policy for x < 0.
//  The quotients of SiluF, GeluTanhF and GeluF stay divisions on every target: the hardware
//  reciprocal with a Newton step and the remainder's FMA correction (y0 = x·r, y = y0 −
//  r·(den·y0 − x)) gave the same errors on AVX2 and passed every test, but was slower on Zen 3,
//  whose divider works beside the FMA pipes that the exponentials fill: even the inaccurate
//  x·rcp(den) alone was at most 4 % faster in cache, here and in CapTanhBig
//  (docs/bench-history.md, 2026-11-24).
#if defined(LMO_FAST_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LMO_FAST_MATH_INL_H_
#undef LMO_FAST_MATH_INL_H_
#else
#define LMO_FAST_MATH_INL_H_
#endif

#include <cmath>

#include "fast/exp_constants.h"
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
// On the emulated targets (EMU128, SCALAR) Highway's float → int conversion inside Exp is a C++
// cast, undefined for NaN (clang's UBSan reports it), so NaN lanes enter Exp as 0 there; their
// result is replaced below either way, and the SIMD targets' conversion is defined for NaN.
template <class D, class V>
HWY_INLINE V ExpF(D d, V x) {
#if HWY_TARGET == HWY_EMU128 || HWY_TARGET == HWY_SCALAR
  V y = hn::Exp(d, hn::IfThenZeroElse(hn::IsNaN(x), x));
#else
  V y = hn::Exp(d, x);
#endif
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
// on the same inputs; tests/kernels/fast_exp_test.cc checks every target. The scaling by 2^(k + 64) is
// exact (k ≥ −185 for x ≥ −128: the exponent stays normal).
// e^x·2^kBias without range checks, for x whose k = round(x·log2 e) keeps k + 127 + kBias in
// [1, 254] (the exponent construction below wraps otherwise): the core of
// ExpNonPosTimes2Pow64F and of the activations' exponentials (error analysis there).
template <int kBias, class D, class V>
HWY_INLINE V ExpTimes2PowF(D d, V x) {
  namespace c = exp_f32;
  const hn::RebindToSigned<D> di;
  const V magic = hn::Set(d, c::kMagic);
  const V t = hn::MulAdd(x, hn::Set(d, c::kLog2e), magic);
  const V k = hn::Sub(t, magic);
  V r = hn::NegMulAdd(k, hn::Set(d, c::kLn2Hi), x);
  r = hn::NegMulAdd(k, hn::Set(d, c::kLn2Lo), r);
  V q = hn::Set(d, c::kQ4);
  q = hn::MulAdd(q, r, hn::Set(d, c::kQ3));
  q = hn::MulAdd(q, r, hn::Set(d, c::kQ2));
  q = hn::MulAdd(q, r, hn::Set(d, c::kQ1));
  q = hn::MulAdd(q, r, hn::Set(d, c::kQ0));
  const V p = hn::Add(hn::MulAdd(hn::Mul(r, r), q, r), hn::Set(d, 1.0f));
  // t's bits are 0x4B400000 + k; shifted left by 23 the constant part leaves the word.
  const V scale =
      hn::BitCast(d, hn::ShiftLeft<23>(hn::Add(hn::BitCast(di, t), hn::Set(di, 127 + kBias))));
  return hn::Mul(p, scale);
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
// on the same inputs; tests/kernels/fast_exp_test.cc checks every target. The scaling by 2^(k + 64) is
// exact (k ≥ −185 for x ≥ −128: the exponent stays normal).
template <class D, class V>
HWY_INLINE V ExpNonPosTimes2Pow64F(D d, V x) {
  return ExpTimes2PowF<64>(d, hn::Max(x, hn::Set(d, -128.0f)));
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

// P(s) of tanh(t) = t + t³·P(t²) for |t| < 0.625 (s = t²): a degree-5 Chebyshev fit of
// (tanh t − t)/t³ (fit error 1.6e-9), by Horner's rule. −0.34 ≤ P ≤ −0.29, so that
// t²·P(t²) ∈ [−0.113, 0]: the soft-cap's correction term (SoftcapF).
template <class D, class V>
HWY_INLINE V TanhP(D d, V s) {
  V p = hn::Set(d, 0.002292744816178142f);
  p = hn::MulAdd(p, s, hn::Set(d, -0.008343945515839153f));
  p = hn::MulAdd(p, s, hn::Set(d, 0.02176891865102821f));
  p = hn::MulAdd(p, s, hn::Set(d, -0.053959259577204544f));
  p = hn::MulAdd(p, s, hn::Set(d, 0.1333330355691574f));
  return hn::MulAdd(p, s, hn::Set(d, -0.3333333317214036f));
}

// The soft-cap's per-call constants (SoftcapF and SoftcapGradF), computed once per call in
// double: the kernels multiply by 1/cap instead of dividing by cap. z/cap is formed from
// (z·pre) and inv = 1/(cap·pre) rounded once (the double quotient rounded to f32: double
// rounding is innocuous for a quotient, 53 ≥ 2·24 + 2), pre = 2^k: k = 0 for caps in [2^-64,
// 2^64], where inv is a normal number; outside (caps no model uses, but any finite cap > 0 is
// valid), k = ±64 keeps inv normal: z·2^64 for a tiny cap is exact or overflows to inf (the
// exponential branch, which clamps), z·2^-64 for a huge cap loses bits only below |z| = 2^-62,
// where |t| < 2^-126 and z' = z whatever t is. The branch: |z| < limit = 0.625·cap rounded to f32
// (0.625·cap is exact in double) takes the polynomial, the rest the exponential: a test on |z|
// itself, monotone, so a row whose max |z| is below the limit has every lane there
// (fast/softmax.cc relies on it); |t| then lies within 2^-24 relative of 0.625 on the wrong side
// at worst, where both branches are accurate.
template <class D>
struct SoftcapConsts {
  using V = hn::Vec<D>;
  V cap, inv, pre, scaled_cap, limit, clamp;
  bool prescale;
  SoftcapConsts(D d, float c) {
    const int k = c < 0x1p-64f ? 64 : c > 0x1p64f ? -64 : 0;
    const double sc = std::ldexp(static_cast<double>(c), k);  // exact
    prescale = k != 0;
    cap = hn::Set(d, c);
    inv = hn::Set(d, static_cast<float>(1.0 / sc));
    pre = hn::Set(d, static_cast<float>(std::ldexp(1.0, k)));
    scaled_cap = hn::Set(d, static_cast<float>(sc));
    limit = hn::Set(d, static_cast<float>(0.625 * c));
    clamp = hn::Set(d, static_cast<float>(64 * sc));
  }
  HWY_INLINE V Scaled(V z) const { return HWY_UNLIKELY(prescale) ? hn::Mul(z, pre) : z; }
  // z/cap for the polynomial branch, with inv's and the product's roundings: ≤ 1 ulp.
  HWY_INLINE V Arg(V z) const { return hn::Mul(Scaled(z), inv); }
  // min(|z|/cap, 64) for the exponential branch, to ½ ulp (and ≤ 2^-23 ulp more) like the
  // quotient: where MulAdd is fused, a = t·(cap·pre) + r exactly, and t + r·inv corrects t (two
  // FMAs: Zen 3's vdivps takes 3.5 cycles per vector, an FMA 0.5); elsewhere the division. The
  // clamp at 64 (where e^{−2|t|} is below every f32 that matters next to 1, and the scaled
  // exponential's clamp at −128 acts) keeps t finite: an infinite t would make r NaN.
  HWY_INLINE V AbsArg(V z) const {
    const V a = hn::Min(hn::Abs(Scaled(z)), clamp);
#if HWY_NATIVE_FMA
    const V t = hn::Mul(a, inv);
    return hn::MulAdd(hn::NegMulAdd(t, scaled_cap, a), inv, t);
#else
    return hn::Div(a, scaled_cap);
#endif
  }
  // The same |z|/cap as hi + lo (lo about an ulp of hi at most), the pair accurate to ≈ 2^-46
  // relative, for a function whose condition in t is large: cross-entropy's cap' = 4e/(1 + e)²,
  // e = e^{−2|t|}, has condition 2|t| (up to 128), which would multiply AbsArg's ½ ulp. hi =
  // a·inv, r = a − hi·(cap·pre) (one FMA; elsewhere a − p exact by Sterbenz's lemma, p = hi·cap
  // rounded, minus Dekker's low part of the product), lo = r·inv.
  HWY_INLINE V AbsArgSplit(D d, V z, V& lo) const {
    const V a = hn::Min(hn::Abs(Scaled(z)), clamp);
    const V hi = hn::Mul(a, inv);
#if HWY_NATIVE_FMA
    (void)d;
    const V r = hn::NegMulAdd(hi, scaled_cap, a);
#else
    const V p = hn::Mul(hi, scaled_cap);
    const V r = hn::Sub(hn::Sub(a, p), TwoProdLo(d, hi, scaled_cap, p));
#endif
    lo = hn::Mul(r, inv);
    return hi;
  }
};

// cap·tanh(|t|) for |t| ≥ 0.625 from E = e^{2|t|} ≥ 3.49: cap − cap·w, w = 1 − tanh|t| = 2/(1 + E)
// ≤ 0.45, by one FMA. Each of its operations is monotone in its inputs (1 + E and 2/(1 + E)
// rounded, the FMA), so the result never steps back as |t| grows (with e = e^{−2|t|}, 2e/(1 + e)
// would: 1 + e rounds coarser than e, and each step of the denominator moves w the wrong way).
// w's relative error (E's, ≈ 1 ulp plus 2|t| times t's, then 1 + E's and the quotient's ½ each)
// reaches the result damped by w/(1 − w) ≤ 0.8 at the branch's border and by ≈ 2e^{−2|t|}
// beyond, where the result is nearly the correctly rounded cap − cap·w.
template <class D, class V>
HWY_INLINE V CapTanhBig(D d, V cap, V big_e) {
  const V w = hn::Div(hn::Set(d, 2.0f), hn::Add(hn::Set(d, 1.0f), big_e));
  return hn::NegMulAdd(cap, w, cap);
}

// E = e^{2·min(|t|, 9.5)} for CapTanhBig (ExpTimes2PowF, ≈ 1 ulp; tanh(|t|) rounds to 1 in f32
// for |t| > 9.01, and so does cap − cap·w at E = e^{19}; the clamp keeps the exponent
// construction in range, E ≤ 1.8e8).
template <class D, class V>
HWY_INLINE V CapBigE(D d, V abs_t) {
  return ExpTimes2PowF<0>(d, hn::Mul(hn::Set(d, 2.0f), hn::Min(abs_t, hn::Set(d, 9.5f))));
}

// Soft-cap z' = cap·tanh(z/cap) (SoftcapGradF, and SoftcapF without the gradient), each lane
// from the branch |z| < limit selects (SoftcapConsts), without a division in the polynomial
// branch:
//  - |t| < 0.625: cap·tanh(t) = cap·(t + t³·P(t²)) = z + z·q, q = s·P(s), s = t², by one FMA.
//    The leading term z is exact, and the correction z·q is at most 0.113·|z| ≤ 0.127·|z'|: the
//    relative errors of s (t's 1 ulp doubled, plus the square's ½: ≤ 2.5u), of P (≤ 1u) and q's
//    rounding (½u) reach z' multiplied by 0.127 (≤ 0.51u), and the FMA rounds once: ≈ 1 ulp
//    (1.07 measured, see the top), where cap·tanh(z/cap) with its quotient, the polynomial and
//    the product measured 2.31.
//    Tiny |z|: t·t is ≤ 2^-80 below |z| ≤ 2^-40·cap, so z + z·q rounds to z (also for subnormal
//    z, whose z·q underflows), the correctly rounded value; only z = −0 gives −0 + (+0) = +0,
//    hence the sign of z put back at the end (the other lanes' signs are already z's).
//  - |t| ≥ 0.625: E = e^{2·min(|t|, 9.5)} (CapBigE; |t| from AbsArg, as accurate as the
//    quotient z/cap), then CapTanhBig's cap − cap·2/(1 + E). The condition of cap·tanh(t) in t is
//    2t/sinh(2t) ≤ 0.78 here, so t's ½ ulp costs ≤ 0.39; w's errors (E's ≈ 1 ulp, the sum's and
//    the quotient's ½ each) enter damped by w/(1 − w) ≤ 0.8, and the FMA rounds once.
//    (t = z·(1/cap) alone, 1 ulp, measured 2.35 ulp with the former quotient form on the sweeps
//    of the top, against 2.00 with the correction: the correction's two FMAs cost about what the
//    division did, so the wide soft-cap is not faster than before.) Evaluated
//    only when some lane needs it: logits and attention scores are mostly far below the cap, so
//    whole vectors skip it (a vector with lanes on both sides costs both). A lane's value never
//    depends on its neighbours.
// NaN fails |z| ≥ limit and stays NaN through the polynomial branch; ±inf take the exponential
// branch (t = ±inf, clamped) and give ±cap. The computed z' is monotone in z: it measured so over
// every f32 z in (0, 20·cap] for caps 30, 7.3 and 1 on AVX2 and SSE4 (both branches and their
// border; tools/softcap_error_sweep), which fast/softmax.cc's row maximum relies on.
// When kGrad, also cap'(z) = 1 − tanh²(z/cap) (cross-entropy's gradient through the cap,
// fast/softmax.cc), from the same operations: the gradient reuses the polynomial branch's s,
// P(s) and q, so that z' is the same bits with or without it.
//  - |t| < 0.625: cap' = 1 − y² with y² = s·(1 + q)² = s + s·q·(2 + q), one FMA (2 + q is s·P +
//    2, one more, so that no plain product meets a sum the compiler could fuse differently in
//    different callers). y² ≤ 0.31 and cap' ≥ 0.69: s's error reaches y² unchanged, so where
//    MulAdd is fused s is taken from the corrected quotient (t + r·inv, r = z − t·cap exact: s +
//    2t·r·inv, ≈ 1.5u instead of t²'s 2.5u); the term s·q·(2 + q) (≤ 0.27·y²) adds its ≈ 2u
//    damped, the FMA ½ ulp of y² (< 2^-26), and the subtraction ½ ulp of cap'. Measured against
//    1/cosh²(z/cap) in long double on every 61st f32 z in (0, 20·cap], caps 30, 7.3 and 1
//    (tools/softcap_error_sweep): 1.23 ulp on AVX2, 1.61 on SSE4 (without the correction); 1.43
//    (1.71) with the former division z/cap and 1 − y². The reference's 4e/(1 + e)² form would
//    cost ≈ 3 ulp here, e = e^{−2|t|} rounded.
//  - |t| ≥ 0.625: the reference's softcap_grad 4e/(1 + e)², e = e^{−2|t|} (1 − y² would cancel:
//    y → 1; a second exponential, since E is clamped where cap' must still resolve e^{−2|t|}). e
//    is formed as e·2^64 (the scaled exponential, accurate to ~1 ulp as a normal number) and
//    scaled back by one rounding, so a subnormal e or cap' is rounded once, as a correctly
//    computed value would be. e's condition in t is 2|t| (up to 128), so t enters as the pair hi
//    + lo of AbsArgSplit: e = e^{−2·hi}·(1 − 2·lo), as accurate as the exponential. Measured on
//    every 61st f32 z in [0.625·cap, 20·cap] for caps 30, 7.3 and 1 (tools/softcap_error_sweep):
//    4.58 ulp on every target (e's ≈ 1.5 ulp, then 1 + e, its square and the quotient), where
//    t rounded once (AbsArg, ½ ulp) cost 32 ulp at |t| ≈ 17, 59 at |t| ≈ 39.
// kAllSmall: the caller knows that every |z| < limit (a row whose max |z| is below it: the test
// is monotone, see SoftcapConsts), and the per-vector test and the sign fix for z = −0 are left
// out (the caller, a softmax row, uses z' only as z' − m, where ±0 give the same term).
template <bool kGrad, bool kAllSmall = false, class D, class V>
HWY_INLINE V SoftcapGradF(D d, V z, const SoftcapConsts<D>& c, V& grad) {
  const V t = c.Arg(z);
  const V s = hn::Mul(t, t);
  const V p = TanhP(d, s);
  const V q = hn::Mul(s, p);
  V y = hn::MulAdd(z, q, z);
  if constexpr (kGrad) {
    V sg = s;
#if HWY_NATIVE_FMA
    // t² from the corrected quotient t + r·inv (r = z − t·cap exact, as in AbsArg): s + 2t·r·inv.
    sg = hn::MulAdd(hn::Mul(t, hn::NegMulAdd(t, c.scaled_cap, c.Scaled(z))), hn::Add(c.inv, c.inv),
                    s);
#endif
    const V y2 = hn::MulAdd(hn::Mul(sg, q), hn::MulAdd(s, p, hn::Set(d, 2.0f)), sg);
    grad = hn::Sub(hn::Set(d, 1.0f), y2);
  }
  if constexpr (kAllSmall) return y;
  const auto big = hn::Ge(hn::Abs(z), c.limit);
  if (!hn::AllFalse(d, big)) {
    const V at = c.AbsArg(z);
    y = hn::IfThenElse(big, CapTanhBig(d, c.cap, CapBigE(d, at)), y);
    if constexpr (kGrad) {
      // e = e^{−2·hi}·e^{−2·lo} = e^{−2·hi}·(1 − 2·lo) (the next term, 2·lo², is below 2^-34):
      // −2·hi is exact, so e is as accurate as the exponential, not 2|t| times t's error.
      V lo;
      const V hi = c.AbsArgSplit(d, z, lo);
      const V e_hi = ExpNonPosTimes2Pow64F(d, hn::Mul(hn::Set(d, -2.0f), hi));
      const V e_scaled = hn::NegMulAdd(hn::Add(lo, lo), e_hi, e_hi);
      const V unscale = hn::Set(d, 0x1p-64f);
      const V one_e = hn::Add(hn::Set(d, 1.0f), hn::Mul(e_scaled, unscale));
      const V four_e = hn::Mul(hn::Set(d, 4.0f), e_scaled);
      grad = hn::IfThenElse(big, hn::Mul(hn::Div(four_e, hn::Mul(one_e, one_e)), unscale), grad);
    }
  }
  // The sign of z: the big branch's is dropped, the small one's is z's except for −0.
  return hn::Or(y, hn::And(z, hn::SignBit(d)));
}

// SoftcapGradF<false> below, for callers without a gradient.
template <class D, class V>
HWY_INLINE V SoftcapF(D d, V z, const SoftcapConsts<D>& c) {
  V unused;
  return SoftcapGradF<false>(d, z, c, unused);
}

// sigmoid(x) = 1/(1 + e^{−x}) for x ≥ 0, e^{x}/(1 + e^{x}) for x < 0 (the reference's stable
// form); NaN propagates through e.
template <class D, class V>
HWY_INLINE V SigmoidF(D d, V x) {
  const V one = hn::Set(d, 1.0f);
  const V e = ExpF(d, hn::Neg(hn::Abs(x)));
  return hn::Div(hn::IfThenElse(hn::Lt(x, hn::Zero(d)), e, one), hn::Add(one, e));
}

// GELU(x) = x·Φ(x), with Φ(−t) = R(t)·e^{−t²/2} for t = |x| and Φ(t) = 1 − Φ(−t):
// R(t) = erfc(t/√2)·e^{t²/2}/2 (the Mills ratio over √(2π)) is smooth, decreasing from ½ at 0
// like 1/(t√(2π)) for large t, and a rational P(t)/Q(t) of degrees 5 and 6 with positive f32
// coefficients fits it on [0, 14.5] to a relative 5.8e-9 (tools/gelu_mills_fit.py; Horner's
// evaluation of positive terms at t ≥ 0 does not cancel). Working in x itself instead of erfc's
// argument x/√2 avoids the rounded argument (erfc's condition is ≈ x², so a rounded x/√2 would
// cost up to x² ulp): x²/2 is exact as x·x and its FMA residual, halved, and e^{−x²/2} =
// e^{−s}·(1 − s_lo) for s = x²/2 rounded, s_lo its residual.
// The exponential is formed as e^{−s}·2^64 (ExpTimes2PowF), normal down to s = 128, so that
// x·Φ(x) for x ≪ 0 is a normal product rounded once into the subnormal range at the final
// 2^-64 (GELU(x) underflows to −0 only below x ≈ −14.4). s > 128 (|x| > 16): Φ(−t) = 0 in
// f32 for every product with x, and x·0 keeps −0 for finite x and makes −inf·0 = NaN, as the
// reference computes; Φ(t) = 1 there. R is evaluated at min(t, 16) so that P and Q stay finite.
// NaN: s and the exponent are NaN, the lane's Φ(−t) is zeroed and x·… stays NaN.
template <class D, class V>
HWY_INLINE V GeluF(D d, V x) {
  const V t = hn::Min(hn::Abs(x), hn::Set(d, 16.0f));
  const V x2 = hn::Mul(x, x);
  const V x2_lo = TwoProdLo(d, x, x, x2);
  const V neg_s = hn::Mul(x2, hn::Set(d, -0.5f));
  const V sc = hn::Max(neg_s, hn::Set(d, -128.0f));
  // e^{−x²/2}·2^64 = e^{−s}·2^64·(1 − s_lo), s_lo = x2_lo/2; zero beyond the clamp (and NaN).
  const V e64 = ExpTimes2PowF<64>(d, sc);
  const V e = hn::IfThenElseZero(hn::Eq(neg_s, sc),
                                 hn::MulAdd(e64, hn::Mul(x2_lo, hn::Set(d, -0.5f)), e64));
  // R(t) = P(t)/Q(t), the two Horner chains side by side.
  V p = hn::Set(d, 9.530364186502993e-4f);
  V q = hn::Set(d, 2.3889094591140747e-3f);
  p = hn::MulAdd(p, t, hn::Set(d, 1.2250923551619053e-2f));
  q = hn::MulAdd(q, t, hn::Set(d, 3.0708398669958115e-2f));
  p = hn::MulAdd(p, t, hn::Set(d, 7.399705052375793e-2f));
  q = hn::MulAdd(q, t, hn::Set(d, 1.8787582218647003e-1f));
  p = hn::MulAdd(p, t, hn::Set(d, 2.569059133529663e-1f));
  q = hn::MulAdd(q, t, hn::Set(d, 6.746013760566711e-1f));
  p = hn::MulAdd(p, t, hn::Set(d, 5.146387219429016e-1f));
  q = hn::MulAdd(q, t, hn::Set(d, 1.4716763496398926f));
  p = hn::MulAdd(p, t, hn::Set(d, 0.5f));
  q = hn::MulAdd(q, t, hn::Set(d, 1.8271620273590088f));
  q = hn::MulAdd(q, t, hn::Set(d, 1.0f));
  // Φ(−t)·2^64.
  const V tail = hn::Mul(hn::Div(p, q), e);
  const V scale = hn::Set(d, 0x1p-64f);
  // x ≤ 0: (x·Φ(x)·2^64)·2^-64 (±0 keep their sign); x > 0: x − x·Φ(−x), one rounding where
  // MulAdd is fused (the tail's scaling is exact, or the tail is below 2^-126 and x − x·tail =
  // x). The product takes min(x, 16): Φ(−x) = 0 beyond, and +inf − inf·0 would be NaN.
  const V neg = hn::Mul(hn::Mul(x, tail), scale);
  const V pos = hn::NegMulAdd(hn::Min(x, hn::Set(d, 16.0f)), hn::Mul(tail, scale), x);
  return hn::IfThenElse(hn::Le(x, hn::Zero(d)), neg, pos);
}

// GELU-tanh(x) = x·sigmoid(v), v = 2u = 2√(2/π)·(x + 0.044715·x³), as x/(1 + e^{−v}) for every
// v ≥ −88, the form and range handling of SiluF below. v = x·(k1 + k2·x²) in f32 (k1 = 2√(2/π)
// and k2 = 0.044715·k1 rounded, relative error ≤ u = 2^-24 each; x², the FMA of two positive
// terms and the product u each: relative error ≤ 4u, within the policy's 7u argument budget,
// which sigmoid's condition κ = |v|(1 − σ(v)) multiplies: for x < 0 the relative error of e^{−v}
// is |v|·4u ≈ 4u·κ, for x > 0 it enters x/(1 + e^{−v}) damped by e^{−v}/(1 + e^{−v}), again
// 4u·κ). The rest is SiluF's: exp ≈ 1 ulp, 1 + e^{−v} (condition ≤ 1) ½, the quotient ½: ≈ 2 ulp
// plus 4u·κ, against the policy's 4 ulp plus 7u·κ (measured: see the error analysis at the top).
// v < −88 (x < −10.0): x·(e^{v}·2^64)·2^-64 with v clamped at −128 (x ≈ −11.5) and zero below,
// evaluated only when a lane needs it, so that only the last product rounds into the subnormal
// range; below, x·0 keeps −0 and gives NaN for −inf, as the reference computes (v = −inf where x³
// overflows). x = +inf: v = +inf, e^{−87} is taken and inf/(1 + e) = inf. NaN propagates
// through the quotient.
template <class D, class V>
HWY_INLINE V GeluTanhF(D d, V x) {
  const V k1 = hn::Set(d, 1.5957691669464111f);   // 2√(2/π)
  const V k2 = hn::Set(d, 0.07135481387376785f);  // 0.044715·2√(2/π)
  const V v = hn::Mul(x, hn::MulAdd(hn::Mul(x, x), k2, k1));
  const V e = ExpTimes2PowF<0>(d, hn::Max(hn::Neg(v), hn::Set(d, -87.0f)));
  V y = hn::Div(x, hn::Add(hn::Set(d, 1.0f), e));
  const auto deep = hn::Lt(v, hn::Set(d, -88.0f));
  if (HWY_UNLIKELY(!hn::AllFalse(d, deep))) {
    const V vc = hn::Max(v, hn::Set(d, -128.0f));
    const V scaled = hn::IfThenElseZero(hn::Eq(v, vc), ExpTimes2PowF<64>(d, vc));
    y = hn::IfThenElse(deep, hn::Mul(hn::Mul(x, scaled), hn::Set(d, 0x1p-64f)), y);
  }
  return y;
}

// SiLU(x) = x·sigmoid(x) = x/(1 + e^{−x}) for every x ≥ −88: one exponential, one addition and
// one division, no sign select. For x < 0, e^{−x} = e^{|x|} > 1 enters the sum with condition
// e/(1 + e) ≤ 1, so the bound is that of x ≥ 0: exp (≈ 1 ulp) + 1 + e (½) + the quotient (½)
// ≈ 2 ulp where the significands are alike, more where the result's is the larger (2.38 measured,
// see the top), where the stable form x·e^{x}/(1 + e^{x}) rounds once more. The argument −x is
// clamped below at −87 (for x > 87, 1 + e^{−x} = 1 in f32 whatever e^{−x} is), so the exponent
// construction of ExpTimes2PowF stays normal up to −x = 88 (e^88 ≈ 1.7e38 < FLT_MAX).
// x < −88 (e^{−x} overflows; SiLU(x) ≈ x·e^{x} is below 2^-120 and subnormal below x ≈ −91.8):
// x·(e^{x}·2^64)·2^-64, the scaled exponential normal down to x = −128, so that only the last
// product rounds into the subnormal range (e^{x} itself would be subnormal and carry an absolute
// error that the factor |x| ≈ 100 would multiply: 52 ulp at x ≈ −100 in the stable form). Below
// −128 the result rounds to −0 (|x·e^x| < 2^-170), and −inf gives −inf·0 = NaN as the
// reference computes. These lanes are evaluated only when some lane needs them (a lane's value
// never depends on its neighbours). NaN propagates through the quotient.
template <class D, class V>
HWY_INLINE V SiluF(D d, V x) {
  const V e = ExpTimes2PowF<0>(d, hn::Max(hn::Neg(x), hn::Set(d, -87.0f)));
  V y = hn::Div(x, hn::Add(hn::Set(d, 1.0f), e));
  const auto deep = hn::Lt(x, hn::Set(d, -88.0f));
  if (HWY_UNLIKELY(!hn::AllFalse(d, deep))) {
    const V xc = hn::Max(x, hn::Set(d, -128.0f));
    const V scaled = hn::IfThenElseZero(hn::Eq(x, xc), ExpTimes2PowF<64>(d, xc));
    y = hn::IfThenElse(deep, hn::Mul(hn::Mul(x, scaled), hn::Set(d, 0x1p-64f)), y);
  }
  return y;
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
