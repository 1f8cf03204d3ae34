// FMA contraction of the simulated kernels (the `+fma` recipe flag, oracle/rules/recipe.h).
//
// A compiler that contracts a·b + s into one fused multiply-add rounds once where the written
// code rounds twice. Real kernels differ here: nvcc contracts by default, GCC does on x86 with
// -ffp-contract=fast (its default outside ISO mode), MSVC does not. The products that feed a
// running sum (ref::mul_add) follow this switch: off (the default), the product is rounded to T
// and the sum to Acc; on, a·b + s is formed exactly and rounded once to Acc.
//
// The switch is per thread, like the floating-point environment it models (MXCSR, the CUDA
// compiler flag of one translation unit), so two simulations on two threads never see each
// other's; parallel_for hands the caller's setting to its workers. The exact reference never
// sets it: in mp a fused and an unfused multiply-add round alike.
#pragma once

namespace lmo::ref {

bool fma_contraction();

// Sets the calling thread's switch for the scope's lifetime and restores the previous value.
class FmaContraction {
 public:
  explicit FmaContraction(bool on);
  ~FmaContraction();
  FmaContraction(const FmaContraction&) = delete;
  FmaContraction& operator=(const FmaContraction&) = delete;

 private:
  bool previous_;
};

}  // namespace lmo::ref
