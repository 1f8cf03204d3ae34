// Fast-backend adapters (oracle/backends/fast.cc's op map) for the attention family: the ops
// attention, attention_decode (oracle/ops/attention.h) and mla_decode (oracle/ops/mla.h) on
// fast/attention.h and fast/mla_decode.h.
#pragma once

#include <vector>

#include "fast/storage.h"
#include "oracle/core/guarded_buffer.h"
#include "oracle/core/op.h"

namespace lmo::oracle {

// attention and attention_decode: inputs q, k, v; output o.
void run_fast_attention(const Op& op, fast::Storage s, const InputSet& in,
                        std::vector<GuardedBuffer>& out);

// paged_attention_decode: inputs q, k_pages, v_pages, page_table, seq_lens; output o.
void run_fast_paged_decode(const Op& op, fast::Storage s, const InputSet& in,
                        std::vector<GuardedBuffer>& out);

// mla_decode: inputs q_c, q_r, c_kv, k_r, w_uk; output o.
void run_fast_mla_decode(const Op& op, fast::Storage s, const InputSet& in,
                         std::vector<GuardedBuffer>& out);
void run_fast_paged_mla_decode(const Op& op, fast::Storage s, const InputSet& in,
                               std::vector<GuardedBuffer>& out);

}  // namespace lmo::oracle
