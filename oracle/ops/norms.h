// Oracle ops of F01/F02: rmsnorm, rmsnorm_gemma (1 + γ), layernorm over rows × d, and
// fused_add_rmsnorm (the residual add fused with RMSNorm, vLLM's and FlashInfer's kernel).
// Inputs x [rows, d], gamma [d] (and beta [d]; fused: residual [rows, d]); output y [rows, d]
// (fused: the updated residual x + r first, then y).
#pragma once

#include <cstdint>

#include "oracle/core/op_generic.h"

namespace lmo::oracle {

enum class NormKind : uint8_t { kRms, kRmsGemma, kLayer, kFusedAddRms };

struct NormParams {
  NormKind kind = NormKind::kRms;
  int64_t rows = 0;
  int64_t d = 0;
  double eps = 0;
};

class NormOp : public GenericOp<NormOp> {
 public:
  explicit NormOp(NormParams p) : p_(p) {}
  const NormParams& params() const { return p_; }
  std::vector<InputDecl> inputs() const override;
  std::vector<OutputDecl> outputs() const override;
  double cost() const override { return 5.0 * static_cast<double>(p_.rows * p_.d); }
  // Rows are tokens: x and the residual per row, the weights read whole.
  int64_t independent_rows() const override { return p_.rows; }
  std::unique_ptr<Op> with_rows(int64_t rows) const override {
    NormParams p = p_;
    p.rows = rows;
    return std::make_unique<NormOp>(p);
  }
  bool row_input(std::string_view name) const override { return name == "x" || name == "residual"; }
  template <class T>
  Outputs<T> compute(const InputSet& in) const;
  // rmsnorm: form (divide | rsqrt), inv_rms and normed (formats): ref::NormRounding;
  // fused_add_rmsnorm: sum (the format of x + r as the norm reads it) and the same.
  std::vector<RoundingPoint> rounding_points() const override;
  template <class T>
  Outputs<T> compute(const InputSet& in, const BoundRecipe& recipe) const;

 private:
  static std::vector<RoundingPoint> rms_points();
  NormParams p_;
};

}  // namespace lmo::oracle
