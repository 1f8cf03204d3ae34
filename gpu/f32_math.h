// The library functions of the f32 kernels, in one place with the maximum error CUDA documents
// for each: the CUDA C++ Programming Guide's "Mathematical Functions" appendix, "Standard
// Functions", whose tables give each single- and double-precision function's maximum ulp error
// (nvcc's defaults: -prec-div=true, -prec-sqrt=true, -ftz=false, no --use_fast_math). The guide
// says of them that they "are generated from extensive but not exhaustive tests, so they are not
// guaranteed bounds".
//
//   function           CUDA's bound          used by
//   expf               2 ulp (full range)    softmax and log-sum-exp terms, GELU-tanh
//   exp  (double)      1 ulp                 SiLU's e^{−x}, rounded once to f32 (expf's 2 ulp
//                                            does not keep silu within its policy: below); the
//                                            underflow branches of SiLU and GELU-tanh
//   tanh (double)      1 ulp                 soft-cap, rounded once to f32 (likewise tanhf's 2)
//   erfc (double)      5 ulp                 GELU: CUDA's erfcf (4 ulp) exceeds the 2 ulp that
//                                            the gelu policy assumes of erfc (oracle/ops/
//                                            activations.cc), so erfc is taken in double and
//                                            rounded once to f32: within ½ + 2^-25 f32 ulp
//   log  (double)      1 ulp                 log Σ per row (as fast/ forms it), rounded once
// (tanhf, 2 ulp, logf, 1, erff, 2, and erfcf, 4, are not used.) Each call site repeats its bound.
// A double value rounded once to f32 is within ½ ulp + (its double ulps)·2^-29 ulp of f32. Where
// a single-precision function is used, its documented bound keeps the op within its policy on
// the host tests' inputs over BoundedLibm (below); where it did not (expf in SiLU, tanhf in the
// soft-cap: 4 ulp against the policies' 3), the kernel takes the double function instead.
//
// `Lib` is the library the functors of gpu/activation_f32.h and gpu/softmax_math.h are
// templates over: CudaF32 in the kernels. On the host (the math tests, tests/kernels/
// gpu_*_math_test.cc) CudaF32 calls the C library's functions instead, a stand-in within the same
// bounds (glibc lists expf, exp and log at 1 ulp, tanh at 2 and erfc at 5 on x86_64:
// libm-test-ulps), not CUDA's code: a host test shows the kernels' arithmetic around the
// functions, not CUDA's functions themselves. The tests also run the functors over a library
// that errs by the whole documented bound on every call (tests/support/bounded_libm.h), to
// show that the policies hold when CUDA's functions err as much as CUDA allows.
// Plain C++ when not compiled by nvcc; no CUDA header.
#pragma once

#include <cmath>

#include "gpu/f32_ops.h"

namespace lmo::gpu::f32 {

struct CudaF32 {
  // expf: ≤ 2 ulp (CUDA, full range).
  LMO_HD static float exp(float x) { return ::expf(x); }
  // exp (double): ≤ 1 ulp of double (CUDA).
  LMO_HD static double exp(double x) { return ::exp(x); }
  // tanh (double): ≤ 1 ulp of double (CUDA).
  LMO_HD static double tanh(double x) { return ::tanh(x); }
  // erfc (double): ≤ 5 ulp of double (CUDA).
  LMO_HD static double erfc(double x) { return ::erfc(x); }
  // log (double): ≤ 1 ulp of double (CUDA).
  LMO_HD static double log(double x) { return ::log(x); }
};

}  // namespace lmo::gpu::f32
