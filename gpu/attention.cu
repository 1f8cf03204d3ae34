// Launcher of gpu/attention_f32.cuh (attention and its decode step) for the three storage formats.
#include "gpu/attention_f32.cuh"
#include "gpu/launch_attention.h"

namespace lmo::gpu {
namespace {

int mask_code(AttentionMask m) {
  switch (m) {
    case AttentionMask::none:
      return attn::kNone;
    case AttentionMask::causal:
      return attn::kCausal;
    case AttentionMask::window:
      return attn::kWindow;
    case AttentionMask::document:
      return attn::kDocument;
  }
  return -1;
}

}  // namespace

int64_t attention_scratch_floats(const AttentionArgs& a) {
  return attn_f32::split_partial_floats(a.q_len * a.heads, a.kv_len, a.head_dim);
}

cudaError_t launch_attention(Storage s, const void* q, const void* k, const void* v, void* o,
                             const AttentionArgs& a, float scale, float* scratch,
                             cudaStream_t stream) {
  if (a.q_len == 0) return cudaSuccess;
  AttentionShape sh;
  sh.q_len = a.q_len;
  sh.kv_len = a.kv_len;
  sh.heads = a.heads;
  sh.kv_heads = a.kv_heads;
  sh.dk = sh.dv = a.head_dim;
  sh.ldq = sh.ldo = a.heads * a.head_dim;
  sh.ldk = sh.ldv = a.kv_heads * a.head_dim;
  sh.mask = mask_code(a.mask);
  if (sh.mask < 0) return cudaErrorInvalidValue;
  sh.window = a.window;
  sh.doc = a.doc_ids;
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    return launch_attention_f32_kernel<T, T>(
        sh, scale, a.softcap, static_cast<const T*>(q), nullptr, static_cast<const T*>(k), nullptr,
        static_cast<const T*>(v), static_cast<T*>(o), scratch, stream);
  });
}

}  // namespace lmo::gpu
