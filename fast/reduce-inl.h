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
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Prefetches the next row while the current row's in-cache passes run, spread evenly over
// `steps` calls of step(): the kernels take rows in order, and the hardware prefetcher only
// follows the stream being read, so without it each row's first read waits on memory while the
// compute-bound passes leave the memory idle. A hint only: no value depends on it.
class RowPrefetch {
 public:
  RowPrefetch(const void* next, size_t bytes, size_t steps)
      : p_(static_cast<const char*>(next)),
        lines_(next && steps ? (bytes + kLine - 1) / kLine : 0),
        steps_(steps) {}
  HWY_INLINE void step() {
    acc_ += lines_;
    while (acc_ >= steps_ && lines_) {
      acc_ -= steps_;
      hwy::Prefetch(p_);
      p_ += kLine;
    }
  }

 private:
  static constexpr size_t kLine = 64;
  const char* p_;
  size_t lines_, steps_, acc_ = 0;
};

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

// Two folds of RowFold's shape in one read of the row (each lane's value loaded once; the tail
// is padded separately for each fold). Returns both folds' combined vectors.
template <Storage S, class D, class Step1, class Combine1, class Step2, class Combine2>
HWY_INLINE void RowFold2(D d, const Elem<S>* HWY_RESTRICT x, size_t n, float fill1,
                         hn::Vec<D> init1, const Step1& step1, const Combine1& combine1,
                         float fill2, hn::Vec<D> init2, const Step2& step2,
                         const Combine2& combine2, hn::Vec<D>& out1, hn::Vec<D>& out2) {
  const size_t N = hn::Lanes(d);
  auto a0 = init1, a1 = init1, a2 = init1, a3 = init1;
  auto b0 = init2, b1 = init2, b2 = init2, b3 = init2;
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    const auto v0 = LoadF<S>(d, x + i), v1 = LoadF<S>(d, x + i + N);
    const auto v2 = LoadF<S>(d, x + i + 2 * N), v3 = LoadF<S>(d, x + i + 3 * N);
    a0 = step1(a0, v0);
    a1 = step1(a1, v1);
    a2 = step1(a2, v2);
    a3 = step1(a3, v3);
    b0 = step2(b0, v0);
    b1 = step2(b1, v1);
    b2 = step2(b2, v2);
    b3 = step2(b3, v3);
  }
  for (; i + N <= n; i += N) {
    const auto v = LoadF<S>(d, x + i);
    a0 = step1(a0, v);
    b0 = step2(b0, v);
  }
  if (i < n) {
    a1 = step1(a1, LoadTailF<S>(d, x + i, n - i, fill1));
    b1 = step2(b1, LoadTailF<S>(d, x + i, n - i, fill2));
  }
  out1 = combine1(combine1(a0, a1), combine1(a2, a3));
  out2 = combine2(combine2(b0, b1), combine2(b2, b3));
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

// max |x| and Σ x² in one read (Σ x² as RowSumSquares with scale 1, bit for bit).
template <Storage S, class D>
HWY_INLINE void RowMaxAbsAndSumSquares(D d, const Elem<S>* HWY_RESTRICT x, size_t n, float& amax,
                                       float& sum_squares) {
  hn::Vec<D> m, s;
  RowFold2<S>(
      d, x, n, 0.0f, hn::Zero(d), [](auto a, auto v) { return hn::Max(a, hn::Abs(v)); },
      [](auto a, auto b) { return hn::Max(a, b); }, 0.0f, hn::Zero(d),
      [](auto a, auto v) { return hn::MulAdd(v, v, a); },
      [](auto a, auto b) { return hn::Add(a, b); }, m, s);
  amax = hn::GetLane(hn::MaxOfLanes(d, m));
  sum_squares = hn::GetLane(hn::SumOfLanes(d, s));
}

// max |x| and Σ x in one read (Σ x as RowSum with scale 1, bit for bit).
template <Storage S, class D>
HWY_INLINE void RowMaxAbsAndSum(D d, const Elem<S>* HWY_RESTRICT x, size_t n, float& amax,
                                float& sum) {
  hn::Vec<D> m, s;
  RowFold2<S>(
      d, x, n, 0.0f, hn::Zero(d), [](auto a, auto v) { return hn::Max(a, hn::Abs(v)); },
      [](auto a, auto b) { return hn::Max(a, b); }, 0.0f, hn::Zero(d),
      [](auto a, auto v) { return hn::Add(a, v); }, [](auto a, auto b) { return hn::Add(a, b); }, m,
      s);
  amax = hn::GetLane(hn::MaxOfLanes(d, m));
  sum = hn::GetLane(hn::SumOfLanes(d, s));
}

// Σ t and Σ t² for t = x·scale − mu over the row, in one read; the tail's padding lanes are
// masked out (no padding value gives a zero deviation in general). With mu a rounded mean, Σ t
// is the mean's residual (the corrected two-pass algorithm of Chan, Golub & LeVeque, Amer.
// Stat. 37 (1983)): t is computed nearly exactly (x·scale − mu cancels exactly where x is close
// to mu), so mu + Σt/n is the mean to about the rounding of one deviation.
template <Storage S, class D>
HWY_INLINE void RowDeviationSums(D d, const Elem<S>* HWY_RESTRICT x, size_t n, float scale,
                                 float mu, float& sum, float& sum_squares) {
  const size_t N = hn::Lanes(d);
  const auto vs = hn::Set(d, scale), vmu = hn::Set(d, mu);
  const auto dev = [&](auto v) { return hn::Sub(hn::Mul(v, vs), vmu); };
  const auto add = [](auto a, auto b) { return hn::Add(a, b); };
  const size_t full = n - n % N;
  hn::Vec<D> s1, s2;
  RowFold2<S>(
      d, x, full, 0.0f, hn::Zero(d), [&](auto a, auto v) { return hn::Add(a, dev(v)); }, add, 0.0f,
      hn::Zero(d),
      [&](auto a, auto v) {
        const auto t = dev(v);
        return hn::MulAdd(t, t, a);
      },
      add, s1, s2);
  if (full < n) {
    const auto t =
        hn::IfThenElseZero(hn::FirstN(d, n - full), dev(LoadTailF<S>(d, x + full, n - full, 0.0f)));
    s1 = hn::Add(s1, t);
    s2 = hn::MulAdd(t, t, s2);
  }
  sum = hn::GetLane(hn::SumOfLanes(d, s1));
  sum_squares = hn::GetLane(hn::SumOfLanes(d, s2));
}

// y[i] = fn(x[i], w[i]) over a row; bf16 through the shuffle-free pairs of fast/storage-inl.h
// (elementwise, so the same values as MapBinary; fn runs once per vector of each pair).
template <Storage S, class D, class Fn>
HWY_INLINE void MapRow(D d, const Elem<S>* HWY_RESTRICT x, const Elem<S>* HWY_RESTRICT w,
                       Elem<S>* HWY_RESTRICT y, size_t n, const Fn& fn, bool stream = false) {
  const auto f = [&](D, auto a, auto b) { return fn(a, b); };
  if constexpr (S == Storage::bf16) {
    MapBinaryBf16(d, x, w, y, n, f, stream);
  } else {
    MapBinary<S>(d, x, w, y, n, f, stream);
  }
}

// y[i] = fn(x[i], w[i], b[i]) over a row; bf16 through pairs as MapRow.
template <Storage S, class D, class Fn>
HWY_INLINE void MapRow3(D d, const Elem<S>* HWY_RESTRICT x, const Elem<S>* HWY_RESTRICT w,
                        const Elem<S>* HWY_RESTRICT b, Elem<S>* HWY_RESTRICT y, size_t n,
                        const Fn& fn, bool stream = false) {
  size_t i = 0;
#if LMO_FAST_BF16_PAIRS
  if constexpr (S == Storage::bf16) {
    i = StoreBf16Pairs(d, y, n, stream, [&](size_t j) {
      hn::Vec<D> xe, xo, we, wo, be, bo;
      LoadBf16Pair(d, x + j, xe, xo);
      LoadBf16Pair(d, w + j, we, wo);
      LoadBf16Pair(d, b + j, be, bo);
      return Bf16Pair(d, fn(xe, we, be), fn(xo, wo, bo));
    });
  }
#endif
  // The rest (all of it but in bf16 with pairs); streaming only where no pairs ran.
  const size_t k = StoreVectors<S>(d, y + i, n - i, stream && i == 0, [&](size_t j) {
    return fn(LoadF<S>(d, x + i + j), LoadF<S>(d, w + i + j), LoadF<S>(d, b + i + j));
  });
  i += k;
  if (i < n) {
    const size_t t = n - i;
    const auto v = fn(LoadTailF<S>(d, x + i, t, 0.0f), LoadTailF<S>(d, w + i, t, 0.0f),
                      LoadTailF<S>(d, b + i, t, 0.0f));
    StoreTailF<S>(d, v, y + i, t);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#endif  // LMO_FAST_REDUCE_INL_H_
