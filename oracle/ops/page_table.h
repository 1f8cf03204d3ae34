// A batch of sequences whose caches live in a shared pool of fixed-size pages, read through a
// page table ([workloads] item 1): what paged_attention_decode (GQA) and paged_mla_decode (MLA)
// share. Token t of sequence b sits in slot t mod P of pool page page_table[b][⌊t/P⌋]; the
// lengths differ within the batch and may end mid-page; the table's padding entries are 0
// (vLLM's convention) and the rest of a last page, and every page no table names, hold values
// a correct kernel never reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oracle/core/op.h"
#include "oracle/core/params.h"

namespace lmo::oracle {

struct PagedCache {
  std::string op;  // for messages: the op reading the pool
  int64_t page_size = 16;
  std::vector<int64_t> seq_lens;
  int64_t num_pages = 0;  // N: the pool; at least the pages the sequences use

  int64_t batch() const { return static_cast<int64_t>(seq_lens.size()); }
  int64_t pages_of(int64_t len) const { return (len + page_size - 1) / page_size; }
  int64_t max_pages() const;
  int64_t used_pages() const;
  // Sequence b's length, and the pool page of its token t, from the inputs' seq_lens and
  // page_table (a user's file may set them): std::invalid_argument naming the entry when a
  // length exceeds the table's pages or a page lies outside the pool. The ops and the kernel
  // adapters read the pool through these alone.
  int64_t checked_length(const std::vector<int64_t>& seq_lens, int64_t b) const;
  int64_t checked_page(const std::vector<int64_t>& page_table, int64_t b, int64_t t) const;
  // The inputs page_table i64 [B, M] (M = max_pages(); each sequence's pages scattered over the
  // pool, distinct and out of order) and seq_lens i64 [B], computed from the parameters.
  std::vector<InputDecl> table_inputs() const;
  // page_size, seq_lens and num_pages (default: the pages used plus two spare), refusing a pool
  // of more than 2^30 elements of token_elements each per slot.
  void read(ParamReader& r, int64_t token_elements);
};

}  // namespace lmo::oracle
