// Oracle ops of F15/F16: attention (prefill, T queries against T keys with the catalog's masks,
// GQA/MQA sharing and soft-capped logits) and attention_decode (one query token against a KV
// cache of t tokens, the last of which is the current token's k and v: F16's decode step).
// Inputs q [T_q, h·d], k and v [T_k, g·d] in attention.h's layout (query head j reads KV head
// ⌊j·g/h⌋); output o [T_q, h·d], judged as one tensor (the FlashAttention rule).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "oracle/core/op_generic.h"
#include "reference/attention.h"

namespace lmo::oracle {

struct AttentionParams {
  bool decode = false;   // attention_decode: one query, keys are the cache
  int64_t heads = 1;     // h
  int64_t kv_heads = 1;  // g, a divisor of h
  int64_t tokens = 1;    // T_k: the sequence (prefill) or the cache length with the new token
  int64_t head_dim = 1;  // d (= d_v)
  ref::MaskKind mask = ref::MaskKind::kCausal;
  int64_t window = 0;               // kSlidingWindow: w, key j visible iff 0 ≤ i − j < w
  std::vector<int64_t> doc_starts;  // kDocument: first position of each document after the first
  double scale = 0;                 // multiplies q·k; 0: 1/√d (Gemma 2 sets its own)
  double softcap = 0;               // 0: none; else s ↦ cap·tanh(s/cap) on the scaled logits
  double input_std = 1;             // standard deviation of q and k
  // Ragged prefill (FlashAttention's varlen interface): sequences packed one after another,
  // sequence s at rows [cu_seqlens[s], cu_seqlens[s+1]); each attends only within itself, with
  // the mask (none, causal, window) applied to its own positions. Empty: one sequence.
  std::vector<int64_t> cu_seqlens;

  int64_t queries() const { return decode ? 1 : tokens; }
};

// The reference's configuration for these parameters (document ids from doc_starts).
ref::AttentionConfig attention_config(const AttentionParams& p);

// The rounding points of every attention op (attention, attention_decode, paged_attention_decode,
// mla_decode): scores, probs, sum, acc (formats) and normalize (early | late), and the
// reference's hooks for them under a recipe (ref::AttentionRounding).
std::vector<RoundingPoint> attention_rounding_points();
// Under a recipe that rounds P̃ to a format of precision p (bits): per output element
// 2^(24 − p)·Σ_j p_ij·|v_jc|, the a priori bound of that rounding's effect on o (each p̃_j within
// a relative 2^-p of p_j while it is a normal number) in units of f32's unit roundoff: the error
// scale the judge takes under such a recipe (oracle/judge/recipe_judge.cc). Σ_j p_ij·|v_jc| is
// the op's attention over |v|: `attend` runs it on the values given. Empty when P̃ is not
// rounded.
template <class T, class Attend>
std::vector<double> probs_error_scale(const BoundRecipe& recipe, const ref::Mat<T>& v,
                                      Attend&& attend) {
  const std::optional<ref::Format> f = recipe.format("probs");
  if (!f) return {};
  ref::Mat<T> magnitude = v;
  for (T& x : magnitude.data) x = x < T(0) ? T(-x) : x;
  const double factor = std::ldexp(1.0, 24 - ref::spec(*f).precision());
  std::vector<double> s;
  for (const T& a : attend(magnitude)) s.push_back(factor * ref::to_double(a));
  return s;
}

template <class T>
ref::AttentionRounding<T> attention_rounding(const BoundRecipe& recipe) {
  ref::AttentionRounding<T> r;
  r.scores = point_rounding<T>(recipe, "scores");
  r.probs = point_rounding<T>(recipe, "probs");
  r.sum = point_rounding<T>(recipe, "sum");
  r.acc = point_rounding<T>(recipe, "acc");
  r.late_normalize = recipe.choice("normalize") == "late";
  return r;
}

class AttentionOp : public GenericOp<AttentionOp> {
 public:
  explicit AttentionOp(AttentionParams p) : p_(std::move(p)), cfg_(attention_config(p_)) {}
  const AttentionParams& params() const { return p_; }
  std::vector<InputDecl> inputs() const override;
  std::vector<OutputDecl> outputs() const override;
  // QKᵀ and PV (2d operations each per visible pair and head) plus the softmax's exp and divide.
  double cost() const override {
    return static_cast<double>(p_.queries()) * static_cast<double>(p_.tokens) *
           static_cast<double>(p_.heads) * (4.0 * static_cast<double>(p_.head_dim) + 40.0);
  }
  template <class T>
  Outputs<T> compute(const InputSet& in) const;
  // The blocked certified evaluation (reference/attention_enclosure.h) where it applies,
  // attention<Ball> elsewhere (a logit bias, f64 inputs).
  std::optional<Outputs<ref::Ball>> enclosure(const InputSet& in) const override;
  // The undecided elements' rows (query row, head) in MPFR (prefill without packed sequences).
  bool exact_elements(const InputSet& in, const std::vector<std::vector<int64_t>>& which,
                      Outputs<ref::mp>& out) const override;
  std::vector<RoundingPoint> rounding_points() const override {
    return attention_rounding_points();
  }
  template <class T>
  Outputs<T> compute(const InputSet& in, const BoundRecipe& recipe) const;

 private:
  template <class T>
  std::vector<T> varlen_attention(const ref::Mat<T>& q, const ref::Mat<T>& k,
                                  const ref::Mat<T>& v, const ref::AttentionRounding<T>& r) const;
  AttentionParams p_;
  ref::AttentionConfig cfg_;
};

}  // namespace lmo::oracle
