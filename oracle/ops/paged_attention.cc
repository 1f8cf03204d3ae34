#include "oracle/ops/paged_attention.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "oracle/ops/families.h"
#include "oracle/ops/limits.h"
#include "reference/attention_enclosure.h"
#include "reference/kv_cache.h"

namespace lmo::oracle {

int64_t PagedDecodeParams::offset(int64_t page, int64_t slot, int64_t head) const {
  const int64_t g = heads.kv_heads, d = heads.head_dim;
  return hnd ? ((page * g + head) * page_size + slot) * d
             : ((page * page_size + slot) * g + head) * d;
}

std::vector<InputDecl> PagedDecodeOp::inputs() const {
  const AttentionParams& a = p_.heads;
  const int64_t b = p_.batch(), n = p_.num_pages;
  const std::vector<int64_t> pool =
      p_.hnd ? std::vector<int64_t>{n, a.kv_heads, p_.page_size, a.head_dim}
             : std::vector<int64_t>{n, p_.page_size, a.kv_heads, a.head_dim};
  std::vector<InputDecl> v = {{"q", {b, a.heads * a.head_dim}, Dist::kNormal, 0, a.input_std},
                              {"k_pages", pool, Dist::kNormal, 0, a.input_std},
                              {"v_pages", pool, Dist::kNormal, 0, 1}};
  for (InputDecl& d : p_.table_inputs()) v.push_back(std::move(d));
  return v;
}

std::vector<OutputDecl> PagedDecodeOp::outputs() const {
  return {{"o", {p_.batch(), p_.heads.heads * p_.heads.head_dim}}};
}

double PagedDecodeOp::cost() const {
  const double tokens = static_cast<double>(
      std::accumulate(p_.seq_lens.begin(), p_.seq_lens.end(), int64_t{0}));
  return tokens * static_cast<double>(p_.heads.heads) *
         (4.0 * static_cast<double>(p_.heads.head_dim) + 40.0);
}

template <class T>
void PagedDecodeOp::gather(const std::vector<T>& kp, const std::vector<T>& vp,
                           const std::vector<int64_t>& table, int64_t b, int64_t len,
                           std::vector<T>& k, std::vector<T>& v) const {
  const int64_t g = p_.heads.kv_heads, d = p_.heads.head_dim;
  k.assign(static_cast<size_t>(len * g * d), T(0));
  v.assign(k.size(), T(0));
  for (int64_t t = 0; t < len; ++t) {
    const int64_t page = p_.checked_page(table, b, t);
    for (int64_t head = 0; head < g; ++head) {
      const auto from = static_cast<size_t>(p_.offset(page, t % p_.page_size, head));
      const auto to = static_cast<size_t>((t * g + head) * d);
      std::copy_n(kp.begin() + from, d, k.begin() + to);
      std::copy_n(vp.begin() + from, d, v.begin() + to);
    }
  }
}

template <class T, class Step>
bool PagedDecodeOp::for_each_sequence(const InputSet& in, Step&& step) const {
  const AttentionParams& a = p_.heads;
  const int64_t hd = a.heads * a.head_dim, gd = a.kv_heads * a.head_dim;
  const std::vector<T> q = in.values<T>("q");
  const std::vector<T> kp = in.values<T>("k_pages"), vp = in.values<T>("v_pages");
  const std::vector<int64_t> table = in.ints("page_table"), lens = in.ints("seq_lens");
  for (int64_t b = 0; b < p_.batch(); ++b) {
    const int64_t len = p_.checked_length(lens, b);
    std::vector<T> kb, vb;
    gather(kp, vp, table, b, len, kb, vb);
    AttentionParams dense = a;
    dense.tokens = len;
    const ref::Mat<T> qb(1, hd, std::vector<T>(q.begin() + b * hd, q.begin() + (b + 1) * hd));
    const ref::Mat<T> k(len, gd, std::move(kb)), v(len, gd, std::move(vb));
    if (!step(attention_config(dense), qb, k, v)) return false;
  }
  return true;
}

template <class T>
Outputs<T> PagedDecodeOp::run(const InputSet& in, const ref::AttentionRounding<T>* rounding,
                              const BoundRecipe* recipe) const {
  const AttentionParams& a = p_.heads;
  Outputs<T> out(1);
  out[0].values.reserve(static_cast<size_t>(p_.batch() * a.heads * a.head_dim));
  for_each_sequence<T>(in, [&](const ref::AttentionConfig& cfg, const ref::Mat<T>& qb,
                               const ref::Mat<T>& k, const ref::Mat<T>& v) {
    const int64_t len = k.rows;
    std::vector<T> o;
    if (rounding == nullptr) {
      // F16's decode step on the gathered cache, exactly as attention_decode takes it.
      ref::KvCache<T> cache(a.kv_heads, a.head_dim, a.head_dim);
      for (int64_t j = 0; j + 1 < len; ++j) cache.append(k.row(j), v.row(j));
      o = ref::decode_step<T>(qb.row(0), k.row(len - 1), v.row(len - 1), cache, cfg);
    } else {
      o = ref::attention<T>(qb, k, v, cfg, *rounding).data;
      const std::vector<double> s = probs_error_scale<T>(
          *recipe, v, [&](const ref::Mat<T>& values) {
            return ref::attention<T>(qb, k, values, cfg).data;
          });
      out[0].error_scale.insert(out[0].error_scale.end(), s.begin(), s.end());
    }
    out[0].values.insert(out[0].values.end(), o.begin(), o.end());
    return true;
  });
  return out;
}

template <class T>
Outputs<T> PagedDecodeOp::compute(const InputSet& in) const {
  return run<T>(in, nullptr, nullptr);
}

std::optional<Outputs<ref::Ball>> PagedDecodeOp::enclosure(const InputSet& in) const {
  // F16's decode step on a cache is attention of its one query over the whole cache (the
  // claim attention_decode's enclosure rests on too), so each sequence is one blocked attention.
  Outputs<ref::Ball> out(1);
  const bool enclosed =
      for_each_sequence<double>(in, [&](const ref::AttentionConfig& cfg, const ref::Mat<double>& qb,
                                        const ref::Mat<double>& k, const ref::Mat<double>& v) {
        const std::optional<std::vector<ref::Ball>> o = ref::attention_enclosure(qb, k, v, cfg);
        if (o) out[0].values.insert(out[0].values.end(), o->begin(), o->end());
        return o.has_value();
      });
  if (!enclosed) return GenericOp<PagedDecodeOp>::enclosure(in);
  return out;
}

template <class T>
Outputs<T> PagedDecodeOp::compute(const InputSet& in, const BoundRecipe& recipe) const {
  const ref::AttentionRounding<T> r = attention_rounding<T>(recipe);
  return run<T>(in, &r, &recipe);
}

namespace {

std::unique_ptr<Op> make_paged_decode(ParamReader& r) {
  PagedDecodeParams p;
  p.op = "paged_attention_decode";
  AttentionParams& a = p.heads;
  a.decode = true;
  a.heads = r.integer("h", 1, kMaxHeads);
  a.kv_heads = r.integer("g", 1, kMaxHeads, a.heads);
  if (a.heads % a.kv_heads != 0) {
    r.fail("g", "expected a divisor of h = " + std::to_string(a.heads) + ", got " +
                    std::to_string(a.kv_heads));
  }
  a.head_dim = r.integer("d", 1, kMaxWidth);
  a.scale = r.real("scale", 0, 1e6, 0.0);
  a.softcap = r.real("softcap", 0, 1e6, 0.0);
  a.input_std = r.real("qk_std", 1e-3, 1e3, 1.0);
  a.window = r.integer("window", 0, kMaxPosition, 0);
  a.mask = a.window > 0 ? ref::MaskKind::kSlidingWindow : ref::MaskKind::kCausal;
  p.hnd = r.choice("layout", {"nhd", "hnd"}, "nhd") == "hnd";
  p.read(r, a.kv_heads * a.head_dim);
  return std::make_unique<PagedDecodeOp>(p);
}

}  // namespace

void add_paged_attention_ops(std::vector<OpInfo>& ops) {
  ops.push_back({"paged_attention_decode",
                 "F15, F16",
                 "one decode step per sequence over KV caches in a shared pool of pages read "
                 "through a page table (vLLM, FlashInfer; layout nhd or hnd)",
                 make_paged_decode,
                 KernelEntry::kPagedAttentionDecode,
                 {reduction_output(naive_policy(),
                                   "attention_decode per sequence on the cache its page table "
                                   "names: the same reductions")},
                 {"flash-attention"}});
}

}  // namespace lmo::oracle
