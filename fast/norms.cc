// Highway skeleton: compiled once per target (see fast/targets.cc).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/norms.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <cmath>

#include "fast/norms.h"
#include "fast/reduce-inl.h"
#include "fast/storage-inl.h"
#include "fast/threads.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {

// The power of two that brings the row's largest magnitude into [2^-40, 2^40] (1 when it is
// there already, or when it is 0, inf or NaN).
inline double row_scale(float amax) {
  if (!(amax > 0x1p-40f && amax < 0x1p40f) && std::isfinite(amax) && amax > 0.0f) {
    int e = 0;
    std::frexp(amax, &e);
    return std::ldexp(1.0, -e);
  }
  return 1.0;
}

template <Storage S>
void RmsNormRows(const Elem<S>* x, const Elem<S>* gamma, Elem<S>* y, int64_t rows, size_t d,
                 float eps, bool one_plus_gamma) {
  const hn::ScalableTag<float> df;
  parallel_for(rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const Elem<S>* xr = x + static_cast<size_t>(r) * d;
      Elem<S>* yr = y + static_cast<size_t>(r) * d;
      const float amax = RowMaxAbs<S>(df, xr, d);
      const double scale = row_scale(amax);
      const auto vs = hn::Set(df, static_cast<float>(scale));
      const float sum = RowSumSquares<S>(df, xr, d, static_cast<float>(scale));
      const double ms = static_cast<double>(sum) / static_cast<double>(d);
      const auto inv = hn::Set(
          df, static_cast<float>(1.0 / std::sqrt(ms + static_cast<double>(eps) * scale * scale)));
      if (one_plus_gamma) {
        const auto one = hn::Set(df, 1.0f);
        MapRow<S>(df, xr, gamma, yr, d, [&](auto vx, auto vg) {
          return hn::Mul(hn::Mul(hn::Mul(vx, vs), inv), hn::Add(one, vg));
        });
      } else {
        MapRow<S>(df, xr, gamma, yr, d, [&](auto vx, auto vg) {
          return hn::Mul(hn::Mul(hn::Mul(vx, vs), inv), vg);
        });
      }
    }
  });
}

template <Storage S>
void LayerNormRows(const Elem<S>* x, const Elem<S>* gamma, const Elem<S>* beta, Elem<S>* y,
                   int64_t rows, size_t d, float eps) {
  const hn::ScalableTag<float> df;
  parallel_for(rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const Elem<S>* xr = x + static_cast<size_t>(r) * d;
      Elem<S>* yr = y + static_cast<size_t>(r) * d;
      const double scale = row_scale(RowMaxAbs<S>(df, xr, d));
      const float fs = static_cast<float>(scale);
      const float mu = static_cast<float>(static_cast<double>(RowSum<S>(df, xr, d, fs)) /
                                          static_cast<double>(d));
      const float dev = RowSumSquaredDeviations<S>(df, xr, d, fs, mu);
      const double var = static_cast<double>(dev) / static_cast<double>(d);
      const auto inv = hn::Set(
          df, static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(eps) * scale * scale)));
      const auto vs = hn::Set(df, fs), vmu = hn::Set(df, mu);
      MapRow3<S>(df, xr, gamma, beta, yr, d, [&](auto vx, auto vg, auto vb) {
        return hn::MulAdd(hn::Mul(hn::Sub(hn::Mul(vx, vs), vmu), inv), vg, vb);
      });
    }
  });
}

void RmsNorm(Storage s, const void* x, const void* gamma, void* y, int64_t rows, int64_t d,
             float eps, bool one_plus_gamma) {
  WithStorage(s, [&](auto tag) {
    constexpr Storage S = decltype(tag)::value;
    RmsNormRows<S>(static_cast<const Elem<S>*>(x), static_cast<const Elem<S>*>(gamma),
                   static_cast<Elem<S>*>(y), rows, static_cast<size_t>(d), eps, one_plus_gamma);
  });
}

void LayerNorm(Storage s, const void* x, const void* gamma, const void* beta, void* y,
               int64_t rows, int64_t d, float eps) {
  WithStorage(s, [&](auto tag) {
    constexpr Storage S = decltype(tag)::value;
    LayerNormRows<S>(static_cast<const Elem<S>*>(x), static_cast<const Elem<S>*>(gamma),
                     static_cast<const Elem<S>*>(beta), static_cast<Elem<S>*>(y), rows,
                     static_cast<size_t>(d), eps);
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "fast/validate.h"

namespace lmo::fast {
HWY_EXPORT(RmsNorm);
HWY_EXPORT(LayerNorm);

void rmsnorm(Storage s, const void* x, const void* gamma, void* y, int64_t rows, int64_t d,
             float eps, bool one_plus_gamma) {
  const char* fn = "rmsnorm";
  detail::check_storage(fn, s);
  detail::check_count(fn, "rows", rows, 0);
  detail::check_count(fn, "d", d, 1);
  detail::check_eps(fn, eps);
  detail::check_ptr(fn, "x", x, rows > 0);
  detail::check_ptr(fn, "gamma", gamma, rows > 0);
  detail::check_ptr(fn, "y", y, rows > 0);
  HWY_DYNAMIC_DISPATCH(RmsNorm)(s, x, gamma, y, rows, d, eps, one_plus_gamma);
}

void layernorm(Storage s, const void* x, const void* gamma, const void* beta, void* y,
               int64_t rows, int64_t d, float eps) {
  const char* fn = "layernorm";
  detail::check_storage(fn, s);
  detail::check_count(fn, "rows", rows, 0);
  detail::check_count(fn, "d", d, 1);
  detail::check_eps(fn, eps);
  detail::check_ptr(fn, "x", x, rows > 0);
  detail::check_ptr(fn, "gamma", gamma, rows > 0);
  detail::check_ptr(fn, "beta", beta, rows > 0);
  detail::check_ptr(fn, "y", y, rows > 0);
  HWY_DYNAMIC_DISPATCH(LayerNorm)(s, x, gamma, beta, y, rows, d, eps);
}
}  // namespace lmo::fast
#endif  // HWY_ONCE
