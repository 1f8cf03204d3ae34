// F05 GLU gates on a (gate, up) pair of arrays of n values in storage s: h = act(gate) ⊙ up,
// act(gate) formed in f32 (fast/activations.h), the product rounded once to s. Mirrors
// reference/ffn.h glu_gate: ReGLU (relu), GeGLU (gelu), GeGLU-tanh (gelu_tanh, Gemma), SwiGLU
// (silu).
#pragma once

#include <cstdint>

#include "fast/activations.h"
#include "fast/storage.h"

namespace lmo::fast {

// h[i] = act(gate[i])·up[i], i < n. Throws std::invalid_argument for n < 0, a null pointer with
// n > 0, or an unknown activation.
void glu_gate(Activation act, Storage s, const void* gate, const void* up, void* h, int64_t n);

inline void reglu(Storage s, const void* gate, const void* up, void* h, int64_t n) {
  glu_gate(Activation::relu, s, gate, up, h, n);
}
inline void geglu(Storage s, const void* gate, const void* up, void* h, int64_t n) {
  glu_gate(Activation::gelu, s, gate, up, h, n);
}
inline void geglu_tanh(Storage s, const void* gate, const void* up, void* h, int64_t n) {
  glu_gate(Activation::gelu_tanh, s, gate, up, h, n);
}
inline void swiglu(Storage s, const void* gate, const void* up, void* h, int64_t n) {
  glu_gate(Activation::silu, s, gate, up, h, n);
}

}  // namespace lmo::fast
