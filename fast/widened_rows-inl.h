// Per-target helpers of the bf16 norms: a row widened once to f32 scratch, so that the passes
// over it (reductions, then the output) convert each value once, and weights shared by every row
// widened once per call.
//
// Layout: each whole block of 2·Lanes(d) values is stored as the block's values at even
// positions, then those at odd positions (LoadBf16Pair's split: a shift or a mask, no shuffles);
// the rest of the row in element order, the last partial vector padded with zeros. The norms
// only sum over a row or map it elementwise, so the layout fixes the order of the f32 lane sums
// (a fixed order per target, as RowFold's, independent of threads) and changes no output
// value's formula; StoreWidenedRow puts every result back at its element's position.
//
// Only where bf16 pairs exist (LMO_FAST_BF16_PAIRS, fast/storage-inl.h).
#if defined(LMO_FAST_WIDENED_ROWS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LMO_FAST_WIDENED_ROWS_INL_H_
#undef LMO_FAST_WIDENED_ROWS_INL_H_
#else
#define LMO_FAST_WIDENED_ROWS_INL_H_
#endif

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fast/reduce-inl.h"
#include "fast/storage-inl.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if LMO_FAST_BF16_PAIRS

// f32 values a widened row or weight vector needs: n plus the padding of one vector.
inline size_t WidenedSize(size_t n) { return n + HWY_MAX_BYTES / sizeof(float); }

// A per-thread widened row of WidenedSize(n) floats, reused row after row (it stays in L1/L2).
inline float* WidenedScratch(size_t n) {
  thread_local std::vector<float> row;
  if (row.size() < WidenedSize(n)) row.resize(WidenedSize(n));
  return row.data();
}

// Widens the bf16 row x[0, n) into w (the layout above) and folds step1 and step2 over its
// values in the same read, as RowFold2 does (four accumulators each, over consecutive vectors of
// the layout; a last pair of vectors goes to a0 and a1, a last vector to a2, the padded tail to
// a3; combined (a0 + a1) + (a2 + a3)). The padding lanes are 0, which must be neutral for both
// steps (max |x|, Σ x, Σ x²). prefetch steps once per group of four vectors.
template <class D, class Step1, class Combine1, class Step2, class Combine2>
HWY_INLINE void WidenFold2(D d, const uint16_t* HWY_RESTRICT x, size_t n, float* HWY_RESTRICT w,
                           RowPrefetch& prefetch, const Step1& step1, const Combine1& combine1,
                           const Step2& step2, const Combine2& combine2, hn::Vec<D>& out1,
                           hn::Vec<D>& out2) {
  const size_t N = hn::Lanes(d);
  auto a0 = hn::Zero(d), a1 = a0, a2 = a0, a3 = a0;
  auto b0 = a0, b1 = a0, b2 = a0, b3 = a0;
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    prefetch.step();
    hn::Vec<D> e0, o0, e1, o1;
    LoadBf16Pair(d, x + i, e0, o0);
    LoadBf16Pair(d, x + i + 2 * N, e1, o1);
    hn::StoreU(e0, d, w + i);
    hn::StoreU(o0, d, w + i + N);
    hn::StoreU(e1, d, w + i + 2 * N);
    hn::StoreU(o1, d, w + i + 3 * N);
    a0 = step1(a0, e0);
    a1 = step1(a1, o0);
    a2 = step1(a2, e1);
    a3 = step1(a3, o1);
    b0 = step2(b0, e0);
    b1 = step2(b1, o0);
    b2 = step2(b2, e1);
    b3 = step2(b3, o1);
  }
  if (i + 2 * N <= n) {
    hn::Vec<D> e, o;
    LoadBf16Pair(d, x + i, e, o);
    hn::StoreU(e, d, w + i);
    hn::StoreU(o, d, w + i + N);
    a0 = step1(a0, e);
    a1 = step1(a1, o);
    b0 = step2(b0, e);
    b1 = step2(b1, o);
    i += 2 * N;
  }
  if (i + N <= n) {
    const auto v = LoadF<Storage::bf16>(d, x + i);
    hn::StoreU(v, d, w + i);
    a2 = step1(a2, v);
    b2 = step2(b2, v);
    i += N;
  }
  if (i < n) {
    const auto v = LoadTailF<Storage::bf16>(d, x + i, n - i, 0.0f);
    hn::StoreU(v, d, w + i);
    a3 = step1(a3, v);
    b3 = step2(b3, v);
  }
  out1 = combine1(combine1(a0, a1), combine1(a2, a3));
  out2 = combine2(combine2(b0, b1), combine2(b2, b3));
}

// Widens x into w and returns max |x| (NaN lanes ignored, as RowMaxAbs) and Σ x (or Σ x² with
// kSquares), in f32 lanes.
template <bool kSquares, class D>
HWY_INLINE void WidenMaxAbsAndSum(D d, const uint16_t* HWY_RESTRICT x, size_t n,
                                  float* HWY_RESTRICT w, RowPrefetch& prefetch, float& amax,
                                  float& sum) {
  hn::Vec<D> m, s;
  WidenFold2(
      d, x, n, w, prefetch, [](auto a, auto v) { return hn::Max(a, hn::Abs(v)); },
      [](auto a, auto b) { return hn::Max(a, b); },
      [](auto a, auto v) {
        if constexpr (kSquares) {
          return hn::MulAdd(v, v, a);
        } else {
          return hn::Add(a, v);
        }
      },
      [](auto a, auto b) { return hn::Add(a, b); }, m, s);
  amax = hn::GetLane(hn::MaxOfLanes(d, m));
  sum = hn::GetLane(hn::SumOfLanes(d, s));
}

// RowPrefetch steps of a row's WidenFold2 and StoreWidenedRow together (one per group of four
// vectors in the first, one per block in the second).
template <class D>
size_t WidenedRowSteps(D d, size_t n) {
  return n / (4 * hn::Lanes(d)) + n / (2 * hn::Lanes(d));
}

// A weight vector shared by every row (γ, β, or 1 + γ formed in f32), widened once per call, with
// the bound the NaN-free output path needs.
struct WidenedWeights {
  std::vector<float> w;
  float max_abs = 0.0f;  // max |w|; inf when some w is not finite
};

template <class D>
WidenedWeights WidenWeights(D d, const uint16_t* HWY_RESTRICT x, size_t n, bool one_plus) {
  WidenedWeights r;
  r.w.resize(WidenedSize(n));
  float amax = 0.0f, sum = 0.0f;
  RowPrefetch none(nullptr, 0, 0);
  WidenMaxAbsAndSum<false>(d, x, n, r.w.data(), none, amax, sum);
  if (one_plus) {
    // 1 + γ in f32, as the unwidened kernels form it per element (one IEEE addition).
    const auto one = hn::Set(d, 1.0f);
    for (size_t i = 0; i < n; i += hn::Lanes(d)) {
      hn::StoreU(hn::Add(one, hn::LoadU(d, r.w.data() + i)), d, r.w.data() + i);
    }
    RowMaxAbsAndSum<Storage::f32>(d, r.w.data(), n, amax, sum);
  }
  // Σ w is NaN or inf when some w is (max |w| skips NaN); a finite Σ means every w is finite.
  r.max_abs = std::isfinite(sum) && std::isfinite(amax) ? amax : INFINITY;
  return r;
}

// Whether outputs bounded by `bound` (the largest |value| a row's results can reach, from finite
// row statistics) are surely not NaN: every input and intermediate finite, far from overflow (a
// factor 4 below FLT_MAX covers the f32 roundings of the few operations in between), so no
// inf − inf or 0·inf arises.
inline bool NaNFree(double bound) { return bound < 0x1p126; }

// bf16 round-to-nearest-even for values known not to be NaN: Bf16HighFromF32 without the NaN
// branch (an inf keeps its pattern: the carry never reaches its exponent), three operations
// fewer per vector.
template <class D>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> Bf16HighFromNonNaN(D /*d*/, hn::Vec<D> f) {
  const hn::RebindToUnsigned<D> du;
  const auto b = hn::BitCast(du, f);
  const auto lsb = hn::And(hn::ShiftRight<16>(b), hn::Set(du, 1u));
  return hn::Add(hn::Add(b, hn::Set(du, 0x7FFFu)), lsb);
}

// Bf16Pair with Bf16HighFromNonNaN.
template <class D>
HWY_INLINE hn::Vec<Bf16PairTag<D>> Bf16PairNonNaN(D d, hn::Vec<D> even, hn::Vec<D> odd) {
  const Bf16PairTag<D> d16;
  return hn::OddEven(hn::BitCast(d16, Bf16HighFromNonNaN(d, odd)),
                     hn::BitCast(d16, hn::ShiftRight<16>(Bf16HighFromNonNaN(d, even))));
}

// y[0, n) = at(j) for the widened layout's positions j (at(j): the f32 results for positions
// [j, j + Lanes(d)) of the layout), rounded to bf16 at the elements' positions; kNonNaN: the
// results are known not to be NaN (NaNFree). Prefetches `next` (the next row's input, or null)
// as it goes (RowPrefetch).
//
// stream: as StoreVectors (see StreamStart), ordinary stores up to the first line boundary, then
// whole lines streamed, each line's stores back to back (a line left partial goes to memory in
// pieces), the rest ordinary. A block's 2·Lanes(d) values are one vector stored at y + j, j a
// multiple of the block, so every block has y's alignment modulo the block's bytes: at 0 blocks
// stream whole; at half of it (malloc's usual 16 bytes with 32-byte blocks) each line is the
// second half of one block, whole blocks and the first half of another, streamed as halves; at
// any other alignment (or where halves are narrower than x86's streaming stores) nothing streams.
template <bool kNonNaN, class D, class At>
HWY_INLINE void StoreWidenedRow(D d, uint16_t* HWY_RESTRICT y, size_t n, RowPrefetch& prefetch,
                                const At& at, bool stream) {
  const Bf16PairTag<D> d16;
  const size_t N = hn::Lanes(d), M = hn::Lanes(d16);
  const auto block = [&](size_t j) {
    prefetch.step();
    const auto even = at(j);
    const auto odd = at(j + N);
    if constexpr (kNonNaN) {
      return Bf16PairNonNaN(d, even, odd);
    } else {
      return Bf16Pair(d, even, odd);
    }
  };
  size_t j = 0;
#if HWY_TARGET <= HWY_AVX2
  constexpr size_t kLine = 64;
  const size_t start = StreamStart<Storage::bf16>(d, y, n, stream);
  const size_t bytes = M * sizeof(uint16_t);
  const size_t align = reinterpret_cast<uintptr_t>(y) % bytes;
  const size_t per_line = kLine / bytes;  // blocks per line (StreamStart: bytes divides a line)
  const bool halves = align == bytes / 2 && (bytes / 2) % HWY_STREAM_MULTIPLE == 0;
  if (start < n && align == 0) {
    for (; j < start; j += M) hn::StoreU(block(j), d16, y + j);
    for (; j + per_line * M <= n; j += per_line * M) {
      for (size_t k = 0; k < per_line; ++k) hn::Stream(block(j + k * M), d16, y + j + k * M);
    }
    hwy::FlushStream();
  } else if (start < n && halves) {
    const hn::Half<decltype(d16)> dh;
    // The block holding the first line boundary starts N values before it.
    for (; j + N < start; j += M) hn::StoreU(block(j), d16, y + j);
    auto v = block(j);
    hn::StoreU(hn::LowerHalf(dh, v), dh, y + j);
    auto carry = hn::UpperHalf(dh, v);  // the second half, for y + j + N = y + start
    j += M;
    // Line [j − N, j − N + per_line·M): carry, per_line − 1 whole blocks, a first half.
    for (; j + per_line * M <= n; j += per_line * M) {
      hn::Stream(carry, dh, y + j - N);
      for (size_t k = 0; k + 1 < per_line; ++k) {
        v = block(j + k * M);
        hn::Stream(hn::LowerHalf(dh, v), dh, y + j + k * M);
        hn::Stream(hn::UpperHalf(dh, v), dh, y + j + k * M + N);
      }
      v = block(j + (per_line - 1) * M);
      hn::Stream(hn::LowerHalf(dh, v), dh, y + j + (per_line - 1) * M);
      carry = hn::UpperHalf(dh, v);
    }
    hn::StoreU(carry, dh, y + j - N);  // starts the last, partial line: ordinary stores
    hwy::FlushStream();
  }
#else
  (void)stream;
#endif
  for (; j + M <= n; j += M) hn::StoreU(block(j), d16, y + j);
  for (; j + N <= n; j += N) StoreF<Storage::bf16>(d, at(j), y + j);
  if (j < n) StoreTailF<Storage::bf16>(d, at(j), y + j, n - j);
}

#endif  // LMO_FAST_BF16_PAIRS

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#endif  // LMO_FAST_WIDENED_ROWS_INL_H_
