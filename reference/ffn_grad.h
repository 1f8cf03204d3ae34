// Backward of the F05 GLU gate h = act(a) ⊙ b (a = x W, b = x V; SwiGLU: act = SiLU, GeGLU:
// GELU or GELU-tanh, ReGLU: ReLU): given dh = ∂L/∂h,
//   da = dh ⊙ b ⊙ act'(a),   db = dh ⊙ act(a).
// The gradients of W, V, W2 and x are plain matrix products of these and are left to the caller.
#pragma once

#include <span>
#include <vector>

#include "reference/activations_grad.h"
#include "reference/ffn.h"

namespace lmo::ref {

template <class T>
struct GluGateGrad {
  std::vector<T> da;
  std::vector<T> db;
};

template <class T>
GluGateGrad<T> glu_gate_backward(std::span<const T> a, std::span<const T> b, std::span<const T> dh,
                                 Activation act, bool literal_activation = false) {
  const int64_t n = static_cast<int64_t>(a.size());
  detail::check_bias("glu_gate_backward", "b", b, n, "the length of a");
  detail::check_bias("glu_gate_backward", "dh", dh, n, "the length of a");
  GluGateGrad<T> out{std::vector<T>(a.size()), std::vector<T>(a.size())};
  for (size_t i = 0; i < a.size(); ++i) {
    out.da[i] = T(dh[i] * b[i]) * activate_grad(act, a[i], literal_activation);
    out.db[i] = dh[i] * activate(act, a[i], literal_activation);
  }
  return out;
}

}  // namespace lmo::ref
