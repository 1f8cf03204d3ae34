// Per-target dispatch from fast/activations.h's enum to the vector activation of fast/math-inl.h,
// so that a kernel's loop is compiled once per activation with the function inlined (a switch
// inside the loop would cost a branch per vector and keep the larger activations out of line).
//
// Included once per Highway target (the toggle guard below) after foreach_target.h.
#if defined(LMO_FAST_ACTIVATION_DISPATCH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LMO_FAST_ACTIVATION_DISPATCH_INL_H_
#undef LMO_FAST_ACTIVATION_DISPATCH_INL_H_
#else
#define LMO_FAST_ACTIVATION_DISPATCH_INL_H_
#endif

#include "fast/activations.h"
#include "fast/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {

// Calls fn(f) with f(d, v) the vector form of act (ReluF, GeluF, GeluTanhF or SiluF).
template <class Fn>
void WithActivation(Activation act, const Fn& fn) {
  switch (act) {
    case Activation::relu:
      fn([](auto d, auto v) { return ReluF(d, v); });
      return;
    case Activation::gelu:
      fn([](auto d, auto v) { return GeluF(d, v); });
      return;
    case Activation::gelu_tanh:
      fn([](auto d, auto v) { return GeluTanhF(d, v); });
      return;
    case Activation::silu:
      fn([](auto d, auto v) { return SiluF(d, v); });
      return;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#endif  // LMO_FAST_ACTIVATION_DISPATCH_INL_H_
