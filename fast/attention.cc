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
  // The queries as f32 (a tile copies its rows); keys and values stay in s, widened block by
  // block where a tile reads them (attention_core-inl.h).
  const detail::F32Operand qf(s, q, a.q_len * hd);
  CoreArgs c;
  c.q_len = a.q_len;
  c.kv_len = a.kv_len;
  c.heads = a.heads;
  c.kv_heads = a.kv_heads;
  c.dk = c.dv = a.head_dim;
  c.q = qf.get();
  c.ldq = hd;
  c.k = k;
  c.ldk = gd;
  c.v = v;
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

#include "fast/kernel_api.h"

namespace lmo::fast {
HWY_EXPORT(Attention);

namespace {

// The shape (OpenBLAS takes 32-bit dimensions and leading dimensions: check_blas_dim), and the
// operands' element counts (the kernels index them in int64).
void check_args(const char* fn, Storage s, const void* q, const void* k, const void* v,
                const void* o, const AttentionArgs& a) {
  detail::check_storage(fn, s);
  detail::check_attention_args(fn, q, k, v, o, a, [&] {
    detail::check_elements(fn, "heads*head_dim", a.heads, a.head_dim);
    detail::check_blas_dim(fn, "heads*head_dim", a.heads * a.head_dim);
    detail::check_blas_dim(fn, "kv_len", a.kv_len);
    detail::check_elements(fn, "q_len*heads*head_dim", a.q_len, a.heads * a.head_dim);
  });
}

}  // namespace

void attention(Storage s, const void* q, const void* k, const void* v, void* o,
               const AttentionArgs& a) {
  check_args("attention", s, q, k, v, o, a);
  const float scale = detail::checked_scale("attention", a.scale, a.head_dim, "1/√d");
  if (a.q_len == 0) return;
  HWY_DYNAMIC_DISPATCH(Attention)(s, q, k, v, o, a, scale);
}

void attention_decode(Storage s, const void* q, const void* k, const void* v, void* o,
                      int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t cache_len,
                      int64_t window, float softcap, float scale) {
  const char* fn = "attention_decode";
  const AttentionArgs a = detail::decode_attention_args(fn, heads, kv_heads, head_dim, cache_len,
                                                        window, softcap, scale);
  check_args(fn, s, q, k, v, o, a);
  HWY_DYNAMIC_DISPATCH(Attention)
  (s, q, k, v, o, a, detail::checked_scale(fn, scale, head_dim, "1/√d"));
}

}  // namespace lmo::fast
#endif  // HWY_ONCE
