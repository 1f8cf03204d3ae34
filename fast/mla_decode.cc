// Entry point of fast/mla_decode.h: the absorbed query (sgemv per head), the query's RoPE, and
// the attention over the latents through fast/attention_core-inl.h. Highway skeleton: compiled
// once per target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/mla_decode.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "fast/mla_decode.h"

#include <cmath>
#include <vector>

#include "fast/attention_core-inl.h"
#include "fast/blas.h"
#include "fast/f32_operand.h"
#include "fast/storage-inl.h"
#include "fast/threads.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {

void MlaDecode(Storage s, const void* q_c, const void* q_r, const void* c_kv, const void* k_r,
               const void* w_uk, void* o, const MlaDecodeArgs& a, const std::vector<double>& angle,
               float scale) {
  const int64_t h = a.heads, dh = a.head_dim, dr = a.rope_dim, dc = a.latent_dim, t = a.cache_len;
  // The cache (c^KV, k^R) stays in s, widened block by block where a tile reads it
  // (attention_core-inl.h).
  const detail::F32Operand qc(s, q_c, h * dh), qr(s, q_r, h * dr), wuk(s, w_uk, dc * h * dh);
  blas_single_threaded();
  // q̃_i[r] = Σ_k W^UK[r, i·d_h + k] q^C_i[k]: one d_c × d_h product per head.
  std::vector<float> q_tilde(static_cast<size_t>(h * dc));
  parallel_for(h, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      sgemv(dc, dh, wuk.get() + i * dh, h * dh, qc.get() + i * dh, q_tilde.data() + i * dc);
    }
  });
  // RoPE of q^R at position t − 1 (F10, F11): the angles (t − 1)·θ_k of mla_rope_angles.
  std::vector<float> q_rot(qr.get(), qr.get() + h * dr);
  const int64_t half = dr / 2;
  std::vector<float> cs(static_cast<size_t>(half)), sn(static_cast<size_t>(half));
  for (int64_t k = 0; k < half; ++k) {
    cs[k] = static_cast<float>(std::cos(angle[static_cast<size_t>(k)]));
    sn[k] = static_cast<float>(std::sin(angle[static_cast<size_t>(k)]));
  }
  for (int64_t i = 0; i < h; ++i) {
    const float* x = qr.get() + i * dr;
    float* y = q_rot.data() + i * dr;
    for (int64_t k = 0; k < half; ++k) {
      const int64_t ia = a.half_split ? k : 2 * k, ib = a.half_split ? k + half : 2 * k + 1;
      y[ia] = x[ia] * cs[k] - x[ib] * sn[k];
      y[ib] = x[ia] * sn[k] + x[ib] * cs[k];
    }
  }
  CoreArgs c;
  c.q_len = 1;
  c.kv_len = t;
  c.heads = h;
  c.kv_heads = 1;
  c.dk = c.dv = dc;
  c.dk2 = dr;
  c.q = q_tilde.data();
  c.ldq = h * dc;
  c.q2 = q_rot.data();
  c.ldq2 = h * dr;
  c.k = c.v = c_kv;
  c.ldk = c.ldv = dc;
  c.k2 = k_r;
  c.ldk2 = dr;
  c.ldo = h * dc;
  c.scale = scale;
  c.mask = AttentionMask::causal;
  WithStorage(s, [&](auto tag) {
    constexpr Storage S = decltype(tag)::value;
    AttentionCore<S>(c, static_cast<Elem<S>*>(o));
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <stdexcept>
#include <string>

#include "fast/rope.h"  // rope_inv_freq
#include "fast/kernel_api.h"

namespace lmo::fast {
HWY_EXPORT(MlaDecode);

void mla_decode(Storage s, const void* q_c, const void* q_r, const void* c_kv, const void* k_r,
                const void* w_uk, void* o, const MlaDecodeArgs& a) {
  const char* fn = "mla_decode";
  detail::check_storage(fn, s);
  detail::check_count(fn, "heads", a.heads, 1);
  detail::check_count(fn, "head_dim", a.head_dim, 1);
  detail::check_count(fn, "rope_dim", a.rope_dim, 2);
  if (a.rope_dim % 2 != 0) {
    throw std::invalid_argument(std::string(fn) + ": rope_dim is " + std::to_string(a.rope_dim) +
                                ", expected an even number (RoPE pairs)");
  }
  detail::check_count(fn, "latent_dim", a.latent_dim, 1);
  detail::check_count(fn, "cache_len", a.cache_len, 1);
  // Element counts within int64 index arithmetic (as gpu::mla_decode), before any product.
  detail::check_elements(fn, "heads*head_dim", a.heads, a.head_dim);
  detail::check_elements(fn, "latent_dim*heads*head_dim", a.latent_dim, a.heads * a.head_dim);
  detail::check_elements(fn, "heads*(latent_dim+rope_dim)", a.heads, a.latent_dim + a.rope_dim);
  detail::check_elements(fn, "cache_len*(latent_dim+rope_dim)", a.cache_len,
                         a.latent_dim + a.rope_dim);
  detail::check_blas_dim(fn, "heads*head_dim", a.heads * a.head_dim);
  detail::check_blas_dim(fn, "heads*latent_dim", a.heads * a.latent_dim);
  detail::check_blas_dim(fn, "cache_len", a.cache_len);
  const std::vector<double> angle = mla_rope_angles(fn, a);
  const float scale =
      detail::checked_scale(fn, a.scale, a.head_dim + a.rope_dim, "1/√(d_h + d_h^R)");
  detail::check_ptr(fn, "q_c", q_c, true);
  detail::check_ptr(fn, "q_r", q_r, true);
  detail::check_ptr(fn, "c_kv", c_kv, true);
  detail::check_ptr(fn, "k_r", k_r, true);
  detail::check_ptr(fn, "w_uk", w_uk, true);
  detail::check_ptr(fn, "o", o, true);
  HWY_DYNAMIC_DISPATCH(MlaDecode)(s, q_c, q_r, c_kv, k_r, w_uk, o, a, angle, scale);
}

}  // namespace lmo::fast
#endif  // HWY_ONCE
