// Entry points of fast/attention.h: argument checks, the f32 views of q, k and v, and the
// per-target tiled core (fast/attention_core-inl.h). Highway skeleton: compiled once per target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/attention.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "fast/attention.h"
#include "fast/attention_core-inl.h"
#include "fast/f32_operand.h"
#include "fast/storage-inl.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {

void Attention(Storage s, const void* q, const void* k, const void* v, void* o,
               const AttentionArgs& a, float scale) {
  const int64_t hd = a.heads * a.head_dim, gd = a.kv_heads * a.head_dim;
  const detail::F32Operand qf(s, q, a.q_len * hd), kf(s, k, a.kv_len * gd), vf(s, v, a.kv_len * gd);
  CoreArgs c;
  c.q_len = a.q_len;
  c.kv_len = a.kv_len;
  c.heads = a.heads;
  c.kv_heads = a.kv_heads;
  c.dk = c.dv = a.head_dim;
  c.q = qf.get();
  c.ldq = hd;
  c.k = kf.get();
  c.ldk = gd;
  c.v = vf.get();
  c.ldv = gd;
  c.ldo = hd;
  c.scale = scale;
  c.cap = a.softcap;
  c.mask = a.mask;
  c.window = a.window;
  c.doc_ids = a.doc_ids;
  WithStorage(s, [&](auto tag) {
    constexpr Storage S = decltype(tag)::value;
    AttentionCore<S>(c, static_cast<Elem<S>*>(o));
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <cmath>
#include <stdexcept>
#include <string>

#include "fast/validate.h"

namespace lmo::fast {
HWY_EXPORT(Attention);

namespace {

[[noreturn]] void fail(const char* fn, const std::string& what) {
  throw std::invalid_argument(std::string(fn) + ": " + what);
}

// OpenBLAS takes 32-bit dimensions and leading dimensions.
void check_blas_dim(const char* fn, const char* name, int64_t v) {
  if (v >= (int64_t{1} << 31)) {
    fail(fn, std::string(name) + " is " + std::to_string(v) + ", expected < 2^31");
  }
}

// The scale to use: a.scale, or 1/√d rounded once from double.
float checked_scale(const char* fn, float scale, int64_t head_dim) {
  if (scale == 0.0f) return static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
  if (!(scale > 0.0f) || std::isinf(scale)) {
    fail(fn, "scale is " + std::to_string(scale) + ", expected a finite scale > 0 (0: 1/√d)");
  }
  return scale;
}

void check_args(const char* fn, Storage s, const void* q, const void* k, const void* v,
                const void* o, const AttentionArgs& a) {
  detail::check_storage(fn, s);
  detail::check_count(fn, "heads", a.heads, 1);
  detail::check_count(fn, "kv_heads", a.kv_heads, 1);
  if (a.heads % a.kv_heads != 0) {
    fail(fn, "kv_heads is " + std::to_string(a.kv_heads) +
                 ", expected a divisor of heads = " + std::to_string(a.heads));
  }
  detail::check_count(fn, "head_dim", a.head_dim, 1);
  detail::check_count(fn, "q_len", a.q_len, 0);
  detail::check_count(fn, "kv_len", a.kv_len, 0);
  check_blas_dim(fn, "heads*head_dim", a.heads * a.head_dim);
  check_blas_dim(fn, "kv_len", a.kv_len);
  if (a.softcap != 0.0f) detail::check_cap(fn, a.softcap);
  switch (a.mask) {
    case AttentionMask::none:
    case AttentionMask::causal:
      break;
    case AttentionMask::window:
      detail::check_count(fn, "window", a.window, 1);
      break;
    case AttentionMask::document:
      detail::check_ptr(fn, "doc_ids", a.doc_ids, a.kv_len > 0);
      if (a.q_len > a.kv_len) {
        fail(fn, "q_len is " + std::to_string(a.q_len) +
                     ", expected <= kv_len = " + std::to_string(a.kv_len) +
                     " with a document mask (the queries are the last positions)");
      }
      break;
    default:
      fail(fn, "mask is " + std::to_string(static_cast<int>(a.mask)) +
                   ", expected none, causal, window or document");
  }
  detail::check_ptr(fn, "q", q, a.q_len > 0);
  detail::check_ptr(fn, "o", o, a.q_len > 0);
  detail::check_ptr(fn, "k", k, a.q_len > 0 && a.kv_len > 0);
  detail::check_ptr(fn, "v", v, a.q_len > 0 && a.kv_len > 0);
}

}  // namespace

void attention(Storage s, const void* q, const void* k, const void* v, void* o,
               const AttentionArgs& a) {
  check_args("attention", s, q, k, v, o, a);
  const float scale = checked_scale("attention", a.scale, a.head_dim);
  if (a.q_len == 0) return;
  HWY_DYNAMIC_DISPATCH(Attention)(s, q, k, v, o, a, scale);
}

void attention_decode(Storage s, const void* q, const void* k, const void* v, void* o,
                      int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t cache_len,
                      int64_t window, float softcap, float scale) {
  const char* fn = "attention_decode";
  detail::check_count(fn, "cache_len", cache_len, 1);
  detail::check_count(fn, "window", window, 0);
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
  check_args(fn, s, q, k, v, o, a);
  HWY_DYNAMIC_DISPATCH(Attention)(s, q, k, v, o, a, checked_scale(fn, scale, head_dim));
}

}  // namespace lmo::fast
#endif  // HWY_ONCE
