// gpu/api_attention.h on top of gpu/launch_attention.h: fast/attention.cc's and
// fast/mla_decode.cc's validation (kernels/api/validate_attention.h, before any CUDA call) plus the
// kernels' size limits, then copy in, launch, wait, copy out (gpu/host_call.h).
#include "gpu/api_attention.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/host_call.h"
#include "gpu/launch_attention.h"
#include "kernels/api/mla_rope_angles.h"
#include "kernels/api/validate_attention.h"

namespace lmo::gpu {
namespace {

using detail::bytes_of;
using detail::Call;
using detail::check_storage;
using kernels::detail::check_count;
using kernels::detail::check_elements;
using kernels::detail::check_ptr;
using kernels::detail::checked_scale;
using kernels::detail::fail_attention;

// value ≤ max, a limit of the kernels (gpu/attention.cuh).
void check_limit(const char* fn, const char* name, int64_t value, int64_t max) {
  if (value > max) {
    fail_attention(fn, std::string(name) + " is " + std::to_string(value) + ", expected <= " +
                           std::to_string(max) + " (the GPU attention kernel's limit)");
  }
}

void check_args(const char* fn, Storage s, const void* q, const void* k, const void* v,
                const void* o, const AttentionArgs& a) {
  check_storage(fn, s);
  kernels::detail::check_attention_args(fn, q, k, v, o, a, [&] {
    check_limit(fn, "head_dim", a.head_dim, kGpuAttentionMaxDim);
    check_elements(fn, "heads*head_dim", a.heads, a.head_dim);
    check_elements(fn, "q_len*heads*head_dim", a.q_len, a.heads * a.head_dim);
    check_elements(fn, "kv_len*heads*head_dim", a.kv_len, a.heads * a.head_dim);
  });
}

// Validated arguments: copy in, launch, copy out.
void run_attention(const char* fn, Storage s, const void* q, const void* k, const void* v, void* o,
                   AttentionArgs a, float scale) {
  if (a.q_len == 0) return;
  const int64_t hd = a.heads * a.head_dim, gd = a.kv_heads * a.head_dim;
  Call call(fn);
  const void* dq = call.upload(q, bytes_of(s, a.q_len * hd));
  // kv_len = 0 (every row NaN): one element so that the device pointers are valid.
  const int64_t kv = a.kv_len > 0 ? a.kv_len * gd : 1;
  const void* dk = a.kv_len > 0 ? call.upload(k, bytes_of(s, kv)) : call.alloc(bytes_of(s, kv));
  const void* dv = a.kv_len > 0 ? call.upload(v, bytes_of(s, kv)) : call.alloc(bytes_of(s, kv));
  if (a.mask == AttentionMask::document && a.kv_len > 0) {
    a.doc_ids = static_cast<const int64_t*>(
        call.upload(a.doc_ids, static_cast<size_t>(a.kv_len) * sizeof(int64_t)));
  } else {
    a.doc_ids = nullptr;
  }
  void* d_o = call.alloc(bytes_of(s, a.q_len * hd));
  float* scratch = call.alloc_floats(attention_scratch_floats(a));
  call.run([=] { return launch_attention(s, dq, dk, dv, d_o, a, scale, scratch, nullptr); });
  call.download(o, d_o, bytes_of(s, a.q_len * hd));
  call.finish();
}

}  // namespace

void attention(Storage s, const void* q, const void* k, const void* v, void* o,
               const AttentionArgs& a) {
  constexpr const char* fn = "gpu::attention";
  check_args(fn, s, q, k, v, o, a);
  const float scale = checked_scale(fn, a.scale, a.head_dim, "1/√d");
  run_attention(fn, s, q, k, v, o, a, scale);
}

void attention_decode(Storage s, const void* q, const void* k, const void* v, void* o,
                      int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t cache_len,
                      int64_t window, float softcap, float scale) {
  constexpr const char* fn = "gpu::attention_decode";
  const AttentionArgs a = kernels::detail::decode_attention_args(fn, heads, kv_heads, head_dim,
                                                                 cache_len, window, softcap, scale);
  check_args(fn, s, q, k, v, o, a);
  run_attention(fn, s, q, k, v, o, a, checked_scale(fn, scale, head_dim, "1/√d"));
}

void mla_decode(Storage s, const void* q_c, const void* q_r, const void* c_kv, const void* k_r,
                const void* w_uk, void* o, const MlaDecodeArgs& a) {
  constexpr const char* fn = "gpu::mla_decode";
  check_storage(fn, s);
  check_count(fn, "heads", a.heads, 1);
  check_count(fn, "head_dim", a.head_dim, 1);
  check_count(fn, "rope_dim", a.rope_dim, 2);
  if (a.rope_dim % 2 != 0) {
    fail_attention(
        fn, "rope_dim is " + std::to_string(a.rope_dim) + ", expected an even number (RoPE pairs)");
  }
  check_count(fn, "latent_dim", a.latent_dim, 1);
  check_count(fn, "cache_len", a.cache_len, 1);
  check_limit(fn, "latent_dim", a.latent_dim, kGpuAttentionMaxDim);
  check_limit(fn, "latent_dim+rope_dim", a.latent_dim + a.rope_dim, kGpuAttentionMaxKeyDim);
  check_elements(fn, "heads*head_dim", a.heads, a.head_dim);
  check_elements(fn, "latent_dim*heads*head_dim", a.latent_dim, a.heads * a.head_dim);
  check_elements(fn, "heads*(latent_dim+rope_dim)", a.heads, a.latent_dim + a.rope_dim);
  check_elements(fn, "cache_len*(latent_dim+rope_dim)", a.cache_len, a.latent_dim + a.rope_dim);
  const std::vector<double> angle = kernels::mla_rope_angles(fn, a);
  const float scale = checked_scale(fn, a.scale, a.head_dim + a.rope_dim, "1/√(d_h + d_h^R)");
  check_ptr(fn, "q_c", q_c, true);
  check_ptr(fn, "q_r", q_r, true);
  check_ptr(fn, "c_kv", c_kv, true);
  check_ptr(fn, "k_r", k_r, true);
  check_ptr(fn, "w_uk", w_uk, true);
  check_ptr(fn, "o", o, true);
  const int64_t h = a.heads, dh = a.head_dim, dr = a.rope_dim, dc = a.latent_dim, t = a.cache_len,
                half = dr / 2;
  // RoPE at position t − 1 (F10, F11): cos and sin of fast::mla_rope_angles in double, each
  // rounded once to f32, as fast/mla_decode.cc forms them.
  std::vector<float> cos_sin(static_cast<size_t>(dr));
  for (int64_t j = 0; j < half; ++j) {
    cos_sin[static_cast<size_t>(j)] = static_cast<float>(std::cos(angle[static_cast<size_t>(j)]));
    cos_sin[static_cast<size_t>(half + j)] =
        static_cast<float>(std::sin(angle[static_cast<size_t>(j)]));
  }
  Call call(fn);
  const void* dqc = call.upload(q_c, bytes_of(s, h * dh));
  const void* dqr = call.upload(q_r, bytes_of(s, h * dr));
  const void* dckv = call.upload(c_kv, bytes_of(s, t * dc));
  const void* dkr = call.upload(k_r, bytes_of(s, t * dr));
  const void* dw = call.upload(w_uk, bytes_of(s, dc * h * dh));
  const auto* dcs =
      static_cast<const float*>(call.upload(cos_sin.data(), cos_sin.size() * sizeof(float)));
  auto* work = static_cast<float*>(call.alloc(static_cast<size_t>(h * (dc + dr)) * sizeof(float)));
  float* scratch = call.alloc_floats(mla_scratch_floats(a));
  void* d_o = call.alloc(bytes_of(s, h * dc));
  call.run([=] {
    return launch_mla_decode(s, dqc, dqr, dckv, dkr, dw, dcs, work, scratch, d_o, a, scale,
                             nullptr);
  });
  call.download(o, d_o, bytes_of(s, h * dc));
  call.finish();
}

}  // namespace lmo::gpu
