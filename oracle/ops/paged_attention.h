// Oracle op paged_attention_decode ([workloads] item 1): one decode step for each of B
// sequences whose KV caches live in a shared pool of fixed-size pages, read through a page table,
// as vLLM's and FlashInfer's paged decode kernels take them (oracle/ops/page_table.h). Sequence b
// has seq_lens[b] cached tokens, its current token's k and v the last.
//
// Inputs:
//   q           [B, h·d]       one query token per sequence;
//   k_pages     [N, P, g, d]   (layout nhd: FlashInfer's NHD, vLLM's FlashAttention backend) or
//               [N, g, P, d]   (layout hnd: FlashInfer's HND);
//   v_pages     as k_pages;
//   page_table  i64 [B, M]     M = the most pages any sequence needs;
//   seq_lens    i64 [B].
// Output o [B, h·d]. The exact reference gathers each sequence's keys and values into the dense
// cache and takes F16's decode step on it (reference/kv_cache.h), so this op equals
// attention_decode on the gathered cache by construction, and tests/oracle/paged_decode_test.cc checks
// that it does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "oracle/core/op_generic.h"
#include "oracle/ops/attention.h"
#include "oracle/ops/page_table.h"

namespace lmo::oracle {

struct PagedDecodeParams : PagedCache {
  AttentionParams heads;  // h, g, d, window, scale, softcap, qk_std (decode; tokens unused)
  bool hnd = false;       // the pool's layout: [N, g, P, d] instead of [N, P, g, d]

  // The offset, in elements, of token slot `slot` of page `page`, KV head `head`, in a pool.
  int64_t offset(int64_t page, int64_t slot, int64_t head) const;
};

class PagedDecodeOp : public GenericOp<PagedDecodeOp> {
 public:
  explicit PagedDecodeOp(PagedDecodeParams p) : p_(std::move(p)) {}
  const PagedDecodeParams& params() const { return p_; }
  std::vector<InputDecl> inputs() const override;
  std::vector<OutputDecl> outputs() const override;
  double cost() const override;
  template <class T>
  Outputs<T> compute(const InputSet& in) const;
  // The blocked certified attention (reference/attention_enclosure.h) on each sequence's
  // gathered cache, as attention_decode's; the generic balls where it declines.
  std::optional<Outputs<ref::Ball>> enclosure(const InputSet& in) const override;
  // attention's points (scores, probs, sum, acc, normalize), per sequence.
  std::vector<RoundingPoint> rounding_points() const override {
    return attention_rounding_points();
  }
  template <class T>
  Outputs<T> compute(const InputSet& in, const BoundRecipe& recipe) const;

 private:
  // Sequence b's cache, [len, g·d] row-major, gathered from the pools kp and vp (the inputs'
  // values, converted once per run) through the page table.
  template <class T>
  void gather(const std::vector<T>& kp, const std::vector<T>& vp,
              const std::vector<int64_t>& table, int64_t b, int64_t len, std::vector<T>& k,
              std::vector<T>& v) const;
  // Calls step(cfg, q, k, v) for each sequence in order: its config, its query row and its
  // gathered cache, the inputs read as T. Stops at the first step that returns false, and
  // returns whether every step returned true.
  template <class T, class Step>
  bool for_each_sequence(const InputSet& in, Step&& step) const;
  template <class T>
  Outputs<T> run(const InputSet& in, const ref::AttentionRounding<T>* rounding,
                 const BoundRecipe* recipe) const;
  PagedDecodeParams p_;
};

}  // namespace lmo::oracle
