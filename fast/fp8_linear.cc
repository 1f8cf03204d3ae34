// The block-scaled fp8 linear layer of fast/fp8.h (DeepSeek-V3's w8a8 GEMM, DeepGEMM's order):
// per block of k, the fp8 operands decoded exactly to f32, their product summed by sgemm (fp8
// products are exact in f32), the partial sums scaled by s_A·s_W in f32 and accumulated in f32;
// one rounding to the storage format at the end.
#include <algorithm>
#include <vector>

#include "fast/blas.h"
#include "fast/fp8.h"
#include "fast/threads.h"

namespace lmo::fast {
namespace {

// Rows of A per task: fixed by the shapes, so the tiling never depends on the thread count.
constexpr int64_t kRowTile = 32;

void decode(const uint8_t* q, int64_t count, const float* table, float* out) {
  for (int64_t i = 0; i < count; ++i) out[i] = table[q[i]];
}

}  // namespace

void fp8_linear(Storage s, const uint8_t* a, const float* a_scales, const uint8_t* w,
                const float* w_scales, void* y, int64_t m, int64_t n, int64_t k, int64_t block,
                Fp8Format f) {
  const char* fn = "fp8_linear";
  detail::check_storage(fn, s);
  detail::check_fp8_format(fn, f);
  detail::check_count(fn, "m", m, 0);
  detail::check_count(fn, "n", n, 0);
  detail::check_count(fn, "k", k, 1);
  detail::check_count(fn, "block", block, 1);
  for (const auto& [name, v] : {std::pair{"m", m}, {"n", n}, {"k", k}}) {
    detail::check_blas_dim(fn, name, v);
  }
  const bool any = m > 0 && n > 0;
  detail::check_ptr(fn, "a", a, any);
  detail::check_ptr(fn, "a_scales", a_scales, any);
  detail::check_ptr(fn, "w", w, any);
  detail::check_ptr(fn, "w_scales", w_scales, any);
  detail::check_ptr(fn, "y", y, any);
  if (!any) return;
  blas_single_threaded();
  const float* table = fp8_values(f);
  const int64_t k_blocks = (k + block - 1) / block;
  std::vector<float> wd(static_cast<size_t>(n * k));
  parallel_for(n, kRowTile, [&](int64_t begin, int64_t end) {
    decode(w + begin * k, (end - begin) * k, table, wd.data() + begin * k);
  });
  parallel_for(m, kRowTile, [&](int64_t begin, int64_t end) {
    const int64_t rows = end - begin;
    std::vector<float> ad(static_cast<size_t>(rows * k));
    decode(a + begin * k, rows * k, table, ad.data());
    std::vector<float> acc(static_cast<size_t>(rows * n), 0.0f), part(acc.size());
    for (int64_t kb = 0; kb < k_blocks; ++kb) {
      const int64_t k0 = kb * block, kk = std::min(block, k - k0);
      sgemm(rows, n, kk, 1.0f, ad.data() + k0, k, wd.data() + k0, k, true, 0.0f, part.data(), n);
      for (int64_t r = 0; r < rows; ++r) {
        const float sa = a_scales[(begin + r) * k_blocks + kb];
        for (int64_t j = 0; j < n; ++j) {
          const float sw = w_scales[(j / block) * k_blocks + kb];
          acc[static_cast<size_t>(r * n + j)] += (sa * sw) * part[static_cast<size_t>(r * n + j)];
        }
      }
    }
    for (int64_t i = 0; i < rows * n; ++i)
      store_f32(s, y, begin * n + i, acc[static_cast<size_t>(i)]);
  });
}

}  // namespace lmo::fast
