// Oracle op of F22: aux_free_update, one step of auxiliary-loss-free balancing
// (reference/moe.h update_balance_bias): c_i ← c_i + γ for an expert loaded below the mean over
// the N experts, c_i − γ above it, unchanged at it. Inputs bias c [N] (storage format) and load
// [N] (i64 token counts per expert); parameter γ. Output new_bias [N] (named apart from its input).
//
// Its exact run supplies, per element, the condition number of c_i ± γ with respect to γ,
// |γ| / |c_i ± γ| (0 where c_i is unchanged): a kernel holds γ as an f32 constant, rounded once,
// and that rounding is amplified where c_i ± γ cancels (its record in moe_balance.cc).
#pragma once

#include <cstdint>

#include "oracle/core/op_generic.h"

namespace lmo::oracle {

struct AuxFreeParams {
  int64_t experts = 1;  // N
  double gamma = 0.001;
  double bias_std = 0.05;  // of the generated c
  int64_t max_load = 1;    // loads are drawn uniformly from [0, max_load)
};

class AuxFreeUpdateOp : public GenericOp<AuxFreeUpdateOp> {
 public:
  explicit AuxFreeUpdateOp(AuxFreeParams p) : p_(p) {}
  const AuxFreeParams& params() const { return p_; }
  std::vector<InputDecl> inputs() const override;
  std::vector<OutputDecl> outputs() const override;
  double cost() const override { return 4.0 * static_cast<double>(p_.experts); }
  void annotate_exact(const InputSet& in, Outputs<ref::mp>& out) const override;
  template <class T>
  Outputs<T> compute(const InputSet& in) const;

 private:
  AuxFreeParams p_;
};

}  // namespace lmo::oracle
