#include "oracle/ops/attention.h"

#include <string>

#include "oracle/ops/families.h"
#include "oracle/ops/limits.h"
#include "reference/attention_enclosure.h"
#include "reference/kv_cache.h"

namespace lmo::oracle {

namespace {
// Rows [b, e) of m: one packed sequence's q, k or v (cu_seqlens).
template <class T>
ref::Mat<T> sequence_rows(const ref::Mat<T>& m, int64_t b, int64_t e) {
  return ref::Mat<T>(e - b, m.cols,
                     std::vector<T>(m.data.begin() + b * m.cols, m.data.begin() + e * m.cols));
}
}  // namespace

ref::AttentionConfig attention_config(const AttentionParams& p) {
  ref::AttentionConfig c;
  c.heads = p.heads;
  c.kv_heads = p.kv_heads;
  c.head_dim = p.head_dim;
  c.mask = p.mask;
  c.window = p.window;
  if (p.mask == ref::MaskKind::kDocument) {
    c.document_ids.assign(static_cast<size_t>(p.tokens), 0);
    for (int64_t start : p.doc_starts) {
      for (int64_t j = start; j < p.tokens; ++j) ++c.document_ids[static_cast<size_t>(j)];
    }
  }
  if (p.scale > 0) c.scale = ref::mp(p.scale);
  if (p.softcap > 0) c.soft_cap = ref::mp(p.softcap);
  return c;
}

std::vector<InputDecl> AttentionOp::inputs() const {
  const int64_t hd = p_.heads * p_.head_dim, gd = p_.kv_heads * p_.head_dim;
  return {{"q", {p_.queries(), hd}, Dist::kNormal, 0, p_.input_std},
          {"k", {p_.tokens, gd}, Dist::kNormal, 0, p_.input_std},
          {"v", {p_.tokens, gd}, Dist::kNormal, 0, 1}};
}

std::vector<OutputDecl> AttentionOp::outputs() const {
  return {{"o", {p_.queries(), p_.heads * p_.head_dim}}};
}

template <class T>
Outputs<T> AttentionOp::compute(const InputSet& in) const {
  const int64_t hd = p_.heads * p_.head_dim, gd = p_.kv_heads * p_.head_dim;
  const ref::Mat<T> q(p_.queries(), hd, in.values<T>("q"));
  const ref::Mat<T> k(p_.tokens, gd, in.values<T>("k"));
  const ref::Mat<T> v(p_.tokens, gd, in.values<T>("v"));
  Outputs<T> out(1);
  if (!p_.cu_seqlens.empty()) {
    out[0].values = varlen_attention<T>(q, k, v, {});
    return out;
  }
  if (!p_.decode) {
    out[0].values = ref::attention<T>(q, k, v, cfg_).data;
    return out;
  }
  // F16: the cache holds the t − 1 earlier steps; the decode step appends the current token's
  // k and v (the last rows) and attends with q over all t.
  ref::KvCache<T> cache(p_.kv_heads, p_.head_dim, p_.head_dim);
  for (int64_t j = 0; j + 1 < p_.tokens; ++j) cache.append(k.row(j), v.row(j));
  out[0].values =
      ref::decode_step<T>(q.row(0), k.row(p_.tokens - 1), v.row(p_.tokens - 1), cache, cfg_);
  return out;
}

std::optional<Outputs<ref::Ball>> AttentionOp::enclosure(const InputSet& in) const {
  const int64_t hd = p_.heads * p_.head_dim, gd = p_.kv_heads * p_.head_dim;
  const ref::Mat<double> q(p_.queries(), hd, in.values<double>("q"));
  const ref::Mat<double> k(p_.tokens, gd, in.values<double>("k"));
  const ref::Mat<double> v(p_.tokens, gd, in.values<double>("v"));
  // F16's decode step is attention of its one query (the last position) over the whole cache,
  // as in compute(in, recipe); packed sequences are attention on each one's rows.
  std::optional<std::vector<ref::Ball>> o;
  if (p_.cu_seqlens.empty()) {
    o = ref::attention_enclosure(q, k, v, cfg_);
  } else {
    const auto rows = sequence_rows<double>;
    o.emplace();
    for (size_t s = 0; o && s + 1 < p_.cu_seqlens.size(); ++s) {
      const int64_t b = p_.cu_seqlens[s], e = p_.cu_seqlens[s + 1];
      std::optional<std::vector<ref::Ball>> part =
          ref::attention_enclosure(rows(q, b, e), rows(k, b, e), rows(v, b, e), cfg_);
      if (part) {
        o->insert(o->end(), part->begin(), part->end());
      } else {
        o.reset();
      }
    }
  }
  if (!o) return GenericOp<AttentionOp>::enclosure(in);
  Outputs<ref::Ball> out(1);
  out[0].values = std::move(*o);
  return out;
}

bool AttentionOp::exact_elements(const InputSet& in, const std::vector<std::vector<int64_t>>& which,
                                 Outputs<ref::mp>& out) const {
  // F16's decode step runs through the KV cache (compute()), whose arithmetic attention_rows
  // does not reproduce bit for bit, and it is one row anyway; packed sequences number their
  // rows per sequence: both rerun whole.
  if (p_.decode || !p_.cu_seqlens.empty()) return false;
  const int64_t dv = p_.head_dim;
  // Element (i, head, c) sits at (i·h + head)·d_v + c: its task is the index over d_v.
  std::vector<int64_t> tasks;
  for (int64_t e : which.at(0)) {
    if (tasks.empty() || tasks.back() != e / dv) tasks.push_back(e / dv);
  }
  const int64_t hd = p_.heads * p_.head_dim, gd = p_.kv_heads * p_.head_dim;
  const ref::Mat<ref::mp> q(p_.queries(), hd, in.values<ref::mp>("q"));
  const ref::Mat<ref::mp> k(p_.tokens, gd, in.values<ref::mp>("k"));
  const ref::Mat<ref::mp> v(p_.tokens, gd, in.values<ref::mp>("v"));
  const std::vector<ref::mp> rows = ref::attention_rows<ref::mp>(q, k, v, cfg_, tasks);
  for (size_t t = 0; t < tasks.size(); ++t) {
    std::copy(rows.begin() + static_cast<std::ptrdiff_t>(t) * dv,
              rows.begin() + static_cast<std::ptrdiff_t>(t + 1) * dv,
              out[0].values.begin() + tasks[t] * dv);
  }
  return true;
}

std::vector<RoundingPoint> attention_rounding_points() {
  return {{"scores", {}, "f32", "the scaled (soft-capped) logits s = q·k·scale"},
          {"probs", {}, "f32",
           "P entering P·V (normalize=late: the unnormalized e^(s−m), FlashAttention's P̃)"},
          {"sum", {}, "f32", "the softmax denominator Σ e^(s−m), after each addition"},
          {"acc", {}, "f32", "the P·V accumulator, after each addition"},
          {"normalize", {"early", "late"}, "early",
           "early: p = e/Σe before P·V; late: (Σ ẽ·v)/Σe after it (FlashAttention)"}};
}

template <class T>
Outputs<T> AttentionOp::compute(const InputSet& in, const BoundRecipe& recipe) const {
  const int64_t hd = p_.heads * p_.head_dim, gd = p_.kv_heads * p_.head_dim;
  const ref::Mat<T> q(p_.queries(), hd, in.values<T>("q"));
  const ref::Mat<T> k(p_.tokens, gd, in.values<T>("k"));
  const ref::Mat<T> v(p_.tokens, gd, in.values<T>("v"));
  const ref::AttentionRounding<T> r = attention_rounding<T>(recipe);
  // F16's decode step is attention of its one query over the whole cache (reference/kv_cache.h,
  // decode_step), the query at the last position: the same call serves both ops.
  Outputs<T> out(1);
  out[0].values = p_.cu_seqlens.empty() ? ref::attention<T>(q, k, v, cfg_, r).data
                                        : varlen_attention<T>(q, k, v, r);
  out[0].error_scale = probs_error_scale<T>(recipe, v, [&](const ref::Mat<T>& values) {
    return p_.cu_seqlens.empty() ? ref::attention<T>(q, k, values, cfg_).data
                                 : varlen_attention<T>(q, k, values, {});
  });
  return out;
}

template <class T>
std::vector<T> AttentionOp::varlen_attention(const ref::Mat<T>& q, const ref::Mat<T>& k,
                                             const ref::Mat<T>& v,
                                             const ref::AttentionRounding<T>& r) const {
  // The reference's attention on each packed sequence's rows, side by side.
  const auto rows = sequence_rows<T>;
  std::vector<T> out;
  out.reserve(q.data.size());
  for (size_t s = 0; s + 1 < p_.cu_seqlens.size(); ++s) {
    const int64_t b = p_.cu_seqlens[s], e = p_.cu_seqlens[s + 1];
    const ref::Mat<T> o = ref::attention<T>(rows(q, b, e), rows(k, b, e), rows(v, b, e), cfg_, r);
    out.insert(out.end(), o.data.begin(), o.data.end());
  }
  return out;
}

namespace {

// h, g (a divisor of h; default h, plain multi-head attention), d, the softmax scale (default
// 1/√d), soft-cap and the input scale: what both ops read.
void read_heads(ParamReader& r, AttentionParams& p) {
  p.heads = r.integer("h", 1, kMaxHeads);
  p.kv_heads = r.integer("g", 1, kMaxHeads, p.heads);
  if (p.heads % p.kv_heads != 0) {
    r.fail("g", "expected a divisor of h = " + std::to_string(p.heads) +
                    " (query head j reads "
                    "KV head ⌊j·g/h⌋), got " +
                    std::to_string(p.kv_heads));
  }
  p.head_dim = r.integer("d", 1, kMaxWidth);
  p.scale = r.real("scale", 0, 1e6, 0.0);
  p.softcap = r.real("softcap", 0, 1e6, 0.0);
  p.input_std = r.real("qk_std", 1e-3, 1e3, 1.0);
}

std::unique_ptr<Op> make_attention(ParamReader& r) {
  AttentionParams p;
  read_heads(r, p);
  p.tokens = r.integer("tokens", 1, kMaxRows);
  const std::string mask = r.choice("mask", {"none", "causal", "window", "document"});
  if (mask == "none") p.mask = ref::MaskKind::kNone;
  if (mask == "causal") p.mask = ref::MaskKind::kCausal;
  if (mask == "window") {
    p.mask = ref::MaskKind::kSlidingWindow;
    // A window longer than the sequence is legal (a short prompt to Mistral): it hides nothing.
    p.window = r.integer("window", 1, kMaxPosition);
  }
  if (r.has("cu_seqlens")) {
    // FlashAttention's varlen layout: 0, the end of each sequence, the total.
    if (mask == "document") {
      r.fail("cu_seqlens",
             "expected no document mask with packed sequences (each is its own document)");
    }
    p.cu_seqlens = r.cumulative_lengths("cu_seqlens", p.tokens);
  }
  if (mask == "document") {
    p.mask = ref::MaskKind::kDocument;
    p.doc_starts = r.integers("doc_starts", 1, p.tokens - 1);
    for (size_t i = 1; i < p.doc_starts.size(); ++i) {
      if (p.doc_starts[i] <= p.doc_starts[i - 1]) {
        r.fail("doc_starts", "expected strictly increasing start positions");
      }
    }
  }
  return std::make_unique<AttentionOp>(p);
}

std::unique_ptr<Op> make_decode(ParamReader& r) {
  AttentionParams p;
  p.decode = true;
  read_heads(r, p);
  p.tokens = r.integer("cache_len", 1, kMaxRows);
  p.window = r.integer("window", 0, kMaxPosition, 0);
  p.mask = p.window > 0 ? ref::MaskKind::kSlidingWindow : ref::MaskKind::kCausal;
  return std::make_unique<AttentionOp>(p);
}

// Causal prefill with Llama 3 8B's head width and grouping (d 128, 4 query heads per KV head) on
// 8 query heads: 4d operations per visible (query, key) pair and query head (2d for q·k, 2d for
// p·v), against the sgemm of one head's Q Kᵀ.
ComputeShape prefill_bench() {
  static constexpr int64_t kHeads = 8, kKvHeads = 2, kDim = 128;
  return {
      "attention",
      [](int64_t tokens) {
        return nlohmann::json{
            {"tokens", tokens}, {"h", kHeads}, {"g", kKvHeads}, {"d", kDim}, {"mask", "causal"}};
      },
      [](int64_t tokens) {
        ComputeCount c;
        c.shape = "h" + std::to_string(kHeads) + " g" + std::to_string(kKvHeads) + " d" +
                  std::to_string(kDim) + " T" + std::to_string(tokens) + " causal";
        c.size = tokens * (tokens + 1) / 2;
        c.flops = 4.0 * kDim * kHeads * static_cast<double>(c.size);
        c.gemm_m = tokens, c.gemm_n = tokens, c.gemm_k = kDim;
        return c;
      }};
}

// One decode step of Llama 3 70B's attention (64 query heads on 8 KV heads, d 128) over a cache
// of 16·tokens: 4d operations per cached key and query head, against the sgemm of one KV group's
// query heads' Q Kᵀ.
ComputeShape decode_bench() {
  static constexpr int64_t kHeads = 64, kKvHeads = 8, kDim = 128, kCachePerToken = 16;
  return {
      "attention_decode",
      [](int64_t tokens) {
        return nlohmann::json{
            {"cache_len", kCachePerToken * tokens}, {"h", kHeads}, {"g", kKvHeads}, {"d", kDim}};
      },
      [](int64_t tokens) {
        ComputeCount c;
        const int64_t cache = kCachePerToken * tokens;
        c.shape = "h" + std::to_string(kHeads) + " g" + std::to_string(kKvHeads) + " d" +
                  std::to_string(kDim) + " cache " + std::to_string(cache);
        c.size = cache;
        c.flops = 4.0 * kDim * kHeads * static_cast<double>(cache);
        c.gemm_m = kHeads / kKvHeads, c.gemm_n = cache, c.gemm_k = kDim;
        return c;
      }};
}

}  // namespace

void add_attention_ops(std::vector<OpInfo>& ops) {
  ops.push_back(
      {"attention",
       "F15",
       "softmax(QKᵀ·scale (soft-capped) + mask) V, scale 1/√d unless given; h query "
       "heads on g KV heads (default h); causal, sliding window, document mask; "
       "packed sequences (cu_seqlens)",
       make_attention,
       KernelEntry::kAttention,
       {reduction_output(naive_policy(), "QKᵀ, softmax and PV: a composition of reductions")},
       {"flash-attention"},
       {},
       {prefill_bench()}});
  ops.push_back({"attention_decode",
                 "F15, F16",
                 "one query token against a KV cache of cache_len tokens (GQA, optional window)",
                 make_decode,
                 KernelEntry::kAttention,
                 {reduction_output(naive_policy(),
                                   "one query against the KV cache: QKᵀ, softmax "
                                   "and PV, reductions over the cache")},
                 {"flash-attention"},
                 {},
                 {decode_bench()}});
}

}  // namespace lmo::oracle
