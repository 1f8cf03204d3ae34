// The per-row math of the attention kernel (gpu/attention_f32.cuh), as __host__ __device__
// functions so that host tests (tests/kernels/gpu_attention_math_test.cc,
// gpu_attention_f32_math_test.cc) check them against reference/attention.h on a machine without
// a device: which keys a query row sees and the online softmax over key chunks with the
// reference's NaN/±inf results. Plain C++ when not compiled by nvcc; no CUDA header.
#pragma once

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define LMO_HD __host__ __device__
#else
#define LMO_HD
#endif

namespace lmo::gpu::attn {

// Masks as fast::AttentionMask and gpu::AttentionMask number them.
enum MaskCode : int { kNone = 0, kCausal = 1, kWindow = 2, kDocument = 3 };

// The keys [lo, hi) a query at position p may see before the document check (kv_len keys; p may
// be negative when q_len > kv_len, then causal rows are empty). The document mask additionally
// needs doc[t] == doc[p] inside [lo, hi) (doc_visible).
struct KeyRange {
  int64_t lo = 0;
  int64_t hi = 0;
};
LMO_HD inline KeyRange key_range(int mask, int64_t window, int64_t kv_len, int64_t p) {
  KeyRange r;
  if (mask == kNone) {
    r.hi = kv_len;
    return r;
  }
  // causal, window and document: t ≤ p.
  r.hi = p + 1 < kv_len ? p + 1 : kv_len;
  if (r.hi < 0) r.hi = 0;
  if (mask == kWindow) {
    // 0 ≤ p − t < w  ⇔  p − w < t ≤ p.
    const int64_t first = p - window + 1;
    r.lo = first > 0 ? first : 0;
  }
  if (r.lo > r.hi) r.lo = r.hi;
  return r;
}

// Whether key t of [lo, hi) is visible: always, except for the document mask.
LMO_HD inline bool doc_visible(int mask, const int64_t* doc, int64_t t, int64_t p) {
  return mask != kDocument || doc[t] == doc[p];
}

// The running state of one row's online softmax over chunks of keys: the maximum m over the
// visible logits so far (NaN-propagating), and whether any key was visible. The kernels keep
// l = Σ e^{s_t − m} and the accumulators a_c = Σ e^{s_t − m} v_{t,c} rescaled by `alpha` at each
// new chunk.
//
// The reference's results (reference/attention.h, masked_softmax and attention): with the final
// maximum m of the visible logits, p_t = e^{s_t − m}/Σ; when m is finite, a visible −∞ logit has
// p = 0; when m is +∞ or NaN, or every visible logit is −∞ (m = −∞: e^{−∞ − (−∞)} = NaN), or no
// key is visible (0/0), every output of the row is NaN. A chunk whose maximum is still −∞ holds
// only −∞ logits (or none): it is skipped (alpha = 1, nothing added), which is exact when the
// final m is finite and irrelevant otherwise (the row is NaN). V is the kernel's arithmetic
// (double, or f32 for gpu/attention_f32.cuh) and L its exponential (L::exp(V)).
template <class V, class L>
struct OnlineMaxOf {
  V m = -INFINITY;
  bool any = false;

  // Folds in a chunk's maximum (−∞ for a chunk without a finite or +∞ visible logit) and
  // whether the chunk had a visible key. Returns whether the chunk contributes; sets alpha, the
  // factor by which l and the accumulators are rescaled before the chunk's terms are added.
  LMO_HD bool update(V chunk_max, bool chunk_any, V& alpha) {
    any = any || chunk_any;
    alpha = 1.0;
    const V prev = m;
    if (std::isnan(prev)) return false;  // the row is NaN already
    if (std::isnan(chunk_max)) {
      m = chunk_max;
      return false;
    }
    if (!(chunk_max > prev)) {
      // m unchanged; a chunk of only −∞ logits adds nothing while m = −∞.
      return prev != -INFINITY;
    }
    m = chunk_max;
    if (std::isinf(m)) return false;  // m = +∞: the row is NaN
    alpha = L::exp(prev - m);         // prev = −∞ gives 0: nothing was accumulated
    return true;
  }

  // Whether the row's outputs are the quotients a_c / l (else every output is NaN).
  LMO_HD bool finite_row() const { return any && std::isfinite(m); }
};

}  // namespace lmo::gpu::attn
