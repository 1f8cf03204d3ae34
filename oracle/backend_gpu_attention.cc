#include "oracle/backend_gpu_attention.h"

#include <stdexcept>
#include <string>

#include "gpu/api_attention.h"
#include "oracle/backend_adapters.h"
#include "oracle/ops/attention.h"
#include "oracle/ops/mla.h"

namespace lmo::oracle {
namespace {

using op_adapters::input_ptr;
using op_adapters::op_as;

gpu::AttentionMask gpu_mask(ref::MaskKind m) {
  switch (m) {
    case ref::MaskKind::kNone:
      return gpu::AttentionMask::none;
    case ref::MaskKind::kCausal:
      return gpu::AttentionMask::causal;
    case ref::MaskKind::kSlidingWindow:
      return gpu::AttentionMask::window;
    case ref::MaskKind::kDocument:
      return gpu::AttentionMask::document;
  }
  throw std::logic_error("gpu backend: unknown attention mask");
}

}  // namespace

// The scale is left at 0: gpu/api_attention.h then uses 1/√d (or 1/√(d_h + d_h^R)) rounded once
// to f32, the reference's constant.
void run_gpu_attention(const Op& op, gpu::Storage s, const InputSet& in,
                       std::vector<GuardedBuffer>& out) {
  const AttentionParams& p = op_as<AttentionOp>(op).params();
  const auto cap = static_cast<float>(p.softcap);
  if (p.decode) {
    gpu::attention_decode(s, input_ptr(in, "q"), input_ptr(in, "k"), input_ptr(in, "v"),
                          out[0].data(), p.heads, p.kv_heads, p.head_dim, p.tokens, p.window, cap);
    return;
  }
  // The reference's document ids (one per position, from doc_starts).
  const ref::AttentionConfig cfg = attention_config(p);
  gpu::AttentionArgs a;
  a.heads = p.heads;
  a.kv_heads = p.kv_heads;
  a.head_dim = p.head_dim;
  a.q_len = a.kv_len = p.tokens;
  a.mask = gpu_mask(p.mask);
  a.window = p.window;
  a.doc_ids = cfg.document_ids.empty() ? nullptr : cfg.document_ids.data();
  a.softcap = cap;
  gpu::attention(s, input_ptr(in, "q"), input_ptr(in, "k"), input_ptr(in, "v"), out[0].data(), a);
}

void run_gpu_mla_decode(const Op& op, gpu::Storage s, const InputSet& in,
                        std::vector<GuardedBuffer>& out) {
  const MlaDecodeParams& p = op_as<MlaDecodeOp>(op).params();
  gpu::MlaDecodeArgs a;
  a.heads = p.heads;
  a.head_dim = p.head_dim;
  a.rope_dim = p.rope_dim;
  a.latent_dim = p.latent_dim;
  a.cache_len = p.cache_len;
  a.rope_base = p.rope_base;
  a.half_split = p.layout == ref::RopeLayout::kHalfSplit;
  gpu::mla_decode(s, input_ptr(in, "q_c"), input_ptr(in, "q_r"), input_ptr(in, "c_kv"),
                  input_ptr(in, "k_r"), input_ptr(in, "w_uk"), out[0].data(), a);
}

std::string gpu_attention_unsupported(const std::string& op_name, const Op& op) {
  const std::string limit = std::to_string(gpu::kGpuAttentionMaxDim);
  if (op_name == "attention" || op_name == "attention_decode") {
    if (op_as<AttentionOp>(op).params().head_dim > gpu::kGpuAttentionMaxDim) {
      return "the GPU attention kernel takes d <= " + limit;
    }
  } else if (op_name == "mla_decode") {
    const MlaDecodeParams& p = op_as<MlaDecodeOp>(op).params();
    if (p.latent_dim > gpu::kGpuAttentionMaxDim ||
        p.latent_dim + p.rope_dim > gpu::kGpuAttentionMaxKeyDim) {
      return "the GPU MLA kernel takes d_c <= " + limit +
             " and d_c + d_rope <= " + std::to_string(gpu::kGpuAttentionMaxKeyDim);
    }
  }
  return "";
}

}  // namespace lmo::oracle
