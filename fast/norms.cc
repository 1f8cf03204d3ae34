// Highway skeleton: compiled once per target (see fast/targets.cc).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/norms.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "fast/norms.h"
#include "fast/reduce-inl.h"
#include "fast/storage-inl.h"
#include "fast/threads.h"
#include "fast/widened_rows-inl.h"

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

#if LMO_FAST_BF16_PAIRS
// The row loop the widened bf16 norms share: per row, the first pass widens x into scratch w
// while it takes max |x| and Σ x² (kSquares) or Σ x, summed again scaled where the row needs a
// power-of-two scale (row_scale); then body(w, amax, sum, scale, store) forms the row's output,
// handing store(at, nan_free) the f32 results, which it rounds to bf16 (without the NaN branch
// when nan_free) while prefetching the next row.
template <bool kSquares, class Body>
void ForWidenedRows(const uint16_t* x, uint16_t* y, int64_t rows, size_t d, const Body& body) {
  const hn::ScalableTag<float> df;
  const bool stream = StreamRows<Storage::bf16>(rows, d);
  parallel_for(rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const uint16_t* xr = x + static_cast<size_t>(r) * d;
      uint16_t* yr = y + static_cast<size_t>(r) * d;
      float* w = WidenedScratch(d);
      float amax = 0.0f, sum = 0.0f;
      RowPrefetch prefetch(r + 1 < rows ? xr + d : nullptr, d * sizeof(uint16_t),
                           WidenedRowSteps(df, d));
      WidenMaxAbsAndSum<kSquares>(df, xr, d, w, prefetch, amax, sum);
      const double scale = row_scale(amax);
      const float fs = static_cast<float>(scale);
      if (scale != 1.0) {
        sum = kSquares ? RowSumSquares<Storage::f32>(df, w, d, fs)
                       : RowSum<Storage::f32>(df, w, d, fs);
      }
      const auto store = [&](const auto& at, bool nan_free) {
        if (nan_free) {
          StoreWidenedRow<true>(df, yr, d, prefetch, at, stream);
        } else {
          StoreWidenedRow<false>(df, yr, d, prefetch, at, stream);
        }
      };
      body(w, amax, sum, scale, store);
    }
  });
}

// RmsNormRows for bf16 on widened rows (fast/widened_rows-inl.h): the first pass widens the row
// into scratch while it takes max |x| and Σ x²; the output pass reads the scratch and the weights
// w = γ or 1 + γ, widened once per call, and rounds without the NaN branch where the row's
// statistics bound every result (NaNFree).
inline void RmsNormRowsWidened(const uint16_t* x, const uint16_t* gamma, uint16_t* y, int64_t rows,
                               size_t d, float eps, bool one_plus_gamma) {
  const hn::ScalableTag<float> df;
  const WidenedWeights g = WidenWeights(df, gamma, d, one_plus_gamma);
  ForWidenedRows<true>(
      x, y, rows, d, [&](const float* w, float amax, float sum, double scale, const auto& store) {
        const double ms = static_cast<double>(sum) / static_cast<double>(d);
        const float inv_f =
            static_cast<float>(1.0 / std::sqrt(ms + static_cast<double>(eps) * scale * scale));
        const auto vs = hn::Set(df, static_cast<float>(scale)), inv = hn::Set(df, inv_f);
        const float* gw = g.w.data();
        const auto at = [&](size_t j) {
          return hn::Mul(hn::Mul(hn::Mul(hn::LoadU(df, w + j), vs), inv), hn::LoadU(df, gw + j));
        };
        const double bound = static_cast<double>(amax) * scale * inv_f * g.max_abs;
        store(at, std::isfinite(sum) && std::isfinite(inv_f) && NaNFree(bound));
      });
}
#endif

template <Storage S>
void RmsNormRows(const Elem<S>* x, const Elem<S>* gamma, Elem<S>* y, int64_t rows, size_t d,
                 float eps, bool one_plus_gamma) {
#if LMO_FAST_BF16_PAIRS
  if constexpr (S == Storage::bf16) {
    if (rows > 0) RmsNormRowsWidened(x, gamma, y, rows, d, eps, one_plus_gamma);
    return;
  }
#endif
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

// LayerNorm's mean and variance (both paths below) by the corrected two-pass algorithm (see
// RowDeviationSums): mu from the f32 lane sums, then the deviations' sum c and sum of squares q
// in one more read (the row is in cache by then); the mean is mu + c/d, carried as the pair
// (mu, c/d), and the variance (q − c²/d)/d. The pair keeps x − mean accurate under a large mean
// offset, where the error of a rounded mean alone, amplified by the cancellation, would dominate
// the output's error.
#if LMO_FAST_BF16_PAIRS
// LayerNormRows for bf16 on widened rows, as RmsNormRowsWidened: the first pass widens the row
// while it takes max |x| and Σ x, the deviation pass and the output pass read the f32 scratch,
// γ and β are widened once per call, and the output is rounded without the NaN branch where the
// row's statistics bound every result.
inline void LayerNormRowsWidened(const uint16_t* x, const uint16_t* gamma, const uint16_t* beta,
                                 uint16_t* y, int64_t rows, size_t d, float eps) {
  const hn::ScalableTag<float> df;
  const WidenedWeights g = WidenWeights(df, gamma, d, false);
  const WidenedWeights b = WidenWeights(df, beta, d, false);
  ForWidenedRows<false>(
      x, y, rows, d, [&](const float* w, float amax, float sum, double scale, const auto& store) {
        const float fs = static_cast<float>(scale);
        const double n = static_cast<double>(d);
        const float mu = static_cast<float>(static_cast<double>(sum) / n);
        float dev_sum = 0.0f, dev_squares = 0.0f;
        RowDeviationSums<Storage::f32>(df, w, d, fs, mu, dev_sum, dev_squares);
        const double c = static_cast<double>(dev_sum);
        const double var = std::max(0.0, (static_cast<double>(dev_squares) - c * c / n) / n);
        const float inv_f =
            static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(eps) * scale * scale));
        const float cn = static_cast<float>(c / n);
        const auto inv = hn::Set(df, inv_f), vs = hn::Set(df, fs), vmu = hn::Set(df, mu);
        const auto vc = hn::Set(df, cn);
        const float *gw = g.w.data(), *bw = b.w.data();
        const auto at = [&](size_t j) {
          const auto t = hn::Sub(hn::Sub(hn::Mul(hn::LoadU(df, w + j), vs), vmu), vc);
          return hn::MulAdd(hn::Mul(t, inv), hn::LoadU(df, gw + j), hn::LoadU(df, bw + j));
        };
        // |x·scale − mu − c/d| ≤ max|x|·scale + |mu| + |c/d|.
        const double bound = (static_cast<double>(amax) * scale + std::fabs(mu) + std::fabs(cn)) *
                                 inv_f * g.max_abs +
                             b.max_abs;
        store(at, std::isfinite(sum) && std::isfinite(dev_squares) && std::isfinite(inv_f) &&
                      NaNFree(bound));
      });
}
#endif

template <Storage S>
void LayerNormRows(const Elem<S>* x, const Elem<S>* gamma, const Elem<S>* beta, Elem<S>* y,
                   int64_t rows, size_t d, float eps) {
#if LMO_FAST_BF16_PAIRS
  if constexpr (S == Storage::bf16) {
    if (rows > 0) LayerNormRowsWidened(x, gamma, beta, y, rows, d, eps);
    return;
  }
#endif
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

// Fused residual add + RMSNorm, per row: h = x + r in f32 lanes, stored rounded to S and kept
// in an f32 scratch row; max |h| and Σ h² (scaled by a power of two where the row needs it, as
// RmsNormRows) from the scratch; y = h · scale · inv · γ. The norm reads the f32 sums, not the
// rounded residual (FlashInfer's order, the oracle's strict recipe).
template <Storage S>
void FusedAddRmsNormRows(const Elem<S>* x, const Elem<S>* r, const Elem<S>* gamma,
                         Elem<S>* h_out, Elem<S>* y, int64_t rows, size_t d, float eps) {
  const hn::ScalableTag<float> df;
  const size_t n = hn::Lanes(df);
  parallel_for(rows, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> h(d);
    for (int64_t row = begin; row < end; ++row) {
      const size_t off = static_cast<size_t>(row) * d;
      size_t j = 0;
      for (; j + n <= d; j += n) {
        const auto v = hn::Add(LoadF<S>(df, x + off + j), LoadF<S>(df, r + off + j));
        hn::StoreU(v, df, h.data() + j);
        StoreF<S>(df, v, h_out + off + j);
      }
      if (j < d) {
        const size_t left = d - j;
        const auto v = hn::Add(LoadTailF<S>(df, x + off + j, left, 0.0f),
                               LoadTailF<S>(df, r + off + j, left, 0.0f));
        StoreTailF<Storage::f32>(df, v, h.data() + j, left);
        StoreTailF<S>(df, v, h_out + off + j, left);
      }
      const double scale = row_scale(RowMaxAbs<Storage::f32>(df, h.data(), d));
      const float sum = RowSumSquares<Storage::f32>(df, h.data(), d, static_cast<float>(scale));
      const double ms = static_cast<double>(sum) / static_cast<double>(d);
      const auto vs = hn::Set(df, static_cast<float>(scale));
      const auto inv = hn::Set(
          df, static_cast<float>(1.0 / std::sqrt(ms + static_cast<double>(eps) * scale * scale)));
      j = 0;
      for (; j + n <= d; j += n) {
        const auto v = hn::Mul(hn::Mul(hn::Mul(hn::LoadU(df, h.data() + j), vs), inv),
                               LoadF<S>(df, gamma + j));
        StoreF<S>(df, v, y + off + j);
      }
      if (j < d) {
        const size_t left = d - j;
        const auto v =
            hn::Mul(hn::Mul(hn::Mul(LoadTailF<Storage::f32>(df, h.data() + j, left, 0.0f), vs),
                            inv),
                    LoadTailF<S>(df, gamma + j, left, 0.0f));
        StoreTailF<S>(df, v, y + off + j, left);
      }
    }
  });
}

void FusedAddRmsNorm(Storage s, const void* x, const void* residual, const void* gamma,
                     void* residual_out, void* y, int64_t rows, int64_t d, float eps) {
  WithStorage(s, [&](auto tag) {
    constexpr Storage S = decltype(tag)::value;
    FusedAddRmsNormRows<S>(static_cast<const Elem<S>*>(x), static_cast<const Elem<S>*>(residual),
                           static_cast<const Elem<S>*>(gamma), static_cast<Elem<S>*>(residual_out),
                           static_cast<Elem<S>*>(y), rows, static_cast<size_t>(d), eps);
  });
}

void LayerNorm(Storage s, const void* x, const void* gamma, const void* beta, void* y, int64_t rows,
               int64_t d, float eps) {
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
#include "fast/kernel_api.h"

namespace lmo::fast {
HWY_EXPORT(RmsNorm);
HWY_EXPORT(LayerNorm);
HWY_EXPORT(FusedAddRmsNorm);

void fused_add_rmsnorm(Storage s, const void* x, const void* residual, const void* gamma,
                       void* residual_out, void* y, int64_t rows, int64_t d, float eps) {
  const char* fn = "fused_add_rmsnorm";
  detail::check_storage(fn, s);
  detail::check_count(fn, "rows", rows, 0);
  detail::check_count(fn, "d", d, 1);
  detail::check_eps(fn, eps);
  detail::check_ptr(fn, "x", x, rows > 0);
  detail::check_ptr(fn, "residual", residual, rows > 0);
  detail::check_ptr(fn, "gamma", gamma, rows > 0);
  detail::check_ptr(fn, "residual_out", residual_out, rows > 0);
  detail::check_ptr(fn, "y", y, rows > 0);
  HWY_DYNAMIC_DISPATCH(FusedAddRmsNorm)(s, x, residual, gamma, residual_out, y, rows, d, eps);
}

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

void layernorm(Storage s, const void* x, const void* gamma, const void* beta, void* y, int64_t rows,
               int64_t d, float eps) {
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
