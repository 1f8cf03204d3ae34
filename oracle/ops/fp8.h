// Oracle ops of fp8 scaling ([workloads] item 4; reference/fp8_scaling.h):
//  - fp8_quantize: x (rows × cols, storage format) to q (e4m3 or e5m2) and one f32 scale per tile
//    (per tensor, per token, per 1×g token group, per g×g block);
//  - fp8_dequantize: q and its scales back to the storage format;
//  - fp8_linear: y = dequant(A)·dequant(W)ᵀ with A scaled per 1×b group and W per b×b block
//    (DeepSeek-V3), checked against the exact product of the dequantized operands.
// fp8_quantize's outputs have formats of their own (OutputDecl::format), so its cases list one
// format, that of x.
#pragma once

#include <cstdint>

#include "oracle/core/op_generic.h"
#include "reference/fp8_scaling.h"

namespace lmo::oracle {

enum class Fp8Granularity : uint8_t { kTensor, kToken, kGroup, kBlock };

struct Fp8Params {
  int64_t rows = 1, cols = 1;
  Fp8Granularity granularity = Fp8Granularity::kGroup;
  int64_t group = 128;  // g of 1×g groups and g×g blocks
  ref::Fp8Scaling scaling;
  ref::ScaleTiling tiling() const;
};

class Fp8QuantizeOp : public GenericOp<Fp8QuantizeOp> {
 public:
  explicit Fp8QuantizeOp(Fp8Params p) : p_(p) {}
  const Fp8Params& params() const { return p_; }
  std::vector<InputDecl> inputs() const override;
  std::vector<OutputDecl> outputs() const override;
  double cost() const override { return 6.0 * static_cast<double>(p_.rows * p_.cols); }
  template <class T>
  Outputs<T> compute(const InputSet& in) const;

 private:
  Fp8Params p_;
};

class Fp8DequantizeOp : public GenericOp<Fp8DequantizeOp> {
 public:
  explicit Fp8DequantizeOp(Fp8Params p) : p_(p) {}
  const Fp8Params& params() const { return p_; }
  std::vector<InputDecl> inputs() const override;
  std::vector<OutputDecl> outputs() const override;
  double cost() const override { return 2.0 * static_cast<double>(p_.rows * p_.cols); }
  template <class T>
  Outputs<T> compute(const InputSet& in) const;

 private:
  Fp8Params p_;
};

struct Fp8LinearParams {
  int64_t m = 1, n = 1, k = 1;
  int64_t block = 128;  // A: 1 × block groups; W: block × block
  ref::Format fp8 = ref::Format::e4m3;
  ref::ScaleTiling a_tiling() const { return {m, k, 1, block}; }
  ref::ScaleTiling w_tiling() const { return {n, k, block, block}; }
};

class Fp8LinearOp : public GenericOp<Fp8LinearOp> {
 public:
  explicit Fp8LinearOp(Fp8LinearParams p) : p_(p) {}
  const Fp8LinearParams& params() const { return p_; }
  std::vector<InputDecl> inputs() const override;
  std::vector<OutputDecl> outputs() const override;
  double cost() const override {
    return 2.0 * static_cast<double>(p_.m) * static_cast<double>(p_.n) * static_cast<double>(p_.k);
  }
  template <class T>
  Outputs<T> compute(const InputSet& in) const;
  // The balls from exact block sums (reference/fp8_linear_enclosure.h) where that path applies;
  // the formula on balls otherwise.
  std::optional<Outputs<ref::Ball>> enclosure(const InputSet& in) const override;

 private:
  Fp8LinearParams p_;
};

}  // namespace lmo::oracle
