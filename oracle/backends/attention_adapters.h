// Adapters of the attention ops (oracle/ops/attention.h: attention and attention_decode;
// oracle/ops/paged_attention.h: paged_attention_decode; oracle/ops/mla.h: mla_decode) shared by
// the fast and gpu backends: fast/attention.h, fast/mla_decode.h and gpu/api_attention.h take the
// same argument types (kernels/api/attention_args.h), so one template per op serves both, as
// oracle/backends/moe_adapters.h does for the MoE ops. K names the library: using Storage (f32,
// bf16, f16), and pointers to attention, attention_decode and mla_decode with fast/attention.h's
// and fast/mla_decode.h's signatures.
//
// The scale is the case's, rounded once to f32 as the reference rounds it for f32 compute, or 0
// when the case gives none: both libraries then use 1/√d (1/√(d_h + d_h^R) for MLA) rounded once
// from double to f32, the reference's constant. MLA with YaRN's temperature is the exception: the
// adapter multiplies that constant by m² in double (as DeepSeek's code does with its
// softmax_scale) and passes the product, rounded once to f32.
#pragma once

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "fast/kernel_api.h"
#include "oracle/backends/adapters.h"
#include "oracle/core/decimal_text.h"
#include "oracle/ops/attention.h"
#include "oracle/ops/mla.h"
#include "oracle/ops/paged_attention.h"
#include "oracle/ops/paged_mla.h"

namespace lmo::oracle::op_adapters {

inline fast::AttentionMask attention_mask(ref::MaskKind m) {
  switch (m) {
    case ref::MaskKind::kNone:
      return fast::AttentionMask::none;
    case ref::MaskKind::kCausal:
      return fast::AttentionMask::causal;
    case ref::MaskKind::kSlidingWindow:
      return fast::AttentionMask::window;
    case ref::MaskKind::kDocument:
      return fast::AttentionMask::document;
  }
  throw std::logic_error("backend adapter: unknown attention mask");
}

// attention and attention_decode: inputs q, k, v; output o.
template <class K>
void run_attention(const Op& op, typename K::Storage s, const InputSet& in,
                   std::vector<GuardedBuffer>& out) {
  const AttentionParams& p = op_as<AttentionOp>(op).params();
  const auto cap = static_cast<float>(p.softcap);
  const void* q = input_ptr(in, "q");
  const void* k = input_ptr(in, "k");
  const void* v = input_ptr(in, "v");
  if (p.decode) {
    K::attention_decode(s, q, k, v, out[0].data(), p.heads, p.kv_heads, p.head_dim, p.tokens,
                        p.window, cap, static_cast<float>(p.scale));
    return;
  }
  // The reference's document ids (one per position, from doc_starts; none for other masks).
  const ref::AttentionConfig cfg = attention_config(p);
  fast::AttentionArgs a;
  a.heads = p.heads;
  a.kv_heads = p.kv_heads;
  a.head_dim = p.head_dim;
  a.q_len = a.kv_len = p.tokens;
  a.mask = attention_mask(p.mask);
  a.window = p.window;
  a.doc_ids = cfg.document_ids.empty() ? nullptr : cfg.document_ids.data();
  a.softcap = cap;
  a.scale = static_cast<float>(p.scale);
  if (p.cu_seqlens.empty()) {
    K::attention(s, q, k, v, out[0].data(), a);
    return;
  }
  // Packed sequences (varlen): the kernel on each sequence's rows, as FlashAttention's varlen
  // entry point does per sequence.
  const size_t bytes = s == K::Storage::f32 ? 4 : 2;  // bf16 and f16 are 16-bit patterns
  const auto at = [bytes](const void* base, int64_t row, int64_t width) {
    return static_cast<const char*>(base) + static_cast<size_t>(row * width) * bytes;
  };
  const int64_t qw = p.heads * p.head_dim, kw = p.kv_heads * p.head_dim;
  auto* o = static_cast<char*>(out[0].data());
  for (size_t i = 0; i + 1 < p.cu_seqlens.size(); ++i) {
    const int64_t b = p.cu_seqlens[i], e = p.cu_seqlens[i + 1];
    a.q_len = a.kv_len = e - b;
    K::attention(s, at(q, b, qw), at(k, b, kw), at(v, b, kw),
                 o + static_cast<size_t>(b * qw) * bytes, a);
  }
}

// paged_attention_decode: inputs q, k_pages, v_pages, page_table, seq_lens; output o. Each
// sequence's keys and values are gathered from the pool through its page table into a dense
// cache (token t: slot t mod P of page page_table[b][⌊t/P⌋], as the page-table walk of a paged
// kernel reads them, through PagedDecodeParams' checked_length, checked_page and offset, as the
// op does), and the library's decode kernel runs on it.
template <class K>
void run_paged_decode(const Op& op, typename K::Storage s, const InputSet& in,
                      std::vector<GuardedBuffer>& out) {
  const PagedDecodeParams& p = op_as<PagedDecodeOp>(op).params();
  const AttentionParams& a = p.heads;
  const size_t bytes = kernels::storage_bytes(s);
  const std::vector<int64_t> table = in.ints("page_table"), lens = in.ints("seq_lens");
  const auto* kp = static_cast<const char*>(input_ptr(in, "k_pages"));
  const auto* vp = static_cast<const char*>(input_ptr(in, "v_pages"));
  const auto* q = static_cast<const char*>(input_ptr(in, "q"));
  auto* o = static_cast<char*>(out[0].data());
  const int64_t qw = a.heads * a.head_dim, kw = a.kv_heads * a.head_dim;
  const size_t row = static_cast<size_t>(a.head_dim) * bytes;
  std::vector<char> k, v;
  for (int64_t b = 0; b < p.batch(); ++b) {
    const int64_t len = p.checked_length(lens, b);
    k.assign(static_cast<size_t>(len * kw) * bytes, 0);
    v.assign(k.size(), 0);
    for (int64_t t = 0; t < len; ++t) {
      const int64_t page = p.checked_page(table, b, t);
      for (int64_t h = 0; h < a.kv_heads; ++h) {
        const size_t from = static_cast<size_t>(p.offset(page, t % p.page_size, h)) * bytes;
        const size_t to = static_cast<size_t>(t * kw + h * a.head_dim) * bytes;
        std::copy_n(kp + from, row, k.data() + to);
        std::copy_n(vp + from, row, v.data() + to);
      }
    }
    K::attention_decode(s, q + static_cast<size_t>(b * qw) * bytes, k.data(), v.data(),
                        o + static_cast<size_t>(b * qw) * bytes, a.heads, a.kv_heads, a.head_dim,
                        len, a.window, static_cast<float>(a.softcap), static_cast<float>(a.scale));
  }
}

// The kernels' MLA arguments for a cache of cache_len latents (YaRN's constants as decimals).
inline fast::MlaDecodeArgs mla_decode_args(const MlaDecodeParams& p, int64_t cache_len) {
  fast::MlaDecodeArgs a;
  a.heads = p.heads;
  a.head_dim = p.head_dim;
  a.rope_dim = p.rope_dim;
  a.latent_dim = p.latent_dim;
  a.cache_len = cache_len;
  a.rope.base = p.rope_base;
  a.half_split = p.layout == ref::RopeLayout::kHalfSplit;
  if (p.yarn) {
    a.rope.scaling = fast::RopeScaling::yarn;
    a.rope.factor = decimal_value(p.yarn->factor);
    a.rope.original_context = p.yarn->original_context;
    a.rope.beta_fast = decimal_value(p.yarn->beta_fast);
    a.rope.beta_slow = decimal_value(p.yarn->beta_slow);
    if (!p.yarn->mscale_all_dim.empty()) {
      const double m = ref::yarn_mscale(a.rope.factor, decimal_value(p.yarn->mscale_all_dim));
      a.scale = static_cast<float>(m * m / std::sqrt(static_cast<double>(p.head_dim + p.rope_dim)));
    }
  }
  return a;
}

// mla_decode: inputs q_c, q_r, c_kv, k_r, w_uk; output o.
template <class K>
void run_mla_decode(const Op& op, typename K::Storage s, const InputSet& in,
                    std::vector<GuardedBuffer>& out) {
  const MlaDecodeParams& p = op_as<MlaDecodeOp>(op).params();
  K::mla_decode(s, input_ptr(in, "q_c"), input_ptr(in, "q_r"), input_ptr(in, "c_kv"),
                input_ptr(in, "k_r"), input_ptr(in, "w_uk"), out[0].data(),
                mla_decode_args(p, p.cache_len));
}

// paged_mla_decode: each sequence's latents and rotary keys gathered from kv_pages through the
// page table (host copies of the storage bytes), then the dense mla_decode kernel per sequence.
template <class K>
void run_paged_mla_decode(const Op& op, typename K::Storage s, const InputSet& in,
                          std::vector<GuardedBuffer>& out) {
  const PagedMlaParams& p = op_as<PagedMlaDecodeOp>(op).params();
  const MlaDecodeParams& m = p.mla;
  const size_t bytes = kernels::storage_bytes(s);
  const std::vector<int64_t> table = in.ints("page_table"), lens = in.ints("seq_lens");
  const auto* pool = static_cast<const char*>(input_ptr(in, "kv_pages"));
  const auto* q_c = static_cast<const char*>(input_ptr(in, "q_c"));
  const auto* q_r = static_cast<const char*>(input_ptr(in, "q_r"));
  auto* o = static_cast<char*>(out[0].data());
  const int64_t qc = m.heads * m.head_dim, qr = m.heads * m.rope_dim, oc = m.heads * m.latent_dim;
  const size_t latent = static_cast<size_t>(m.latent_dim) * bytes;
  const size_t rope = static_cast<size_t>(m.rope_dim) * bytes;
  std::vector<char> c_kv, k_r;
  for (int64_t b = 0; b < p.batch(); ++b) {
    const int64_t len = p.checked_length(lens, b);
    c_kv.assign(static_cast<size_t>(len) * latent, 0);
    k_r.assign(static_cast<size_t>(len) * rope, 0);
    for (int64_t t = 0; t < len; ++t) {
      const char* at =
          pool +
          static_cast<size_t>(p.offset(p.checked_page(table, b, t), t % p.page_size)) * bytes;
      std::copy_n(at, latent, c_kv.data() + static_cast<size_t>(t) * latent);
      std::copy_n(at + latent, rope, k_r.data() + static_cast<size_t>(t) * rope);
    }
    K::mla_decode(s, q_c + static_cast<size_t>(b * qc) * bytes,
                  q_r + static_cast<size_t>(b * qr) * bytes, c_kv.data(), k_r.data(),
                  input_ptr(in, "w_uk"), o + static_cast<size_t>(b * oc) * bytes,
                  mla_decode_args(m, len));
  }
}

}  // namespace lmo::oracle::op_adapters
