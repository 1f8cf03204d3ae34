// Argument checks of the attention entry points (fast/attention.h, fast/mla_decode.h and
// gpu/api_attention.h, which share kernels/api/attention_args.h's argument types): every violation
// throws std::invalid_argument naming the function, the parameter, its value and the expectation.
// The storage is checked by the caller (check_storage, first), and each library adds its own size
// limits (OpenBLAS's 32-bit dimensions, the GPU kernels' widths) through a callback, run where
// those limits belong in the order of the checks.
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/api/attention_args.h"
#include "kernels/api/validate.h"

namespace lmo::kernels::detail {

[[noreturn]] inline void fail_attention(const char* fn, const std::string& what) {
  throw std::invalid_argument(std::string(fn) + ": " + what);
}

// The scale to use: `scale`, or 1/√dims rounded once from double (`dflt` names that default).
inline float checked_scale(const char* fn, float scale, int64_t dims, const char* dflt) {
  if (scale == 0.0f) return static_cast<float>(1.0 / std::sqrt(static_cast<double>(dims)));
  if (!(scale > 0.0f) || std::isinf(scale)) {
    fail_attention(fn, "scale is " + std::to_string(scale) +
                           ", expected a finite scale > 0 (0: " + dflt + ")");
  }
  return scale;
}

// a·b, a product of the shape (elements of an operand), below 2^62: the kernels' int64 index
// arithmetic and byte counts (4 bytes an element) cannot overflow.
inline void check_elements(const char* fn, const char* name, int64_t a, int64_t b) {
  if (a > 0 && b > ((int64_t{1} << 62) - 1) / a) {
    fail_attention(fn, std::string(name) + " is " + std::to_string(a) + " x " + std::to_string(b) +
                           ", expected a product < 2^62");
  }
}

// Heads (g dividing h), widths and lengths, then size_limits() (the library's own bounds on the
// shape), the soft-cap, the mask (its window, or its document ids with T_q <= T_k), and the
// pointers that the call reads or writes.
template <class SizeLimits>
void check_attention_args(const char* fn, const void* q, const void* k, const void* v,
                          const void* o, const AttentionArgs& a, const SizeLimits& size_limits) {
  check_count(fn, "heads", a.heads, 1);
  check_count(fn, "kv_heads", a.kv_heads, 1);
  if (a.heads % a.kv_heads != 0) {
    fail_attention(fn, "kv_heads is " + std::to_string(a.kv_heads) +
                           ", expected a divisor of heads = " + std::to_string(a.heads));
  }
  check_count(fn, "head_dim", a.head_dim, 1);
  check_count(fn, "q_len", a.q_len, 0);
  check_count(fn, "kv_len", a.kv_len, 0);
  size_limits();
  if (a.softcap != 0.0f) check_cap(fn, a.softcap);
  switch (a.mask) {
    case AttentionMask::none:
    case AttentionMask::causal:
      break;
    case AttentionMask::window:
      check_count(fn, "window", a.window, 1);
      break;
    case AttentionMask::document:
      check_ptr(fn, "doc_ids", a.doc_ids, a.kv_len > 0);
      if (a.q_len > a.kv_len) {
        fail_attention(fn, "q_len is " + std::to_string(a.q_len) +
                               ", expected <= kv_len = " + std::to_string(a.kv_len) +
                               " with a document mask (the queries are the last positions)");
      }
      break;
    default:
      fail_attention(fn, "mask is " + std::to_string(static_cast<int>(a.mask)) +
                             ", expected none, causal, window or document");
  }
  check_ptr(fn, "q", q, a.q_len > 0);
  check_ptr(fn, "o", o, a.q_len > 0);
  check_ptr(fn, "k", k, a.q_len > 0 && a.kv_len > 0);
  check_ptr(fn, "v", v, a.q_len > 0 && a.kv_len > 0);
}

// The arguments of attention_decode (F16: one query token against a KV cache of cache_len rows
// whose last is the current token's; causal, or a sliding window of `window` keys when
// window > 0) as the attention call they stand for, after the checks of cache_len and window.
inline AttentionArgs decode_attention_args(const char* fn, int64_t heads, int64_t kv_heads,
                                           int64_t head_dim, int64_t cache_len, int64_t window,
                                           float softcap, float scale) {
  check_count(fn, "cache_len", cache_len, 1);
  check_count(fn, "window", window, 0);
  AttentionArgs a;
  a.heads = heads;
  a.kv_heads = kv_heads;
  a.head_dim = head_dim;
  a.q_len = 1;
  a.kv_len = cache_len;
  a.mask = window > 0 ? AttentionMask::window : AttentionMask::causal;
  a.window = window;
  a.softcap = softcap;
  a.scale = scale;
  return a;
}

}  // namespace lmo::kernels::detail
