// Per-target SIMD helpers shared by every fast kernel family: loads of a storage format into f32
// vectors and rounded stores back (the vector twins of fast/storage.h, bit for bit the same
// results), whole-array loops whose tail runs through the same vector code (so an element's
// result never depends on where a chunk or row ends), and the storage dispatch.
//
// Included once per Highway target (the toggle guard below) from a kernel .cc after
// foreach_target.h.
#if defined(LMO_FAST_STORAGE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LMO_FAST_STORAGE_INL_H_
#undef LMO_FAST_STORAGE_INL_H_
#else
#define LMO_FAST_STORAGE_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "fast/storage.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <Storage S>
using Elem = std::conditional_t<S == Storage::f32, float, uint16_t>;

template <Storage S>
using StorageTag = std::integral_constant<Storage, S>;

// Calls f(StorageTag<s>{}) so that kernels are compiled once per storage format.
template <class F>
HWY_INLINE void WithStorage(Storage s, F&& f) {
  switch (s) {
    case Storage::f32:
      f(StorageTag<Storage::f32>{});
      return;
    case Storage::bf16:
      f(StorageTag<Storage::bf16>{});
      return;
    case Storage::f16:
      f(StorageTag<Storage::f16>{});
      return;
  }
}

// The f16 conversions of fast/storage.h on vectors (used where the target has no F16C).
template <class D>
HWY_INLINE hn::Vec<D> F32FromF16Bits(D d, hn::Vec<hn::RebindToUnsigned<D>> h) {
  const hn::RebindToUnsigned<D> du;
  const auto shifted_exp = hn::Set(du, 0x7C00u << 13);
  auto o = hn::ShiftLeft<13>(hn::And(h, hn::Set(du, 0x7FFFu)));
  const auto exp = hn::And(o, shifted_exp);
  o = hn::Add(o, hn::Set(du, (127u - 15u) << 23));
  const auto inf_nan = hn::Add(o, hn::Set(du, (128u - 16u) << 23));
  const auto sub = hn::BitCast(
      du, hn::Sub(hn::BitCast(d, hn::Add(o, hn::Set(du, 1u << 23))),
                  hn::BitCast(d, hn::Set(du, 113u << 23))));
  o = hn::IfThenElse(hn::Eq(exp, shifted_exp), inf_nan, o);
  o = hn::IfThenElse(hn::Eq(exp, hn::Zero(du)), sub, o);
  return hn::BitCast(d, hn::Or(o, hn::ShiftLeft<16>(hn::And(h, hn::Set(du, 0x8000u)))));
}

template <class D>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> F16BitsFromF32(D d, hn::Vec<D> f) {
  // Comparisons run on the sign-cleared pattern as int32 (SSE4 has no unsigned compares).
  const hn::RebindToUnsigned<D> du;
  const hn::RebindToSigned<D> di;
  auto u = hn::BitCast(du, f);
  const auto sign = hn::And(u, hn::Set(du, 0x80000000u));
  u = hn::Xor(u, sign);
  const auto ui = hn::BitCast(di, u);
  const auto big = hn::IfThenElse(hn::RebindMask(du, hn::Gt(ui, hn::Set(di, 0x7F800000))),
                                  hn::Set(du, 0x7E00u), hn::Set(du, 0x7C00u));
  const auto magic = hn::Set(du, 126u << 23);
  const auto small =
      hn::Sub(hn::BitCast(du, hn::Add(hn::BitCast(d, u), hn::BitCast(d, magic))), magic);
  const auto odd = hn::And(hn::ShiftRight<13>(u), hn::Set(du, 1u));
  const auto normal = hn::ShiftRight<13>(
      hn::Add(hn::Add(u, hn::Set(du, ((15u - 127u) << 23) + 0xFFFu)), odd));
  auto o = hn::IfThenElse(hn::RebindMask(du, hn::Lt(ui, hn::Set(di, 113 << 23))), small, normal);
  o = hn::IfThenElse(hn::RebindMask(du, hn::Gt(ui, hn::Set(di, ((127 + 16) << 23) - 1))), big, o);
  return hn::Or(o, hn::ShiftRight<16>(sign));
}

// bf16 pattern of f rounded to nearest-even (fast/storage.h bf16_from_f32) in the high half of
// each 32-bit lane; the low half is what the rounding left there (callers shift it out, or blend
// it away where two vectors merge). Adding 0x7FFF plus the kept lsb carries into the kept half
// exactly when the dropped half is above the midpoint or at it with an odd kept half. A NaN takes
// the other branch: the carry could turn it into inf (payload only in the dropped half) or a zero
// (all-ones payload), so it keeps its sign and upper payload, quieted.
template <class D>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> Bf16HighFromF32(D /*d*/, hn::Vec<D> f) {
  const hn::RebindToUnsigned<D> du;
  const auto b = hn::BitCast(du, f);
  const auto lsb = hn::And(hn::ShiftRight<16>(b), hn::Set(du, 1u));
  const auto rounded = hn::Add(hn::Add(b, hn::Set(du, 0x7FFFu)), lsb);
  const auto quiet = hn::Or(b, hn::Set(du, 0x00400000u));
  return hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(f)), quiet, rounded);
}

// bf16 pattern of f rounded to nearest-even, in the low half of 32-bit lanes (high half zero).
template <class D>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> Bf16BitsFromF32(D d, hn::Vec<D> f) {
  return hn::ShiftRight<16>(Bf16HighFromF32(d, f));
}

// Lanes(d) elements at p, as f32.
template <Storage S, class D>
HWY_INLINE hn::Vec<D> LoadF(D d, const Elem<S>* HWY_RESTRICT p) {
  if constexpr (S == Storage::f32) {
    return hn::LoadU(d, p);
  } else {
    const hn::Rebind<uint16_t, D> d16;
    const hn::RebindToUnsigned<D> du;
    const auto h = hn::PromoteTo(du, hn::LoadU(d16, p));
    if constexpr (S == Storage::bf16) {
      return hn::BitCast(d, hn::ShiftLeft<16>(h));
    } else {
#if HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)
      // F16C's vcvtph2ps: exact, including subnormals, inf and NaN.
      const hn::Rebind<hwy::float16_t, D> df16;
      return hn::PromoteTo(d, hn::LoadU(df16, reinterpret_cast<const hwy::float16_t*>(p)));
#else
      return F32FromF16Bits(d, h);
#endif
    }
  }
}

// Stores Lanes(d) elements of v, rounded to nearest-even in S.
template <Storage S, class D>
HWY_INLINE void StoreF(D d, hn::Vec<D> v, Elem<S>* HWY_RESTRICT p) {
  if constexpr (S == Storage::f32) {
    hn::StoreU(v, d, p);
  } else {
    const hn::Rebind<uint16_t, D> d16;
    const hn::RebindToSigned<D> di;
    if constexpr (S == Storage::bf16) {
      hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, Bf16BitsFromF32(d, v))), d16, p);
    } else {
#if HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)
      // F16C's vcvtps2ph with an immediate rounding mode of 0: round to nearest-even.
      const hn::Rebind<hwy::float16_t, D> df16;
      hn::StoreU(hn::DemoteTo(df16, v), df16, reinterpret_cast<hwy::float16_t*>(p));
#else
      hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, F16BitsFromF32(d, v))), d16, p);
#endif
    }
  }
}

// Outputs of at least this many bytes per call are written with non-temporal (streaming)
// stores: far beyond the last-level cache an ordinary store first reads the line it writes
// (read-for-ownership), a third of the traffic for nothing, and the output evicts the input's
// lines; a streamed line goes to memory without that read, as memcpy does at these sizes. Below
// it the output stays in cache for its consumer. Only where bytes go changes, never a value.
inline constexpr size_t kStreamBytes = size_t{16} << 20;

// StoreF with a non-temporal store; p is aligned to the stored vector's bytes (see
// StreamStart). hwy::FlushStream() must follow the last one before the output is handed over.
template <Storage S, class D>
HWY_INLINE void StreamF(D d, hn::Vec<D> v, Elem<S>* HWY_RESTRICT p) {
  if constexpr (S == Storage::f32) {
    hn::Stream(v, d, p);
  } else {
    const hn::Rebind<uint16_t, D> d16;
    const hn::RebindToSigned<D> di;
    if constexpr (S == Storage::bf16) {
      hn::Stream(hn::DemoteTo(d16, hn::BitCast(di, Bf16BitsFromF32(d, v))), d16, p);
    } else {
#if HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)
      const hn::Rebind<hwy::float16_t, D> df16;
      hn::Stream(hn::DemoteTo(df16, v), df16, reinterpret_cast<hwy::float16_t*>(p));
#else
      hn::Stream(hn::DemoteTo(d16, hn::BitCast(di, F16BitsFromF32(d, v))), d16, p);
#endif
    }
  }
}

// Where a streamed loop over y[0, n) starts: the first index i with y + i on a 64-byte cache
// line boundary (elements before it take ordinary stores), or n when the loop cannot stream: no
// streaming asked, fewer than eight vectors, a stored vector narrower than the 16 bytes that
// x86's streaming stores always write or not dividing a line, or y not aligned to its element.
template <Storage S, class D>
HWY_INLINE size_t StreamStart(D d, const Elem<S>* y, size_t n, bool stream) {
  constexpr size_t kLine = 64;
  const size_t N = hn::Lanes(d);
  const size_t vec_bytes = N * sizeof(Elem<S>);
  if (!stream || n < 8 * N || vec_bytes % HWY_STREAM_MULTIPLE != 0 || kLine % vec_bytes != 0) {
    return n;
  }
  const size_t mis = reinterpret_cast<uintptr_t>(y) % kLine;
  if (mis % sizeof(Elem<S>) != 0) return n;
  return mis == 0 ? 0 : (kLine - mis) / sizeof(Elem<S>);
}

// The first count (< Lanes(d)) elements at p, the other lanes set to fill.
template <Storage S, class D>
HWY_INLINE hn::Vec<D> LoadTailF(D d, const Elem<S>* HWY_RESTRICT p, size_t count, float fill) {
  constexpr size_t kMax = HWY_MAX_BYTES / sizeof(float);
  HWY_ALIGN Elem<S> buf[kMax];
  const Elem<S> f = std::is_same_v<Elem<S>, float>
                        ? static_cast<Elem<S>>(fill)
                        : static_cast<Elem<S>>(S == Storage::bf16 ? bf16_from_f32(fill)
                                                                  : f16_from_f32(fill));
  for (size_t i = 0; i < kMax; ++i) buf[i] = f;
  std::memcpy(buf, p, count * sizeof(Elem<S>));
  return LoadF<S>(d, buf);
}

// Stores the first count (< Lanes(d)) lanes of v.
template <Storage S, class D>
HWY_INLINE void StoreTailF(D d, hn::Vec<D> v, Elem<S>* HWY_RESTRICT p, size_t count) {
  constexpr size_t kMax = HWY_MAX_BYTES / sizeof(float);
  HWY_ALIGN Elem<S> buf[kMax];
  StoreF<S>(d, v, buf);
  std::memcpy(p, buf, count * sizeof(Elem<S>));
}

// bf16 elementwise maps without shuffles: one full vector of 2·Lanes(d) bf16 values splits into
// the values at even positions (low halves shifted up) and at odd positions (high halves
// masked), each an exact f32 vector, and two rounded results merge back the same way. Only
// positions within the pair change, never a value: an elementwise fn gives every element the
// result MapUnary/MapBinary give it. The widening and narrowing shuffles of LoadF/StoreF (half
// of the vector work of a cheap elementwise op in bf16) disappear. Where a u16 vector does not
// hold twice the f32 lanes (HWY_SCALAR: one lane of any type), the plain maps run.
#undef LMO_FAST_BF16_PAIRS
#if HWY_TARGET == HWY_SCALAR
#define LMO_FAST_BF16_PAIRS 0
#else
#define LMO_FAST_BF16_PAIRS 1
template <class D>
using Bf16PairTag = hn::Repartition<uint16_t, D>;

template <class D>
HWY_INLINE void LoadBf16Pair(D d, const uint16_t* HWY_RESTRICT p, hn::Vec<D>& even,
                             hn::Vec<D>& odd) {
  const hn::RebindToUnsigned<D> du;
  const auto w = hn::BitCast(du, hn::LoadU(Bf16PairTag<D>(), p));
  even = hn::BitCast(d, hn::ShiftLeft<16>(w));
  odd = hn::BitCast(d, hn::And(w, hn::Set(du, 0xFFFF0000u)));
}

// The rounded even values go to the low halves, the odd ones stay in the high halves: one 16-bit
// blend (OddEven) merges them, with no shift back for the odd half.
template <class D>
HWY_INLINE hn::Vec<Bf16PairTag<D>> Bf16Pair(D d, hn::Vec<D> even, hn::Vec<D> odd) {
  const Bf16PairTag<D> d16;
  return hn::OddEven(hn::BitCast(d16, Bf16HighFromF32(d, odd)),
                     hn::BitCast(d16, Bf16BitsFromF32(d, even)));
}

// The rounded values of two consecutive vectors (lo: the first Lanes(d) elements) as one vector
// of bf16 in element order: the rounded patterns stay in the high halves and one ConcatOdd packs
// them (AVX2: two shifts, one pack and one lane permute for 2·Lanes(d) values, where StoreF takes
// a shift, a pack and a permute per Lanes(d)). For results that must stay in element order (row
// passes whose vectors come from an ordered reduction), where pairs would reorder them.
template <class D>
HWY_INLINE hn::Vec<Bf16PairTag<D>> Bf16Ordered(D d, hn::Vec<D> lo, hn::Vec<D> hi) {
  const Bf16PairTag<D> d16;
  return hn::ConcatOdd(d16, hn::BitCast(d16, Bf16HighFromF32(d, hi)),
                       hn::BitCast(d16, Bf16HighFromF32(d, lo)));
}

// y[i] = pair(j) for whole pairs of vectors (at(j): the packed results for y[j, j + 2·Lanes(d))),
// streamed as StoreVectors does. Returns the index it stopped at.
template <class D, class At>
HWY_INLINE size_t StoreBf16Pairs(D d, uint16_t* HWY_RESTRICT y, size_t n, bool stream,
                                 const At& at) {
  const Bf16PairTag<D> d16;
  const size_t M = hn::Lanes(d16);
  size_t i = StreamStart<Storage::bf16>(d, y, n, stream);
  // StreamStart's conditions on Lanes(d) f32 lanes hold for the pairs too (2·Lanes(d) bf16 values
  // are twice the bytes and still divide a line where x86 streams). The head's last ordinary
  // store may overlap the first streamed one (the same values twice), as in StoreVectors.
  if (i < n && 64 % (M * sizeof(uint16_t)) == 0) {
    for (size_t j = 0; j < i; j += M) hn::StoreU(at(j), d16, y + j);
    for (; i + 4 * M <= n; i += 4 * M) {
      const auto v0 = at(i), v1 = at(i + M), v2 = at(i + 2 * M), v3 = at(i + 3 * M);
      hn::Stream(v0, d16, y + i);
      hn::Stream(v1, d16, y + i + M);
      hn::Stream(v2, d16, y + i + 2 * M);
      hn::Stream(v3, d16, y + i + 3 * M);
    }
    hwy::FlushStream();
  } else {
    i = 0;
  }
  for (; i + M <= n; i += M) hn::StoreU(at(i), d16, y + i);
  return i;
}
#endif  // HWY_TARGET == HWY_SCALAR

// y[i] = at(i) for i < n − n % Lanes(d), one vector at a time: with stream (see StreamStart),
// ordinary stores up to the first line boundary (the last may overlap it, writing the same
// values twice), then groups of four vectors computed first and streamed back to back, so that
// each line's streamed stores are adjacent and fill the write-combining buffer at once (a line
// left partial, e.g. by stores spread over a long computation, goes to memory in pieces).
// Returns the index it stopped at.
template <Storage S, class D, class At>
HWY_INLINE size_t StoreVectors(D d, Elem<S>* HWY_RESTRICT y, size_t n, bool stream, const At& at) {
  const size_t N = hn::Lanes(d);
  size_t i = StreamStart<S>(d, y, n, stream);
  if (i < n) {
    for (size_t j = 0; j < i; j += N) StoreF<S>(d, at(j), y + j);
    for (; i + 4 * N <= n; i += 4 * N) {
      const auto v0 = at(i), v1 = at(i + N), v2 = at(i + 2 * N), v3 = at(i + 3 * N);
      StreamF<S>(d, v0, y + i);
      StreamF<S>(d, v1, y + i + N);
      StreamF<S>(d, v2, y + i + 2 * N);
      StreamF<S>(d, v3, y + i + 3 * N);
    }
    hwy::FlushStream();
  } else {
    i = 0;
  }
  for (; i + N <= n; i += N) StoreF<S>(d, at(i), y + i);
  return i;
}

// StoreVectors with bf16 stored two vectors at a time (Bf16Ordered, through StoreBf16Pairs): the
// same rounded values in the same places, for row passes whose at(i) must stay in element order.
// A separate function rather than a branch of StoreVectors, which the elementwise maps inline
// for their tails: the extra code there cost their bf16 loops spilled registers.
template <Storage S, class D, class At>
HWY_INLINE size_t StoreVectorsOrdered(D d, Elem<S>* HWY_RESTRICT y, size_t n, bool stream,
                                      const At& at) {
#if LMO_FAST_BF16_PAIRS
  if constexpr (S == Storage::bf16) {
    const size_t N = hn::Lanes(d);
    size_t i = StoreBf16Pairs(d, y, n, stream, [&](size_t j) {
      const auto lo = at(j);
      return Bf16Ordered(d, lo, at(j + N));
    });
    for (; i + N <= n; i += N) StoreF<S>(d, at(i), y + i);
    return i;
  }
#endif
  return StoreVectors<S>(d, y, n, stream, at);
}

// y[i] = fn(d, x[i]) for i < n, every element through the same vector code (elementwise, so the
// value of y[i] never depends on i's place in a vector); stream: see StoreVectors.
template <Storage S, class D, class Fn>
HWY_INLINE void MapUnary(D d, const Elem<S>* HWY_RESTRICT x, Elem<S>* HWY_RESTRICT y, size_t n,
                         const Fn& fn, bool stream = false) {
  const size_t i =
      StoreVectors<S>(d, y, n, stream, [&](size_t j) { return fn(d, LoadF<S>(d, x + j)); });
  if (i < n) StoreTailF<S>(d, fn(d, LoadTailF<S>(d, x + i, n - i, 0.0f)), y + i, n - i);
}

// y[i] = fn(d, a[i], b[i]) for i < n.
template <Storage S, class D, class Fn>
HWY_INLINE void MapBinary(D d, const Elem<S>* HWY_RESTRICT a, const Elem<S>* HWY_RESTRICT b,
                          Elem<S>* HWY_RESTRICT y, size_t n, const Fn& fn, bool stream = false) {
  const size_t i = StoreVectors<S>(
      d, y, n, stream, [&](size_t j) { return fn(d, LoadF<S>(d, a + j), LoadF<S>(d, b + j)); });
  if (i < n) {
    const auto va = LoadTailF<S>(d, a + i, n - i, 0.0f);
    const auto vb = LoadTailF<S>(d, b + i, n - i, 0.0f);
    StoreTailF<S>(d, fn(d, va, vb), y + i, n - i);
  }
}

// MapUnary for bf16 through pairs; the rest (< 2·Lanes(d) elements) through MapUnary.
template <class D, class Fn>
HWY_INLINE void MapUnaryBf16(D d, const uint16_t* HWY_RESTRICT x, uint16_t* HWY_RESTRICT y,
                             size_t n, const Fn& fn, bool stream = false) {
  size_t i = 0;
#if LMO_FAST_BF16_PAIRS
  i = StoreBf16Pairs(d, y, n, stream, [&](size_t j) {
    hn::Vec<D> e, o;
    LoadBf16Pair(d, x + j, e, o);
    return Bf16Pair(d, fn(d, e), fn(d, o));
  });
#endif
  // Streaming is left to MapUnary only where no pairs ran (HWY_SCALAR).
  if (i < n) MapUnary<Storage::bf16>(d, x + i, y + i, n - i, fn, stream && i == 0);
}

// MapBinary for bf16 through pairs.
template <class D, class Fn>
HWY_INLINE void MapBinaryBf16(D d, const uint16_t* HWY_RESTRICT a, const uint16_t* HWY_RESTRICT b,
                              uint16_t* HWY_RESTRICT y, size_t n, const Fn& fn,
                              bool stream = false) {
  size_t i = 0;
#if LMO_FAST_BF16_PAIRS
  i = StoreBf16Pairs(d, y, n, stream, [&](size_t j) {
    hn::Vec<D> ae, ao, be, bo;
    LoadBf16Pair(d, a + j, ae, ao);
    LoadBf16Pair(d, b + j, be, bo);
    return Bf16Pair(d, fn(d, ae, be), fn(d, ao, bo));
  });
#endif
  if (i < n) MapBinary<Storage::bf16>(d, a + i, b + i, y + i, n - i, fn, stream && i == 0);
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#endif  // LMO_FAST_STORAGE_INL_H_
