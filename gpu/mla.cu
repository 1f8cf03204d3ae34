// Launcher of gpu/mla.cuh's absorbed MLA decode: the query kernel (q̃ and the rotated q^R, in
// f32), then gpu/attention_f32.cuh over the latents, for the three storage formats.
#include "gpu/launch_attention.h"
#include "gpu/mla.cuh"

namespace lmo::gpu {

int64_t mla_scratch_floats(const MlaDecodeArgs& a) {
  return attn_f32::split_partial_floats(a.heads, a.cache_len, a.latent_dim);
}

cudaError_t launch_mla_decode(Storage s, const void* q_c, const void* q_r, const void* c_kv,
                              const void* k_r, const void* w_uk, const float* cos_sin, float* work,
                              float* scratch, void* o, const MlaDecodeArgs& a, float scale,
                              cudaStream_t stream) {
  const int64_t h = a.heads, dc = a.latent_dim, dr = a.rope_dim;
  float* q_tilde = work;
  float* q_rot = work + h * dc;
  AttentionShape sh;
  sh.q_len = 1;
  sh.kv_len = a.cache_len;
  sh.heads = h;
  sh.kv_heads = 1;  // every head reads the same latents (MQA)
  sh.dk = sh.dv = dc;
  sh.dk2 = dr;
  sh.ldq = sh.ldo = h * dc;
  sh.ldq2 = h * dr;
  sh.ldk = sh.ldv = dc;
  sh.ldk2 = dr;
  sh.mask = attn::kCausal;
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    mla_query_kernel<T><<<row_grid(h), kThreads, 0, stream>>>(
        static_cast<const T*>(q_c), static_cast<const T*>(q_r), static_cast<const T*>(w_uk),
        cos_sin, h, a.head_dim, dr, dc, a.half_split, q_tilde, q_rot);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    const T* latents = static_cast<const T*>(c_kv);
    return launch_attention_f32_kernel<float, T>(sh, scale, 0.0f, q_tilde, q_rot, latents,
                                                 static_cast<const T*>(k_r), latents,
                                                 static_cast<T*>(o), scratch, stream);
  });
}

}  // namespace lmo::gpu
