// ExpNonPosTimes2Pow64F (fast/math-inl.h) on K vectors in lockstep, for the row reductions of
// fast/softmax.cc. Each step of the exponential (range reduction, the degree-4 polynomial, the
// exponent construction) runs on all K vectors before the next step: the same operations on every
// lane as ExpNonPosTimes2Pow64F, so the same values bit for bit (tests/kernels/fast_exp_test.cc checks
// it on every target), with K independent dependency chains side by side. One vector's chain is
// about 40 cycles of latency (ten dependent FMAs, adds and multiplies) for about 15 operations;
// written one vector after another, the out-of-order window of Zen 3 held too few vectors' chains
// to keep its two FMA pipes busy (measured on one AVX2 thread: the softmax term pass 7–8 % faster
// with K = 4).
#if defined(LMO_FAST_EXP_LOCKSTEP_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LMO_FAST_EXP_LOCKSTEP_INL_H_
#undef LMO_FAST_EXP_LOCKSTEP_INL_H_
#else
#define LMO_FAST_EXP_LOCKSTEP_INL_H_
#endif

#include <cstddef>

#include "fast/exp_constants.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// x[k] ← e^{x[k]}·2^64 for x[k] ≤ 0, finite or −inf (no NaN), clamped at −128: exactly
// ExpNonPosTimes2Pow64F(d, x[k]) (error analysis there: ≈ 1 ulp). kClamp = false leaves the
// clamp out, for callers that know every x[k] ≥ −128 (the same values then).
template <bool kClamp = true, size_t K, class D, class V>
HWY_INLINE void ExpNonPosTimes2Pow64Lockstep(D d, V (&x)[K]) {
  namespace c = exp_f32;
  const hn::RebindToSigned<D> di;
  const V magic = hn::Set(d, c::kMagic);
  V t[K], r[K], q[K];
  if constexpr (kClamp) {
    for (size_t k = 0; k < K; ++k) x[k] = hn::Max(x[k], hn::Set(d, -128.0f));
  }
  for (size_t k = 0; k < K; ++k) {
    t[k] = hn::MulAdd(x[k], hn::Set(d, c::kLog2e), magic);
  }
  for (size_t k = 0; k < K; ++k) r[k] = hn::Sub(t[k], magic);  // k = round(x·log2 e)
  for (size_t k = 0; k < K; ++k) x[k] = hn::NegMulAdd(r[k], hn::Set(d, c::kLn2Hi), x[k]);
  for (size_t k = 0; k < K; ++k) r[k] = hn::NegMulAdd(r[k], hn::Set(d, c::kLn2Lo), x[k]);
  for (size_t k = 0; k < K; ++k) {
    q[k] = hn::MulAdd(hn::Set(d, c::kQ4), r[k], hn::Set(d, c::kQ3));
  }
  for (size_t k = 0; k < K; ++k) q[k] = hn::MulAdd(q[k], r[k], hn::Set(d, c::kQ2));
  for (size_t k = 0; k < K; ++k) q[k] = hn::MulAdd(q[k], r[k], hn::Set(d, c::kQ1));
  for (size_t k = 0; k < K; ++k) q[k] = hn::MulAdd(q[k], r[k], hn::Set(d, c::kQ0));
  for (size_t k = 0; k < K; ++k) x[k] = hn::Mul(r[k], r[k]);
  for (size_t k = 0; k < K; ++k) q[k] = hn::Add(hn::MulAdd(x[k], q[k], r[k]), hn::Set(d, 1.0f));
  for (size_t k = 0; k < K; ++k) {
    // t's bits are 0x4B400000 + k; shifted left by 23 the constant part leaves the word.
    const V scale =
        hn::BitCast(d, hn::ShiftLeft<23>(hn::Add(hn::BitCast(di, t[k]), hn::Set(di, 127 + 64))));
    x[k] = hn::Mul(q[k], scale);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#endif  // LMO_FAST_EXP_LOCKSTEP_INL_H_
