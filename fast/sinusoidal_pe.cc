// The sinusoidal PE kernel of fast/sinusoidal_pe.h. Highway skeleton: compiled once per target
// (see fast/targets.cc). Per token, blocks of kBlock pairs: sin and cos in f64 lanes
// (CosSinOfTurns), rounded to f32 into scratch, interleaved (sin, cos, sin, cos, …) with
// StoreInterleaved2 and stored to the row in s.
// clang-format off: the skeleton's first lines must stay in this order.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/sinusoidal_pe.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

#include <algorithm>
#include <vector>

#include "fast/angles-inl.h"
#include "fast/sinusoidal_pe.h"
#include "fast/storage-inl.h"
#include "fast/threads.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {

// Pairs per block: a multiple of every target's f32 lane count.
constexpr size_t kBlock = 256;

template <Storage S>
void PeRows(const int64_t* positions, Elem<S>* pe, int64_t tokens, size_t d, const double* turns_hi,
            const double* turns_lo) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> dfh;
  const hn::ScalableTag<float> df;
  const size_t Nd = hn::Lanes(dd), Nf = hn::Lanes(df);
  const size_t half = d / 2;
  const int64_t grain = std::max<int64_t>(1, 8192 / static_cast<int64_t>(d));
  parallel_for(tokens, grain, [&](int64_t begin, int64_t end) {
    std::vector<float> sn(kBlock), cs(kBlock), both(2 * kBlock);
    for (int64_t t = begin; t < end; ++t) {
      const auto p = hn::Set(dd, static_cast<double>(positions[t]));
      Elem<S>* row = pe + static_cast<size_t>(t) * d;
      for (size_t i0 = 0; i0 < half; i0 += kBlock) {
        const size_t n = std::min(kBlock, half - i0);
        for (size_t i = 0; i < n; i += Nd) {
          hn::Vec<decltype(dd)> c, s;
          CosSinOfTurns(dd, p, hn::LoadU(dd, turns_hi + i0 + i), hn::LoadU(dd, turns_lo + i0 + i),
                        c, s);
          hn::StoreU(hn::DemoteTo(dfh, s), dfh, sn.data() + i);
          hn::StoreU(hn::DemoteTo(dfh, c), dfh, cs.data() + i);
        }
        for (size_t i = 0; i < n; i += Nf) {
          hn::StoreInterleaved2(hn::LoadU(df, sn.data() + i), hn::LoadU(df, cs.data() + i), df,
                                both.data() + 2 * i);
        }
        size_t j = 0;
        for (; j + Nf <= 2 * n; j += Nf)
          StoreF<S>(df, hn::LoadU(df, both.data() + j), row + 2 * i0 + j);
        if (j < 2 * n)
          StoreTailF<S>(df, hn::LoadU(df, both.data() + j), row + 2 * i0 + j, 2 * n - j);
      }
    }
  });
}

void SinusoidalPe(Storage s, const int64_t* positions, void* pe, int64_t tokens, int64_t d,
                  const double* turns_hi, const double* turns_lo) {
  WithStorage(s, [&](auto tag) {
    constexpr Storage S = decltype(tag)::value;
    PeRows<S>(positions, static_cast<Elem<S>*>(pe), tokens, static_cast<size_t>(d), turns_hi,
              turns_lo);
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "fast/kernel_api.h"

namespace lmo::fast {
HWY_EXPORT(SinusoidalPe);

void sinusoidal_pe(Storage s, const int64_t* positions, void* pe, int64_t tokens, int64_t d,
                   double base) {
  const char* fn = "sinusoidal_pe";
  detail::check_storage(fn, s);
  detail::check_sinusoidal_pe(fn, positions, pe, tokens, d, base);
  if (tokens == 0) return;
  // 1 / base^(2i/d) for i < d/2.
  const std::vector<long double> theta = inverse_powers(base, d / 2, d);
  const Turns turns = turns_of(theta);
  HWY_DYNAMIC_DISPATCH(SinusoidalPe)(s, positions, pe, tokens, d, turns.hi.data(), turns.lo.data());
}

}  // namespace lmo::fast
#endif  // HWY_ONCE
