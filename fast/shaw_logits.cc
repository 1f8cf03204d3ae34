// The Shaw et al. relative logits kernel of fast/shaw_logits.h. Highway skeleton: compiled once
// per target (see fast/targets.cc). Per block of query rows: S = Q_blk·Kᵀ and R = Q_blk·Aᵀ
// (A the table rows the block reaches) by sgemm, then each row's logits (S + R[clip]) / √d_k
// by vectors, stored rounded to s.
// clang-format off: the skeleton's first lines must stay in this order.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/shaw_logits.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

#include <algorithm>
#include <cmath>
#include <vector>

#include "fast/blas.h"
#include "fast/f32_operand.h"
#include "fast/shaw_logits.h"
#include "fast/storage-inl.h"
#include "fast/threads.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {

// Rows per block: up to 64, fewer for long key rows so that a block's S tile stays near 1 MiB.
// A function of n_k only, never of the thread count.
inline int64_t RowBlock(int64_t n_k) { return std::clamp<int64_t>((1 << 18) / n_k, 1, 64); }

template <Storage S>
void ShawRows(const float* q, const float* k, const float* rel, Elem<S>* e, int64_t n_q,
              int64_t n_k, int64_t dk, int64_t kmax) {
  const hn::ScalableTag<float> df;
  const size_t N = hn::Lanes(df);
  const auto scale = hn::Set(df, std::sqrt(static_cast<float>(dk)));
  const int64_t block = RowBlock(n_k);
  const int64_t blocks = (n_q + block - 1) / block;
  const auto clip = [kmax](int64_t d) { return std::clamp<int64_t>(d, -kmax, kmax) + kmax; };
  parallel_for(blocks, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> qk, qa, row(static_cast<size_t>(n_k));
    for (int64_t b = begin; b < end; ++b) {
      const int64_t i0 = b * block, rows = std::min(block, n_q - i0);
      // The table rows this block reads: distances from 0 − (i0 + rows − 1) to n_k − 1 − i0.
      const int64_t r_lo = clip(-(i0 + rows - 1)), r_hi = clip(n_k - 1 - i0);
      const int64_t n_r = r_hi - r_lo + 1;
      qk.resize(static_cast<size_t>(rows * n_k));
      qa.resize(static_cast<size_t>(rows * n_r));
      sgemm(rows, n_k, dk, 1.0f, q + i0 * dk, dk, k, dk, true, 0.0f, qk.data(), n_k);
      sgemm(rows, n_r, dk, 1.0f, q + i0 * dk, dk, rel + r_lo * dk, dk, true, 0.0f, qa.data(), n_r);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t i = i0 + r;
        // The relative term of every key: the first table row left of the band, the last one
        // right of it, one row per distance inside (j − i + K − r_lo, consecutive in j).
        const float* a = qa.data() + r * n_r;
        const int64_t band_lo = std::clamp<int64_t>(i - kmax, 0, n_k);
        const int64_t band_hi = std::clamp<int64_t>(i + kmax + 1, band_lo, n_k);
        // (A side that is not empty reaches row 0 or row 2K, so that row is in [r_lo, r_hi].)
        if (band_lo > 0) std::fill(row.begin(), row.begin() + band_lo, a[0 - r_lo]);
        if (band_hi > band_lo) {
          const float* band = a + (band_lo - i + kmax - r_lo);
          std::copy(band, band + (band_hi - band_lo), row.begin() + band_lo);
        }
        if (band_hi < n_k) std::fill(row.begin() + band_hi, row.end(), a[2 * kmax - r_lo]);
        const float* srow = qk.data() + r * n_k;
        Elem<S>* out = e + i * n_k;
        const auto logit = [&](size_t j) {
          return hn::Div(hn::Add(hn::LoadU(df, srow + j), hn::LoadU(df, row.data() + j)), scale);
        };
        size_t j = 0;
        for (; j + N <= static_cast<size_t>(n_k); j += N) StoreF<S>(df, logit(j), out + j);
        if (j < static_cast<size_t>(n_k)) {
          const size_t rest = static_cast<size_t>(n_k) - j;
          const auto sum = hn::Add(LoadTailF<Storage::f32>(df, srow + j, rest, 0.0f),
                                   LoadTailF<Storage::f32>(df, row.data() + j, rest, 0.0f));
          StoreTailF<S>(df, hn::Div(sum, scale), out + j, rest);
        }
      }
    }
  });
}

void ShawLogits(Storage s, const float* q, const float* k, const float* rel, void* e, int64_t n_q,
                int64_t n_k, int64_t dk, int64_t kmax) {
  WithStorage(s, [&](auto tag) {
    constexpr Storage S = decltype(tag)::value;
    ShawRows<S>(q, k, rel, static_cast<Elem<S>*>(e), n_q, n_k, dk, kmax);
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "fast/kernel_api.h"

namespace lmo::fast {
HWY_EXPORT(ShawLogits);

void shaw_logits(Storage s, const void* q, const void* k, const void* rel_k, void* e, int64_t n_q,
                 int64_t n_k, int64_t d_k, int64_t max_relative_position) {
  const char* fn = "shaw_logits";
  detail::check_storage(fn, s);
  detail::check_shaw_logits(fn, q, k, rel_k, e, n_q, n_k, d_k, max_relative_position);
  if (n_q == 0 || n_k == 0) return;
  // The inputs as f32 (exact copies for bf16 and f16): OpenBLAS multiplies f32 only.
  const detail::F32Operand fq(s, q, n_q * d_k), fk(s, k, n_k * d_k),
      frel(s, rel_k, (2 * max_relative_position + 1) * d_k);
  blas_single_threaded();
  HWY_DYNAMIC_DISPATCH(ShawLogits)
  (s, fq.get(), fk.get(), frel.get(), e, n_q, n_k, d_k, max_relative_position);
}

}  // namespace lmo::fast
#endif  // HWY_ONCE
