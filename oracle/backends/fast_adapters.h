// The fast backend's adapters (oracle/backends/fast.cc keeps the map from op name to adapter): an
// adapter runs one op of the oracle (its parameters and inputs) through the plain-pointer API of
// fast/ into the op's output buffers. Families with their own file declare their adapters here.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "fast/storage.h"
#include "oracle/backends/adapters.h"
#include "oracle/core/guarded_buffer.h"
#include "oracle/core/op.h"

namespace lmo::oracle::fast_adapters {

using Adapter =
    std::function<void(const Op&, fast::Storage, const InputSet&, std::vector<GuardedBuffer>&)>;

// The shared adapters' helpers (oracle/backends/adapters.h), under the names the fast families
// use: the bytes of an input tensor, the op as its concrete class, and f32 results stored in the
// output's format with round-to-nearest-even.
inline const void* ptr(const InputSet& in, std::string_view name) {
  return op_adapters::input_ptr(in, name);
}
template <class T>
const T& as(const Op& op) {
  return op_adapters::op_as<T>(op);
}
using op_adapters::store_floats;

// MoE (backend_fast_moe.cc): moe_router, load_balance_loss and aux_free_update.
void run_moe_router(const Op& op, fast::Storage s, const InputSet& in,
                    std::vector<GuardedBuffer>& out);
void run_load_balance_loss(const Op& op, fast::Storage s, const InputSet& in,
                           std::vector<GuardedBuffer>& out);
void run_aux_free_update(const Op& op, fast::Storage s, const InputSet& in,
                         std::vector<GuardedBuffer>& out);
// The whole MoE layer (backend_fast_moe.cc): the router GEMM, fast::moe_router, one
// fast::glu_ffn call per expert over its tokens, the combine in f32.
void run_moe_layer(const Op& op, fast::Storage s, const InputSet& in,
                   std::vector<GuardedBuffer>& out);

// Feed-forward (backend_fast_ffn.cc): ffn and glu_ffn, and the decoder block built on them.
void run_ffn(const Op& op, fast::Storage s, const InputSet& in, std::vector<GuardedBuffer>& out);
void run_decoder_block(const Op& op, fast::Storage s, const InputSet& in,
                       std::vector<GuardedBuffer>& out);
// Positions (fast_positional.cc): rope and rope_table, sinusoidal_pe, learned_position,
// shaw_logits and t5_bias.
void run_rope(const Op& op, fast::Storage s, const InputSet& in, std::vector<GuardedBuffer>& out);
void run_sinusoidal_pe(const Op& op, fast::Storage s, const InputSet& in,
                       std::vector<GuardedBuffer>& out);
void run_learned_position(const Op& op, fast::Storage s, const InputSet& in,
                          std::vector<GuardedBuffer>& out);
void run_shaw_logits(const Op& op, fast::Storage s, const InputSet& in,
                     std::vector<GuardedBuffer>& out);
void run_t5_bias(const Op& op, fast::Storage s, const InputSet& in,
                 std::vector<GuardedBuffer>& out);
// fp8 scaling (fast_fp8.cc): fp8_quantize, fp8_dequantize and fp8_linear.
void run_fp8_quantize(const Op& op, fast::Storage s, const InputSet& in,
                      std::vector<GuardedBuffer>& out);
void run_fp8_dequantize(const Op& op, fast::Storage s, const InputSet& in,
                        std::vector<GuardedBuffer>& out);
void run_fp8_linear(const Op& op, fast::Storage s, const InputSet& in,
                    std::vector<GuardedBuffer>& out);

}  // namespace lmo::oracle::fast_adapters
