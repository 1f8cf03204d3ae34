// Oracle op paged_mla_decode ([workloads] item 1 for MLA): one absorbed MLA decode step for each
// of B sequences whose latent caches live in a shared pool of pages (oracle/ops/page_table.h),
// as FlashMLA takes them: each token's cache entry is [c^KV (d_c) ; k^R (d_h^R)] (DeepSeek-V3:
// 512 + 64 = 576 values), the pool [N, P, d_c + d_h^R], a block table and cache_seqlens.
//
// Inputs:
//   q_c         [B, h·d_h]        each sequence's content query q^C;
//   q_r         [B, h·d_h^R]      its rotary query before RoPE (rotated at position len − 1);
//   kv_pages    [N, P, d_c + d_h^R];
//   w_uk        [d_c, h·d_h]      W^UK, shared;
//   page_table  i64 [B, M], seq_lens i64 [B].
// Output o [B, h·d_c]. The exact reference gathers each sequence's latents and rotary keys into
// the dense cache and takes mla_decode's step on it (mla_decode_step), so this op equals
// mla_decode on the gathered cache by construction; tests/oracle/paged_mla_test.cc checks that it does.
#pragma once

#include <cstdint>

#include "oracle/core/op_generic.h"
#include "oracle/ops/mla.h"
#include "oracle/ops/page_table.h"

namespace lmo::oracle {

struct PagedMlaParams : PagedCache {
  MlaDecodeParams mla;  // h, d_h, d_rope, d_c, RoPE (cache_len unused)

  int64_t entry() const { return mla.latent_dim + mla.rope_dim; }  // values per cached token
  // The offset, in elements, of token slot `slot` of page `page` in the pool.
  int64_t offset(int64_t page, int64_t slot) const { return (page * page_size + slot) * entry(); }
};

class PagedMlaDecodeOp : public GenericOp<PagedMlaDecodeOp> {
 public:
  explicit PagedMlaDecodeOp(PagedMlaParams p) : p_(std::move(p)) {}
  const PagedMlaParams& params() const { return p_; }
  std::vector<InputDecl> inputs() const override;
  std::vector<OutputDecl> outputs() const override {
    return {{"o", {p_.batch(), p_.mla.heads * p_.mla.latent_dim}}};
  }
  double cost() const override;
  template <class T>
  Outputs<T> compute(const InputSet& in) const;
  // mla_decode's: query, then attention's points.
  std::vector<RoundingPoint> rounding_points() const override { return mla_rounding_points(); }
  template <class T>
  Outputs<T> compute(const InputSet& in, const BoundRecipe& recipe) const;

 private:
  template <class T>
  Outputs<T> run(const InputSet& in, const BoundRecipe* recipe) const;
  PagedMlaParams p_;
};

}  // namespace lmo::oracle
