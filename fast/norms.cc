// Highway skeleton: compiled once per target (see fast/targets.cc).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/norms.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <algorithm>
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

// Whether a call's output is large enough to stream (see kStreamBytes).
template <Storage S>
bool StreamRows(int64_t rows, size_t d) {
  return static_cast<size_t>(rows) * d * sizeof(Elem<S>) >= kStreamBytes;
}

template <Storage S>
void RmsNormRows(const Elem<S>* x, const Elem<S>* gamma, Elem<S>* y, int64_t rows, size_t d,
                 float eps, bool one_plus_gamma) {
  const hn::ScalableTag<float> df;
  const bool stream = StreamRows<S>(rows, d);
  parallel_for(rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const Elem<S>* xr = x + static_cast<size_t>(r) * d;
      Elem<S>* yr = y + static_cast<size_t>(r) * d;
      // max |x| and Σ x² in one read; the sum is kept where the scale is 1 (then it is the
      // scaled sum bit for bit), else summed again scaled.
      float amax = 0.0f, sum = 0.0f;
      RowMaxAbsAndSumSquares<S>(df, xr, d, amax, sum);
      const double scale = row_scale(amax);
      const auto vs = hn::Set(df, static_cast<float>(scale));
      if (scale != 1.0) sum = RowSumSquares<S>(df, xr, d, static_cast<float>(scale));
      const double ms = static_cast<double>(sum) / static_cast<double>(d);
      const auto inv = hn::Set(
          df, static_cast<float>(1.0 / std::sqrt(ms + static_cast<double>(eps) * scale * scale)));
      RowPrefetch prefetch(r + 1 < rows ? xr + d : nullptr, d * sizeof(Elem<S>), d / hn::Lanes(df));
      if (one_plus_gamma) {
        const auto one = hn::Set(df, 1.0f);
        MapRow<S>(
            df, xr, gamma, yr, d,
            [&](auto vx, auto vg) {
              prefetch.step();
              return hn::Mul(hn::Mul(hn::Mul(vx, vs), inv), hn::Add(one, vg));
            },
            stream);
      } else {
        MapRow<S>(
            df, xr, gamma, yr, d,
            [&](auto vx, auto vg) {
              prefetch.step();
              return hn::Mul(hn::Mul(hn::Mul(vx, vs), inv), vg);
            },
            stream);
      }
    }
  });
}

// Mean and variance by the corrected two-pass algorithm (see RowDeviationSums): mu from the
// f32 lane sums, then the deviations' sum c and sum of squares q in one more read (the row is
// in cache by then); the mean is mu + c/d, carried as the pair (mu, c/d), and the variance
// (q − c²/d)/d. The pair keeps x − mean accurate under a large mean offset, where the error of a
// rounded mean alone, amplified by the cancellation, would dominate the output's error.
template <Storage S>
void LayerNormRows(const Elem<S>* x, const Elem<S>* gamma, const Elem<S>* beta, Elem<S>* y,
                   int64_t rows, size_t d, float eps) {
  const hn::ScalableTag<float> df;
  const bool stream = StreamRows<S>(rows, d);
  parallel_for(rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const Elem<S>* xr = x + static_cast<size_t>(r) * d;
      Elem<S>* yr = y + static_cast<size_t>(r) * d;
      float amax = 0.0f, sum = 0.0f;
      RowMaxAbsAndSum<S>(df, xr, d, amax, sum);
      const double scale = row_scale(amax);
      const float fs = static_cast<float>(scale);
      if (scale != 1.0) sum = RowSum<S>(df, xr, d, fs);
      const double n = static_cast<double>(d);
      const float mu = static_cast<float>(static_cast<double>(sum) / n);
      float dev_sum = 0.0f, dev_squares = 0.0f;
      RowDeviationSums<S>(df, xr, d, fs, mu, dev_sum, dev_squares);
      const double c = static_cast<double>(dev_sum);
      const double var = std::max(0.0, (static_cast<double>(dev_squares) - c * c / n) / n);
      const auto inv = hn::Set(
          df, static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(eps) * scale * scale)));
      const auto vs = hn::Set(df, fs), vmu = hn::Set(df, mu);
      const auto vc = hn::Set(df, static_cast<float>(c / n));
      RowPrefetch prefetch(r + 1 < rows ? xr + d : nullptr, d * sizeof(Elem<S>), d / hn::Lanes(df));
      MapRow3<S>(
          df, xr, gamma, beta, yr, d,
          [&](auto vx, auto vg, auto vb) {
            prefetch.step();
            return hn::MulAdd(hn::Mul(hn::Sub(hn::Sub(hn::Mul(vx, vs), vmu), vc), inv), vg, vb);
          },
          stream);
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
