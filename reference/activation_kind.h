// The activation functions of F04-F06 as a kind, shared by the formulas (activations.h) and
// the model presets (presets.h), which must not pull in the multiprecision headers.
#pragma once

namespace lmo::ref {

enum class Activation { kReLU, kGELU, kGELUTanh, kSiLU };

inline const char* activation_name(Activation a) {
  switch (a) {
    case Activation::kReLU:
      return "relu";
    case Activation::kGELU:
      return "gelu";
    case Activation::kGELUTanh:
      return "gelu_tanh";
    case Activation::kSiLU:
      return "silu";
  }
  return "?";
}

}  // namespace lmo::ref
