// The fp8 quantization and dequantization kernels of fast/fp8.h. Highway skeleton: compiled once
// per target (see fast/targets.cc). The f32 → fp8 rounding is integer arithmetic on the f32
// pattern (normal range: the significand rounded to nearest-even at its fp8 width and the
// exponent rebiased; subnormal range: |v| scaled to fp8's subnormal quantum and rounded to an
// integer, ties to even), the same on every target; fp8 → f32 is a lookup in the exact table.
// clang-format off: the skeleton's first lines must stay in this order.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/fp8.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "fast/fp8.h"
#include "fast/storage-inl.h"
#include "fast/threads.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {

// About 16 K elements per chunk of rows: a chunk's cost is its rows, independent of the threads.
inline int64_t RowGrain(int64_t cols) {
  return std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1));
}

// The fp8 patterns of v (any f32, NaN included) clamped to ±max, in the low byte of 32-bit
// lanes. kMan: explicit significand bits; kBias: exponent bias.
template <int kMan, int kBias, class D>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> Fp8Bits(D d, hn::Vec<D> v, float max) {
  const hn::RebindToUnsigned<D> du;
  const hn::RebindToSigned<D> di;
  const auto nan = hn::RebindMask(du, hn::IsNaN(v));
  v = hn::Min(hn::Max(v, hn::Set(d, -max)), hn::Set(d, max));
  const auto u = hn::BitCast(du, v);
  const auto sign = hn::ShiftRight<24>(hn::And(u, hn::Set(du, 0x80000000u)));
  const auto a = hn::And(u, hn::Set(du, 0x7FFFFFFFu));
  // Normal range: add half an fp8 ulp less one f32 ulp plus the kept lsb (nearest-even), cut.
  constexpr int kShift = 23 - kMan;
  const auto lsb = hn::And(hn::ShiftRight<kShift>(a), hn::Set(du, 1u));
  const auto up = hn::Add(a, hn::Add(hn::Set(du, (1u << (kShift - 1)) - 1u), lsb));
  const auto normal =
      hn::Sub(hn::ShiftRight<kShift>(up), hn::Set(du, static_cast<uint32_t>(127 - kBias) << kMan));
  // Subnormal range: |v| in units of the quantum 2^(1 − kBias − kMan) (an exact scaling),
  // rounded to an integer ties to even; 2^kMan is the smallest normal's pattern.
  constexpr float kInvQuantum = static_cast<float>(1u << (kBias - 1 + kMan));
  const auto scaled = hn::Mul(hn::BitCast(d, a), hn::Set(d, kInvQuantum));
  const auto sub = hn::BitCast(du, hn::ConvertTo(di, hn::Round(scaled)));
  const auto min_normal = hn::Set(di, static_cast<int32_t>(127 + 1 - kBias) << 23);
  const auto is_sub = hn::RebindMask(du, hn::Lt(hn::BitCast(di, a), min_normal));
  auto bits = hn::IfThenElse(is_sub, sub, normal);
  bits = hn::IfThenElse(nan, hn::Set(du, 0x7Fu), bits);
  return hn::Or(bits, sign);
}

// Stores the low bytes of the first count lanes (count ≤ Lanes(d)).
template <class D>
HWY_INLINE void StoreBytes(D d, hn::Vec<hn::RebindToUnsigned<D>> bits, uint8_t* p, size_t count) {
  const hn::RebindToSigned<D> di;
  const hn::Rebind<uint8_t, D> d8;
  const auto bytes = hn::DemoteTo(d8, hn::BitCast(di, bits));
  if (count == hn::Lanes(d)) {
    hn::StoreU(bytes, d8, p);
    return;
  }
  HWY_ALIGN uint8_t buf[HWY_MAX_BYTES / sizeof(float)];
  hn::StoreU(bytes, d8, buf);
  std::memcpy(p, buf, count);
}

// max |x_i| over each row's segment of every tile column (NaN where one is NaN).
template <Storage S>
void RowAmax(const Elem<S>* x, const Fp8Tiling& t, float* row_amax) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const int64_t across = t.tiles_across();
  parallel_for(t.rows, RowGrain(t.cols), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const Elem<S>* row = x + static_cast<size_t>(r * t.cols);
      for (int64_t tc = 0; tc < across; ++tc) {
        const auto c0 = static_cast<size_t>(tc * t.tile_cols);
        const size_t c1 =
            std::min(static_cast<size_t>(t.cols), c0 + static_cast<size_t>(t.tile_cols));
        auto m = hn::Zero(d);
        auto nan = hn::Zero(d);
        size_t i = c0;
        for (; i + N <= c1; i += N) {
          const auto v = LoadF<S>(d, row + i);
          nan = hn::Or(nan, hn::VecFromMask(d, hn::IsNaN(v)));
          m = hn::Max(m, hn::Abs(v));
        }
        if (i < c1) {
          const auto v = LoadTailF<S>(d, row + i, c1 - i, 0.0f);
          nan = hn::Or(nan, hn::VecFromMask(d, hn::IsNaN(v)));
          m = hn::Max(m, hn::Abs(v));
        }
        const bool any_nan = !hn::AllTrue(d, hn::Eq(nan, hn::Zero(d)));
        row_amax[static_cast<size_t>(r * across + tc)] =
            any_nan ? std::nanf("") : hn::GetLane(hn::MaxOfLanes(d, m));
      }
    }
  });
}

// The scale of every tile from the rows' maxima (fast/fp8.h: f32(amax/M) or UE8M0).
void Scales(const std::vector<float>& row_amax, const Fp8Tiling& t, float max, bool pow2,
            double floor, float* scales) {
  const int64_t across = t.tiles_across();
  for (int64_t td = 0; td < t.tiles_down(); ++td) {
    for (int64_t tc = 0; tc < across; ++tc) {
      float amax = 0;
      bool nan = false;
      const int64_t r1 = std::min(t.rows, (td + 1) * t.tile_rows);
      for (int64_t r = td * t.tile_rows; r < r1; ++r) {
        const float a = row_amax[static_cast<size_t>(r * across + tc)];
        nan = nan || std::isnan(a);
        amax = std::max(amax, a);
      }
      float s;
      if (nan) {
        s = std::nanf("");
      } else {
        const double ratio = std::max(static_cast<double>(amax), floor) / static_cast<double>(max);
        if (pow2) {
          int e = 0;
          const double m = std::frexp(ratio, &e);  // ratio = m·2^e, m in [0.5, 1)
          s = static_cast<float>(m == 0.5 ? ratio : std::ldexp(1.0, e));
        } else {
          s = static_cast<float>(ratio);
        }
      }
      scales[static_cast<size_t>(td * across + tc)] = s;
    }
  }
}

// Calls fn(i, count, scale) for every run of at most Lanes(d) elements of the matrix that share
// one tile: i the first element's index, row by row, each row's tiles left to right. Rows run in
// parallel in chunks fixed by the shape.
template <class D, class F>
void ForEachTileRun(D d, const Fp8Tiling& t, const float* scales, const F& fn) {
  const size_t N = hn::Lanes(d);
  const int64_t across = t.tiles_across();
  parallel_for(t.rows, RowGrain(t.cols), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const size_t base = static_cast<size_t>(r * t.cols);
      for (int64_t tc = 0; tc < across; ++tc) {
        const float s = scales[static_cast<size_t>((r / t.tile_rows) * across + tc)];
        const auto c0 = static_cast<size_t>(tc * t.tile_cols);
        const size_t c1 =
            std::min(static_cast<size_t>(t.cols), c0 + static_cast<size_t>(t.tile_cols));
        for (size_t i = c0; i < c1; i += N) fn(base + i, std::min(N, c1 - i), s);
      }
    }
  });
}

template <Storage S, int kMan, int kBias>
void QuantizeRows(const Elem<S>* x, uint8_t* q, const float* scales, const Fp8Tiling& t,
                  float max) {
  const hn::ScalableTag<float> d;
  ForEachTileRun(d, t, scales, [&](size_t i, size_t count, float s) {
    const auto v = count == hn::Lanes(d) ? LoadF<S>(d, x + i) : LoadTailF<S>(d, x + i, count, 0.0f);
    StoreBytes(d, Fp8Bits<kMan, kBias>(d, hn::Div(v, hn::Set(d, s)), max), q + i, count);
  });
}

void Fp8Quantize(Storage st, const void* x, uint8_t* q, float* scales, const Fp8Tiling& t,
                 Fp8Format f, bool pow2_scales, double amax_floor) {
  const float max = fp8_max(f);
  WithStorage(st, [&](auto tag) {
    constexpr Storage S = decltype(tag)::value;
    const auto* xs = static_cast<const Elem<S>*>(x);
    std::vector<float> row_amax(static_cast<size_t>(t.rows * t.tiles_across()));
    RowAmax<S>(xs, t, row_amax.data());
    Scales(row_amax, t, max, pow2_scales, amax_floor, scales);
    if (f == Fp8Format::e4m3) {
      QuantizeRows<S, 3, 7>(xs, q, scales, t, max);
    } else {
      QuantizeRows<S, 2, 15>(xs, q, scales, t, max);
    }
  });
}

template <Storage S>
void DequantizeRows(const uint8_t* q, const float* scales, Elem<S>* x, const Fp8Tiling& t,
                    const float* table) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const hn::Rebind<uint8_t, decltype(d)> d8;
  ForEachTileRun(d, t, scales, [&](size_t i, size_t count, float s) {
    HWY_ALIGN uint8_t buf[HWY_MAX_BYTES / sizeof(float)] = {};
    const uint8_t* src = q + i;
    if (count < hn::Lanes(d)) {
      std::memcpy(buf, src, count);  // the other lanes read pattern 0 (+0)
      src = buf;
    }
    const auto idx = hn::PromoteTo(di, hn::LoadU(d8, src));
    const auto v = hn::Mul(hn::GatherIndex(d, table, idx), hn::Set(d, s));
    if (count == hn::Lanes(d)) {
      StoreF<S>(d, v, x + i);
    } else {
      StoreTailF<S>(d, v, x + i, count);
    }
  });
}

void Fp8Dequantize(Storage st, const uint8_t* q, const float* scales, void* x, const Fp8Tiling& t,
                   Fp8Format f) {
  const float* table = fp8_values(f);
  WithStorage(st, [&](auto tag) {
    constexpr Storage S = decltype(tag)::value;
    DequantizeRows<S>(q, scales, static_cast<Elem<S>*>(x), t, table);
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lmo::fast {
HWY_EXPORT(Fp8Quantize);
HWY_EXPORT(Fp8Dequantize);

namespace {

void check_tiled(const char* fn, Storage s, const Fp8Tiling& t, Fp8Format f) {
  detail::check_storage(fn, s);
  detail::check_fp8_tiling(fn, t);
  detail::check_fp8_format(fn, f);
}

}  // namespace

void fp8_quantize(Storage s, const void* x, uint8_t* q, float* scales, const Fp8Tiling& t,
                  Fp8Format f, bool pow2_scales, double amax_floor) {
  const char* fn = "fp8_quantize";
  check_tiled(fn, s, t, f);
  if (!(amax_floor >= 0) || std::isinf(amax_floor)) {
    throw std::invalid_argument(std::string(fn) + ": amax_floor is " + std::to_string(amax_floor) +
                                ", expected finite and >= 0");
  }
  const bool any = t.rows > 0 && t.cols > 0;
  detail::check_ptr(fn, "x", x, any);
  detail::check_ptr(fn, "q", q, any);
  detail::check_ptr(fn, "scales", scales, any);
  if (!any) return;
  HWY_DYNAMIC_DISPATCH(Fp8Quantize)(s, x, q, scales, t, f, pow2_scales, amax_floor);
}

void fp8_dequantize(Storage s, const uint8_t* q, const float* scales, void* x, const Fp8Tiling& t,
                    Fp8Format f) {
  const char* fn = "fp8_dequantize";
  check_tiled(fn, s, t, f);
  const bool any = t.rows > 0 && t.cols > 0;
  detail::check_ptr(fn, "q", q, any);
  detail::check_ptr(fn, "scales", scales, any);
  detail::check_ptr(fn, "x", x, any);
  if (!any) return;
  HWY_DYNAMIC_DISPATCH(Fp8Dequantize)(s, q, scales, x, t, f);
}

}  // namespace lmo::fast
#endif  // HWY_ONCE
