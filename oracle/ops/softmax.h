// Oracle ops of F12/F13/F14/F17 over rows of logits: softmax, logsumexp, the fused
// cross_entropy (loss, log Z and ∂loss/∂z, with z-loss λ and an optional soft-cap), and
// online_softmax (the tiled evaluation of F17).
#pragma once

#include <cstdint>

#include "oracle/core/op_generic.h"
#include "reference/softmax.h"

namespace lmo::oracle {

enum class SoftmaxKind : uint8_t { kSoftmax, kLogsumexp, kCrossEntropy, kOnline };

struct SoftmaxParams {
  SoftmaxKind kind = SoftmaxKind::kSoftmax;
  int64_t rows = 0;
  int64_t n = 0;         // row length (the vocabulary for cross_entropy)
  double scale = 2;      // standard deviation of the generated logits
  double lambda = 0;     // cross_entropy: z-loss coefficient
  double cap = 0;        // cross_entropy: soft-cap, 0 = none
  int64_t tile = 0;      // online_softmax
};

class SoftmaxOp : public GenericOp<SoftmaxOp> {
 public:
  explicit SoftmaxOp(SoftmaxParams p) : p_(p) {}
  const SoftmaxParams& params() const { return p_; }
  std::vector<InputDecl> inputs() const override;
  std::vector<OutputDecl> outputs() const override;
  double cost() const override { return 30.0 * static_cast<double>(p_.rows * p_.n); }
  // cross_entropy without a soft cap: the blocked evaluation of
  // reference/cross_entropy_enclosure.h; the rest the formula on balls.
  std::optional<Outputs<ref::Ball>> enclosure(const InputSet& in) const override;
  int64_t independent_rows() const override { return p_.rows; }
  std::unique_ptr<Op> with_rows(int64_t rows) const override {
    SoftmaxParams p = p_;
    p.rows = rows;
    return std::make_unique<SoftmaxOp>(p);
  }
  template <class T>
  Outputs<T> compute(const InputSet& in) const;
  // softmax, logsumexp, cross_entropy: exps and sum (formats): ref::SoftmaxRounding. The tiled
  // online_softmax has none (its order is its own).
  std::vector<RoundingPoint> rounding_points() const override;
  template <class T>
  Outputs<T> compute(const InputSet& in, const BoundRecipe& recipe) const;

 private:
  template <class T>
  Outputs<T> rows(const InputSet& in, const ref::SoftmaxRounding<T>& rounding) const;
  SoftmaxParams p_;
};

}  // namespace lmo::oracle
