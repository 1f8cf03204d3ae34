#include "oracle/ops/paged_attention.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "oracle/ops/families.h"
#include "oracle/ops/limits.h"
#include "reference/kv_cache.h"

namespace lmo::oracle {

int64_t PagedDecodeParams::max_pages() const {
  int64_t m = 1;
  for (int64_t len : seq_lens) m = std::max(m, pages_of(len));
  return m;
}

int64_t PagedDecodeParams::used_pages() const {
  int64_t n = 0;
  for (int64_t len : seq_lens) n += pages_of(len);
  return n;
}

int64_t PagedDecodeParams::offset(int64_t page, int64_t slot, int64_t head) const {
  const int64_t g = heads.kv_heads, d = heads.head_dim;
  return hnd ? ((page * g + head) * page_size + slot) * d
             : ((page * page_size + slot) * g + head) * d;
}

int64_t PagedDecodeParams::checked_length(const std::vector<int64_t>& seq_lens,
                                          int64_t b) const {
  const int64_t len = seq_lens.at(static_cast<size_t>(b)), most = max_pages() * page_size;
  if (len < 1 || len > most) {
    throw std::invalid_argument("paged_attention_decode: seq_lens[" + std::to_string(b) + "] is " +
                                std::to_string(len) + ", expected 1 to " + std::to_string(most) +
                                " (page_table's pages)");
  }
  return len;
}

int64_t PagedDecodeParams::checked_page(const std::vector<int64_t>& page_table, int64_t b,
                                        int64_t t) const {
  const int64_t j = t / page_size;
  const int64_t page = page_table.at(static_cast<size_t>(b * max_pages() + j));
  if (page < 0 || page >= num_pages) {
    throw std::invalid_argument("paged_attention_decode: page_table[" + std::to_string(b) +
                                "][" + std::to_string(j) + "] is " + std::to_string(page) +
                                ", expected a page below " + std::to_string(num_pages));
  }
  return page;
}

namespace {

// The pages of the batch in order (sequence 0's first page, …) are pool pages π(0), π(1), …,
// π(i) = (a·i + c) mod N with a coprime to N: distinct, scattered over the pool and not in
// order, so a kernel that assumes contiguous or ascending pages fails; deterministic, so golden
// files do not depend on anything but the parameters.
int64_t scattered_page(int64_t i, int64_t n) {
  int64_t a = n / 2 + 1;
  while (std::gcd(a, n) != 1) ++a;
  return (a * i + n / 3) % n;
}

}  // namespace

std::vector<InputDecl> PagedDecodeOp::inputs() const {
  const AttentionParams& a = p_.heads;
  const int64_t b = p_.batch(), m = p_.max_pages(), n = p_.num_pages;
  const std::vector<int64_t> pool =
      p_.hnd ? std::vector<int64_t>{n, a.kv_heads, p_.page_size, a.head_dim}
             : std::vector<int64_t>{n, p_.page_size, a.kv_heads, a.head_dim};
  std::vector<InputDecl> v = {{"q", {b, a.heads * a.head_dim}, Dist::kNormal, 0, a.input_std},
                              {"k_pages", pool, Dist::kNormal, 0, a.input_std},
                              {"v_pages", pool, Dist::kNormal, 0, 1}};
  InputDecl table("page_table", {b, m}, Dist::kUniformInt, 0, static_cast<double>(n),
                  ref::DType::i64);
  table.bounded = true;
  table.computed = [p = p_](const InputSet&, ref::Tensor& t) {
    int64_t next = 0;
    for (int64_t s = 0; s < p.batch(); ++s) {
      const int64_t used = p.pages_of(p.seq_lens[static_cast<size_t>(s)]);
      for (int64_t j = 0; j < p.max_pages(); ++j) {
        t.set(s * p.max_pages() + j,
              j < used ? static_cast<double>(scattered_page(next++, p.num_pages)) : 0.0);
      }
    }
  };
  InputDecl lens("seq_lens", {b}, Dist::kUniformInt, 1, static_cast<double>(m * p_.page_size + 1),
                 ref::DType::i64);
  lens.bounded = true;
  lens.computed = [p = p_](const InputSet&, ref::Tensor& t) {
    for (int64_t s = 0; s < p.batch(); ++s) {
      t.set(s, static_cast<double>(p.seq_lens[static_cast<size_t>(s)]));
    }
  };
  v.push_back(std::move(table));
  v.push_back(std::move(lens));
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

template <class T>
Outputs<T> PagedDecodeOp::run(const InputSet& in, const ref::AttentionRounding<T>* rounding,
                              const BoundRecipe* recipe) const {
  const AttentionParams& a = p_.heads;
  const int64_t hd = a.heads * a.head_dim, gd = a.kv_heads * a.head_dim;
  const std::vector<T> q = in.values<T>("q");
  const std::vector<T> kp = in.values<T>("k_pages"), vp = in.values<T>("v_pages");
  const std::vector<int64_t> table = in.ints("page_table"), lens = in.ints("seq_lens");
  Outputs<T> out(1);
  out[0].values.reserve(static_cast<size_t>(p_.batch() * hd));
  for (int64_t b = 0; b < p_.batch(); ++b) {
    const int64_t len = p_.checked_length(lens, b);
    std::vector<T> kb, vb;
    gather(kp, vp, table, b, len, kb, vb);
    AttentionParams dense = a;
    dense.tokens = len;
    const ref::AttentionConfig cfg = attention_config(dense);
    const ref::Mat<T> qb(1, hd, std::vector<T>(q.begin() + b * hd, q.begin() + (b + 1) * hd));
    const ref::Mat<T> k(len, gd, std::move(kb)), v(len, gd, std::move(vb));
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
  }
  return out;
}

template <class T>
Outputs<T> PagedDecodeOp::compute(const InputSet& in) const {
  return run<T>(in, nullptr, nullptr);
}


template <class T>
Outputs<T> PagedDecodeOp::compute(const InputSet& in, const BoundRecipe& recipe) const {
  const ref::AttentionRounding<T> r = attention_rounding<T>(recipe);
  return run<T>(in, &r, &recipe);
}

namespace {

// The pool's size at most 2^30 elements (each drawn, converted and gathered): larger is a typo,
// refused before anything is allocated.
constexpr int64_t kMaxPoolElements = int64_t{1} << 30;

std::unique_ptr<Op> make_paged_decode(ParamReader& r) {
  PagedDecodeParams p;
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
  p.page_size = r.integer("page_size", 1, 4096);
  p.hnd = r.choice("layout", {"nhd", "hnd"}, "nhd") == "hnd";
  p.seq_lens = r.integers("seq_lens", 1, kMaxRows);
  if (p.seq_lens.empty()) r.fail("seq_lens", "expected one length per sequence, at least one");
  const int64_t used = p.used_pages();
  // Two spare pages by default: pages no table names, which a correct kernel never reads.
  p.num_pages = r.integer("num_pages", used, kMaxRows, used + 2);
  int64_t elements = 0;
  if (__builtin_mul_overflow(p.num_pages, p.page_size * a.kv_heads * a.head_dim, &elements) ||
      elements > kMaxPoolElements) {
    r.fail("num_pages", "expected a pool of at most " + std::to_string(kMaxPoolElements) +
                            " elements (num_pages · page_size · g · d)");
  }
  return std::make_unique<PagedDecodeOp>(p);
}

}  // namespace

void add_paged_attention_ops(std::vector<OpInfo>& ops) {
  ops.push_back({"paged_attention_decode", "F15, F16",
                 "one decode step per sequence over KV caches in a shared pool of pages read "
                 "through a page table (vLLM, FlashInfer; layout nhd or hnd)",
                 make_paged_decode});
}

}  // namespace lmo::oracle
