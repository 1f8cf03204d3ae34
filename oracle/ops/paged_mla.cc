#include "oracle/ops/paged_mla.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "oracle/ops/families.h"

namespace lmo::oracle {

std::vector<InputDecl> PagedMlaDecodeOp::inputs() const {
  const MlaDecodeParams& m = p_.mla;
  const int64_t b = p_.batch(), h = m.heads;
  // As mla_decode's: W^UK with entries of variance 1/d_h keeps q̃ at unit scale.
  std::vector<InputDecl> v = {
      {"q_c", {b, h * m.head_dim}, Dist::kNormal, 0, 1},
      {"q_r", {b, h * m.rope_dim}, Dist::kNormal, 0, 1},
      {"kv_pages", {p_.num_pages, p_.page_size, p_.entry()}, Dist::kNormal, 0, 1},
      {"w_uk",
       {m.latent_dim, h * m.head_dim},
       Dist::kNormal,
       0,
       1 / std::sqrt(static_cast<double>(m.head_dim))}};
  for (InputDecl& d : p_.table_inputs()) v.push_back(std::move(d));
  return v;
}

double PagedMlaDecodeOp::cost() const {
  const MlaDecodeParams& m = p_.mla;
  const double h = static_cast<double>(m.heads), dc = static_cast<double>(m.latent_dim);
  const double tokens =
      static_cast<double>(std::accumulate(p_.seq_lens.begin(), p_.seq_lens.end(), int64_t{0}));
  return static_cast<double>(p_.batch()) * 2 * h * dc * static_cast<double>(m.head_dim) +
         h * tokens * (4 * dc + 2 * static_cast<double>(m.rope_dim) + 40);
}

template <class T>
Outputs<T> PagedMlaDecodeOp::run(const InputSet& in, const BoundRecipe* recipe) const {
  const MlaDecodeParams& m = p_.mla;
  const int64_t qc = m.heads * m.head_dim, qr = m.heads * m.rope_dim;
  const int64_t dc = m.latent_dim, dr = m.rope_dim;
  const std::vector<T> q_c = in.values<T>("q_c"), q_r = in.values<T>("q_r");
  const std::vector<T> pool = in.values<T>("kv_pages");
  const std::vector<int64_t> table = in.ints("page_table"), lens = in.ints("seq_lens");
  const ref::Mat<T> w_uk(dc, qc, in.values<T>("w_uk"));
  const ref::mp scale = ref::mla_scale(m.config());
  Outputs<T> out(1);
  for (int64_t b = 0; b < p_.batch(); ++b) {
    const int64_t len = p_.checked_length(lens, b);
    MlaStep<T> x;
    x.q_c = ref::Mat<T>(1, qc, std::vector<T>(q_c.begin() + b * qc, q_c.begin() + (b + 1) * qc));
    x.q_r = ref::Mat<T>(1, qr, std::vector<T>(q_r.begin() + b * qr, q_r.begin() + (b + 1) * qr));
    x.w_uk = w_uk;
    x.cache.c_kv = ref::Mat<T>(len, dc);
    x.cache.k_r = ref::Mat<T>(len, dr);
    for (int64_t t = 0; t < len; ++t) {
      const auto at = pool.begin() + p_.offset(p_.checked_page(table, b, t), t % p_.page_size);
      std::copy_n(at, dc, x.cache.c_kv.row(t).begin());
      std::copy_n(at + dc, dr, x.cache.k_r.row(t).begin());
    }
    std::vector<T> o;
    if (recipe) {
      std::vector<double> s;
      o = mla_decode_step<T>(m, x, scale, point_rounding<T>(*recipe, "query"),
                             attention_rounding<T>(*recipe), recipe, &s);
      out[0].error_scale.insert(out[0].error_scale.end(), s.begin(), s.end());
    } else {
      o = mla_decode_step<T>(m, x, scale);
    }
    out[0].values.insert(out[0].values.end(), o.begin(), o.end());
  }
  return out;
}

template <class T>
Outputs<T> PagedMlaDecodeOp::compute(const InputSet& in) const {
  return run<T>(in, nullptr);
}

template <class T>
Outputs<T> PagedMlaDecodeOp::compute(const InputSet& in, const BoundRecipe& recipe) const {
  return run<T>(in, &recipe);
}

void add_paged_mla_ops(std::vector<OpInfo>& ops) {
  ops.push_back({"paged_mla_decode",
                 "F19, F16",
                 "one absorbed MLA decode step per sequence over latent caches [c^KV; k^R] in a "
                 "shared pool of pages read through a page table (FlashMLA)",
                 [](ParamReader& r) {
                   PagedMlaParams p;
                   p.op = "paged_mla_decode";
                   p.mla = read_mla_params(r, /*dense_cache=*/false);
                   p.read(r, p.entry());
                   return std::make_unique<PagedMlaDecodeOp>(p);
                 },
                 KernelEntry::kPagedMlaDecode,
                 {reduction_output(naive_policy(),
                                   "mla_decode per sequence on the latent cache its page table "
                                   "names: the same reductions")},
                 {"flash-mla"}});
}

}  // namespace lmo::oracle
