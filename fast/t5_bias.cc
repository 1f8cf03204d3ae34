// The T5 bias kernel of fast/t5_bias.h and its exact bucket thresholds.
#include "fast/t5_bias.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fast/threads.h"
#include "fast/kernel_api.h"

namespace lmo::fast {
void t5_bias(Storage s, const void* table, void* bias, const T5BiasShape& shape) {
  const char* fn = "t5_bias";
  detail::check_storage(fn, s);
  const int64_t heads = shape.heads, n_q = shape.query_len, n_k = shape.key_len;
  detail::check_t5_bias_shape(fn, shape);
  const T5Buckets bucket_of(shape.num_buckets, shape.max_distance, shape.bidirectional);
  const bool any = n_q > 0 && n_k > 0;
  detail::check_ptr(fn, "table", table, any);
  detail::check_ptr(fn, "bias", bias, any);
  if (!any) return;

  // Every relative position once: j − (offset + i) = lo + r for r = j − i + n_q − 1 < count.
  const int64_t lo = -(shape.query_offset + n_q - 1), count = n_q + n_k - 1;
  std::vector<int32_t> bucket(static_cast<size_t>(count));
  parallel_for(count, 1 << 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      bucket[static_cast<size_t>(r)] = static_cast<int32_t>(bucket_of(lo + r));
    }
  });

  const size_t es = storage_bytes(s);
  const auto* tab = static_cast<const unsigned char*>(table);
  auto* out = static_cast<unsigned char*>(bias);
  // table[bucket[r], h] into dst: the element's bytes, copied.
  const auto put = [&](unsigned char* dst, int64_t r, int64_t h) {
    std::memcpy(
        dst,
        tab + (static_cast<size_t>(bucket[static_cast<size_t>(r)]) * static_cast<size_t>(heads) +
               static_cast<size_t>(h)) *
                  es,
        es);
  };
  const size_t row_bytes = static_cast<size_t>(n_k) * es;
  // About 64 KiB of output per chunk, whole rows.
  const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>((size_t{1} << 16) / row_bytes));
  parallel_for(heads * n_q, grain, [&](int64_t begin, int64_t end) {
    for (int64_t hi = begin; hi < end; ++hi) {
      const int64_t h = hi / n_q, i = hi % n_q;
      unsigned char* row = out + static_cast<size_t>(hi) * row_bytes;
      const int64_t first = n_q - 1 - i;  // r of key 0
      if (hi == begin || i == 0) {
        for (int64_t j = 0; j < n_k; ++j) put(row + static_cast<size_t>(j) * es, first + j, h);
      } else {
        // Row i − 1 holds r = first + 1 … first + n_k: shifted right by one key.
        std::memcpy(row + es, row - row_bytes, row_bytes - es);
        put(row, first, h);
      }
    }
  });
}

}  // namespace lmo::fast
