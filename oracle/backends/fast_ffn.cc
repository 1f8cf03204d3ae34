// The fast backend's adapters for the feed-forward ops (oracle/ops/ffn.h) and the decoder block
// (oracle/ops/blocks.h): the shared templates of oracle/backends/ffn_adapters.h on fast/ffn.h and
// fast/decoder_block.h.
#include "fast/decoder_block.h"
#include "fast/ffn.h"
#include "oracle/backends/fast_adapters.h"
#include "oracle/backends/ffn_adapters.h"

namespace lmo::oracle::fast_adapters {
namespace {

// fast/ffn.h and fast/decoder_block.h as a kernel library of oracle/backends/ffn_adapters.h.
struct FastFfn {
  using Storage = fast::Storage;
  using Activation = fast::Activation;
  static constexpr auto* ffn = &fast::ffn;
  static constexpr auto* glu_ffn = &fast::glu_ffn;
  static constexpr auto* decoder_block = &fast::decoder_block;
};

}  // namespace

void run_ffn(const Op& op, fast::Storage s, const InputSet& in, std::vector<GuardedBuffer>& out) {
  op_adapters::run_ffn<FastFfn>(op, s, in, out);
}

void run_decoder_block(const Op& op, fast::Storage s, const InputSet& in,
                       std::vector<GuardedBuffer>& out) {
  op_adapters::run_decoder_block<FastFfn>(op, s, in, out);
}

}  // namespace lmo::oracle::fast_adapters
