// The elementwise kernels' tests' shared pieces (fast and GPU kernels alike): the inputs, 4 × 4096
// normal values (σ = 3), a sweep of [−40, 40] in steps of 1/64 rounded to the storage (down to
// the underflow of GELU's tail), then every special value (±0, ±inf, NaN, subnormals, ±max), the
// length not a multiple of any vector or block; and, for an activation enum A with enumerators
// relu, gelu, gelu_tanh and silu (fast::Activation, gpu::Activation), its policy table names and
// the reference's activation; and the exact values (with the condition numbers that the GELU
// policies' argument error reads) of each op on those inputs.
#pragma once

#include <iterator>
#include <vector>

#include "oracle/ops/activations.h"
#include "oracle/core/specials.h"
#include "reference/activations.h"
#include "reference/softmax.h"
#include "tests/support/fast_cases.h"

namespace lmo::testdata {

inline ref::Tensor elementwise_inputs(uint64_t seed, const char* name, fast::Storage s) {
  const ref::Tensor base = fast_normal(seed, name, s, {4 * 4096}, 0.0, 3.0);
  const int64_t sweep = 80 * 64 + 1;
  const int64_t specials = static_cast<int64_t>(std::size(oracle::kAllSpecials));
  ref::Tensor t(dtype_of(s), {base.numel() + sweep + specials});
  for (int64_t i = 0; i < base.numel(); ++i) t.set_bits(i, base.bits(i));
  for (int64_t j = 0; j < sweep; ++j) t.set(base.numel() + j, -40.0 + static_cast<double>(j) / 64);
  for (int64_t k = 0; k < specials; ++k) {
    t.set_bits(base.numel() + sweep + k,
               oracle::special_bits(format_of(s), oracle::kAllSpecials[k]));
  }
  return t;
}

template <class A>
const char* activation_op_name(A a) {
  return a == A::relu ? "relu" : a == A::gelu ? "gelu" : a == A::gelu_tanh ? "gelu_tanh" : "silu";
}
template <class A>
const char* gate_op_name(A a) {
  return a == A::relu        ? "reglu_gate"
         : a == A::silu      ? "swiglu_gate"
         : a == A::gelu_tanh ? "geglu_tanh_gate"
                             : "geglu_gate";
}
template <class A>
ref::Activation ref_activation(A a) {
  return a == A::relu        ? ref::Activation::kReLU
         : a == A::gelu      ? ref::Activation::kGELU
         : a == A::gelu_tanh ? ref::Activation::kGELUTanh
                             : ref::Activation::kSiLU;
}

// The GLU tests' up projection for a gate of n elements: N(0, 1).
inline ref::Tensor glu_up(uint64_t seed, fast::Storage s, int64_t n) {
  return fast_normal(seed, "up", s, {n}, 0.0, 1.0);
}

// Exact values of an elementwise op, and each element's condition number κ of the activation.
struct ExactElementwise {
  std::vector<ref::mp> exact;
  std::vector<double> kappa;
};

inline ExactElementwise exact_activation(ref::Activation a, const ref::Tensor& x) {
  ExactElementwise r;
  for (const ref::mp& v : values_as<ref::mp>(x)) {
    r.exact.push_back(ref::activate(a, v));
    r.kappa.push_back(oracle::activation_condition(a, v));
  }
  return r;
}

// act(gate) · up, κ of the activation at the gate.
inline ExactElementwise exact_glu_gate(ref::Activation a, const ref::Tensor& gate,
                                       const ref::Tensor& up) {
  const std::vector<ref::mp> gv = values_as<ref::mp>(gate), uv = values_as<ref::mp>(up);
  ExactElementwise r{std::vector<ref::mp>(gv.size()), std::vector<double>(gv.size())};
  for (size_t i = 0; i < gv.size(); ++i) {
    r.exact[i] = ref::activate(a, gv[i]) * uv[i];
    r.kappa[i] = oracle::activation_condition(a, gv[i]);
  }
  return r;
}

inline std::vector<ref::mp> exact_softcap(const ref::Tensor& z, float cap) {
  std::vector<ref::mp> exact;
  for (const ref::mp& v : values_as<ref::mp>(z)) exact.push_back(ref::softcap(v, ref::mp(cap)));
  return exact;
}

}  // namespace lmo::testdata
