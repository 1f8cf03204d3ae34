// Oracle ops of F10 RoPE with the long-context frequency rules of F11 (reference/rope.h,
// reference/rope_scaling.h). Both rotate x [tokens, heads · head_dim] (the [tokens, heads,
// head_dim] layout flattened), token t at the integer position positions[t] (i64, uniform in
// [min_position, max_position): long-context values, up to 2^40), the first rotary_dims
// dimensions of every head in pairs of the layout (interleaved (2k, 2k+1) or half-split
// (k, k + r/2)), the rest passed through; output y, same shape.
//   rope        the angles p·θ_k are formed from the positions: positions → T (rounded once, as
//               a kernel holding positions in T does), θ_k by the scaling rule in T, p·θ_k, cos,
//               sin (and YaRN's attention factor) in T.
//   rope_table  the rotation from a precomputed table, as kernels that cache cos/sin do. The
//               table is the input cos_sin [tokens, rotary_dims]: row t holds cos(p_t θ_k) for
//               k < r/2 in its first r/2 columns and sin(p_t θ_k) in its last r/2 (FlashInfer's
//               cos_sin_cache row layout, gathered per token: the row a kernel reads as
//               cache[positions[t]]), each value the exact one (θ_k by the scaling rule, times
//               YaRN's attention factor when asked) rounded once. Stored in f32 by default
//               ("table": "f32", what FlashInfer and TensorRT-LLM keep), or in the case's storage
//               format ("table": "storage", what HF transformers and vLLM do when they cast the
//               cache to the activations' dtype). The op is a function of its inputs: the exact
//               reference rotates with the table's stored values, so a kernel reading the table
//               in a narrower type than it is stored in is wrong.
// Scalings ("scaling"): none; pi (position interpolation θ/s); ntk (base·s^(r/(r−2))); yarn (the
// released ramp, beta_fast, beta_slow, original_context; optionally HF's attention factor
// 0.1·ln s + 1 on cos and sin); llama31 (low_freq_factor, high_freq_factor, original_context).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "oracle/core/op_generic.h"
#include "oracle/ops/positional.h"
#include "reference/rope.h"
#include "reference/rope_scaling.h"

namespace lmo::oracle {

enum class RopeScalingRule : uint8_t { kNone, kPi, kNtk, kYarn, kLlama31 };

struct RopeParams {
  bool from_table = false;        // rope_table
  bool table_in_storage = false;  // rope_table: the cos_sin table in the storage format, not f32
  int64_t tokens = 0;
  int64_t heads = 0;
  int64_t head_dim = 0;
  int64_t rotary_dims = 0;  // r ≤ head_dim, even
  ref::RopeLayout layout = ref::RopeLayout::kHalfSplit;
  double base = 10000;
  PositionRange positions;
  RopeScalingRule scaling = RopeScalingRule::kNone;
  double factor = 1;                                 // s
  int64_t original_context = 0;                      // yarn, llama31
  double low_freq_factor = 1, high_freq_factor = 4;  // llama31
  double beta_fast = 32, beta_slow = 1;              // yarn
  bool attention_factor = false;  // yarn: cos and sin times 0.1·ln s + 1 (HF rope_type "yarn")
  // Packed sequences (ragged prefill): token t of sequence s, at rows [cu_seqlens[s],
  // cu_seqlens[s+1]), sits at position position_offsets[s] + (t − cu_seqlens[s]): positions
  // restart per sequence, or continue a cached prefix (chunked prefill). Empty: random positions.
  std::vector<int64_t> cu_seqlens;
  std::vector<int64_t> position_offsets;
};

// θ_k (r/2 values) by the case's scaling rule, evaluated in T as written (reference/
// rope_scaling.h). The parameters are doubles, each rounded once to T.
template <class T>
std::vector<T> rope_frequencies(const RopeParams& p) {
  const T base = T(p.base), s = T(p.factor);
  switch (p.scaling) {
    case RopeScalingRule::kNone:
      return ref::rope_inv_freq(p.rotary_dims, base);
    case RopeScalingRule::kPi:
      return ref::rope_inv_freq_linear(p.rotary_dims, base, s);
    case RopeScalingRule::kNtk:
      return ref::rope_inv_freq_ntk(p.rotary_dims, base, s);
    case RopeScalingRule::kYarn:
      return ref::rope_inv_freq_yarn(p.rotary_dims, base, s, p.original_context, T(p.beta_fast),
                                     T(p.beta_slow));
    case RopeScalingRule::kLlama31:
      return ref::rope_inv_freq_llama3(p.rotary_dims, base, s, T(p.low_freq_factor),
                                       T(p.high_freq_factor), p.original_context);
  }
  throw std::invalid_argument("rope_frequencies: unknown scaling rule");
}

// The factor on cos and sin: YaRN's attention factor 0.1·ln s + 1 when asked, else exactly 1.
template <class T>
T rope_cos_sin_factor(const RopeParams& p) {
  return p.attention_factor ? ref::yarn_mscale(T(p.factor)) : T(1);
}

// The cos/sin table of the given positions (in T) by the case's rule: rope_table of reference/
// rope.h, every step in T.
template <class T>
ref::RopeTable<T> rope_angles_table(const RopeParams& p, std::span<const T> positions) {
  const std::vector<T> inv = rope_frequencies<T>(p);
  return ref::rope_table<T>(positions, std::span<const T>(inv), rope_cos_sin_factor<T>(p));
}

// Reads the scaling keys above into p (p.rotary_dims set first): "scaling", one of `rules` (a
// subset of none, pi, ntk, yarn, llama31; default none), then the chosen rule's keys, and
// "attention_factor" for yarn only where attention_factor is true. Shared with mla_decode
// (oracle/ops/mla.cc), which takes none and yarn and applies YaRN's temperature elsewhere.
void read_rope_scaling(ParamReader& r, RopeParams& p, const std::vector<std::string>& rules,
                       bool attention_factor);

class RopeOp : public GenericOp<RopeOp> {
 public:
  explicit RopeOp(RopeParams p) : p_(p) {}
  const RopeParams& params() const { return p_; }
  std::vector<InputDecl> inputs() const override;
  std::vector<OutputDecl> outputs() const override { return {{"y", {p_.tokens, width()}}}; }
  double cost() const override;
  // Rows are tokens (x, positions and the table per token). A block of a packed batch keeps its
  // positions, which the packing only served to draw.
  int64_t independent_rows() const override { return p_.tokens; }
  std::unique_ptr<Op> with_rows(int64_t rows) const override {
    RopeParams p = p_;
    p.tokens = rows;
    p.cu_seqlens.clear();
    p.position_offsets.clear();
    return std::make_unique<RopeOp>(p);
  }
  template <class T>
  Outputs<T> compute(const InputSet& in) const;
  // rope (angles from positions): angle (f32 | f64), table and products (formats).
  std::vector<RoundingPoint> rounding_points() const override;
  template <class T>
  Outputs<T> compute(const InputSet& in, const BoundRecipe& recipe) const;

 private:
  int64_t width() const { return p_.heads * p_.head_dim; }
  RopeParams p_;
};

}  // namespace lmo::oracle
