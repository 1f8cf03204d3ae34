// Per-target row reductions and row maps shared by the row-wise kernels (norms, softmax,
// cross-entropy). A reduction keeps four vector accumulators over consecutive vectors, folds the
// tail in through a padded vector (padding neutral for the step), then combines
// (a0 + a1) + (a2 + a3) and the lanes: a fixed order per target, independent of threads.
#if defined(LMO_FAST_REDUCE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LMO_FAST_REDUCE_INL_H_
#undef LMO_FAST_REDUCE_INL_H_
#else
#define LMO_FAST_REDUCE_INL_H_
#endif

#include <cstddef>

#include "fast/storage-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Folds step(acc, v) over the row; `fill` pads the tail, `combine` merges accumulators.
template <Storage S, class D, class Step, class Combine>
HWY_INLINE hn::Vec<D> RowFold(D d, const Elem<S>* HWY_RESTRICT x, size_t n, float fill,
                              hn::Vec<D> init, const Step& step, const Combine& combine) {
  const size_t N = hn::Lanes(d);
  auto a0 = init, a1 = init, a2 = init, a3 = init;
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    a0 = step(a0, LoadF<S>(d, x + i));
    a1 = step(a1, LoadF<S>(d, x + i + N));
    a2 = step(a2, LoadF<S>(d, x + i + 2 * N));
    a3 = step(a3, LoadF<S>(d, x + i + 3 * N));
  }
  for (; i + N <= n; i += N) a0 = step(a0, LoadF<S>(d, x + i));
  if (i < n) a1 = step(a1, LoadTailF<S>(d, x + i, n - i, fill));
  return combine(combine(a0, a1), combine(a2, a3));
}

template <Storage S, class D>
HWY_INLINE float RowMaxAbs(D d, const Elem<S>* HWY_RESTRICT x, size_t n) {
  // NaN lanes are ignored here (Max keeps the other operand on x86; the callers only use the
  // result to choose a scale, and NaN rows come out NaN anyway).
  const auto m = RowFold<S>(
      d, x, n, 0.0f, hn::Zero(d), [](auto a, auto v) { return hn::Max(a, hn::Abs(v)); },
      [](auto a, auto b) { return hn::Max(a, b); });
  return hn::GetLane(hn::MaxOfLanes(d, m));
}

// Σ (x·scale)².
template <Storage S, class D>
HWY_INLINE float RowSumSquares(D d, const Elem<S>* HWY_RESTRICT x, size_t n, float scale) {
  const auto vs = hn::Set(d, scale);
  const auto s = RowFold<S>(
      d, x, n, 0.0f, hn::Zero(d),
      [&](auto a, auto v) {
        const auto t = hn::Mul(v, vs);
        return hn::MulAdd(t, t, a);
      },
      [](auto a, auto b) { return hn::Add(a, b); });
  return hn::GetLane(hn::SumOfLanes(d, s));
}

// Σ x·scale.
template <Storage S, class D>
HWY_INLINE float RowSum(D d, const Elem<S>* HWY_RESTRICT x, size_t n, float scale) {
  const auto vs = hn::Set(d, scale);
  const auto s = RowFold<S>(
      d, x, n, 0.0f, hn::Zero(d), [&](auto a, auto v) { return hn::MulAdd(v, vs, a); },
      [](auto a, auto b) { return hn::Add(a, b); });
  return hn::GetLane(hn::SumOfLanes(d, s));
}

// Σ (x·scale − mu)² over the row; the tail's padding lanes are masked out (no padding value
// gives a zero deviation in general).
template <Storage S, class D>
HWY_INLINE float RowSumSquaredDeviations(D d, const Elem<S>* HWY_RESTRICT x, size_t n,
                                         float scale, float mu) {
  const size_t N = hn::Lanes(d);
  const auto vs = hn::Set(d, scale), vmu = hn::Set(d, mu);
  const auto step = [&](auto a, auto v) {
    const auto t = hn::Sub(hn::Mul(v, vs), vmu);
    return hn::MulAdd(t, t, a);
  };
  const size_t full = n - n % N;
  auto s = RowFold<S>(d, x, full, 0.0f, hn::Zero(d), step,
                      [](auto a, auto b) { return hn::Add(a, b); });
  if (full < n) {
    const auto t = hn::Sub(hn::Mul(LoadTailF<S>(d, x + full, n - full, 0.0f), vs), vmu);
    s = hn::Add(s, hn::IfThenElseZero(hn::FirstN(d, n - full), hn::Mul(t, t)));
  }
  return hn::GetLane(hn::SumOfLanes(d, s));
}

// y[i] = fn(x[i], w[i]) over a row.
template <Storage S, class D, class Fn>
HWY_INLINE void MapRow(D d, const Elem<S>* HWY_RESTRICT x, const Elem<S>* HWY_RESTRICT w,
                       Elem<S>* HWY_RESTRICT y, size_t n, const Fn& fn) {
  MapBinary<S>(d, x, w, y, n, [&](D, auto a, auto b) { return fn(a, b); });
}

// y[i] = fn(x[i], w[i], b[i]) over a row.
template <Storage S, class D, class Fn>
HWY_INLINE void MapRow3(D d, const Elem<S>* HWY_RESTRICT x, const Elem<S>* HWY_RESTRICT w,
                        const Elem<S>* HWY_RESTRICT b, Elem<S>* HWY_RESTRICT y, size_t n,
                        const Fn& fn) {
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    StoreF<S>(d, fn(LoadF<S>(d, x + i), LoadF<S>(d, w + i), LoadF<S>(d, b + i)), y + i);
  }
  if (i < n) {
    const size_t k = n - i;
    const auto v = fn(LoadTailF<S>(d, x + i, k, 0.0f), LoadTailF<S>(d, w + i, k, 0.0f),
                      LoadTailF<S>(d, b + i, k, 0.0f));
    StoreTailF<S>(d, v, y + i, k);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#endif  // LMO_FAST_REDUCE_INL_H_
