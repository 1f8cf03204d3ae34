// The fast backend's adapters for the attention ops: oracle/backends/attention_adapters.h on
// fast/attention.h and fast/mla_decode.h.
#include "oracle/backends/fast_attention.h"

#include "fast/attention.h"
#include "fast/mla_decode.h"
#include "oracle/backends/attention_adapters.h"

namespace lmo::oracle {
namespace {

// fast/attention.h and fast/mla_decode.h as the kernel library of
// oracle/backends/attention_adapters.h.
struct FastAttention {
  using Storage = fast::Storage;
  static constexpr auto* attention = &fast::attention;
  static constexpr auto* attention_decode = &fast::attention_decode;
  static constexpr auto* mla_decode = &fast::mla_decode;
};

}  // namespace

void run_fast_attention(const Op& op, fast::Storage s, const InputSet& in,
                        std::vector<GuardedBuffer>& out) {
  op_adapters::run_attention<FastAttention>(op, s, in, out);
}

void run_fast_paged_decode(const Op& op, fast::Storage s, const InputSet& in,
                        std::vector<GuardedBuffer>& out) {
  op_adapters::run_paged_decode<FastAttention>(op, s, in, out);
}

void run_fast_mla_decode(const Op& op, fast::Storage s, const InputSet& in,
                         std::vector<GuardedBuffer>& out) {
  op_adapters::run_mla_decode<FastAttention>(op, s, in, out);
}

void run_fast_paged_mla_decode(const Op& op, fast::Storage s, const InputSet& in,
                               std::vector<GuardedBuffer>& out) {
  op_adapters::run_paged_mla_decode<FastAttention>(op, s, in, out);
}

}  // namespace lmo::oracle
