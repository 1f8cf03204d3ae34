// fast/activations.h, fast/glu.h and fast/softcap.h against reference/activations.h,
// reference/ffn.h glu_gate and reference/softmax.h softcap: the exact mp value of every element
// on the same stored inputs, judged with the policy table's ulp rows (relu, gelu, gelu_tanh,
// silu, reglu/geglu/swiglu_gate, softcap) on every storage format and supported target. Inputs:
// N(0, 3) values plus a wide sweep (down to the underflow of GELU's tail) and the special
// values (±0, ±inf, NaN, subnormals, ±max).
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "fast/activations.h"
#include "fast/glu.h"
#include "fast/softcap.h"
#include "tests/support/elementwise_inputs.h"

namespace lmo::fast {
namespace {

using namespace lmo::testdata;
using ref::mp;

const char* op_name(Activation a) { return activation_op_name(a); }
const char* gate_name(Activation a) { return gate_op_name(a); }
ref::Activation ref_kind(Activation a) { return ref_activation(a); }

// The shared elementwise inputs: normal values, a wide sweep, every special value.
ref::Tensor inputs(uint64_t seed, const char* name, Storage s) {
  return elementwise_inputs(seed, name, s);
}

TEST(FastActivations, EveryActivationStorageAndTarget) {
  for (Activation a :
       {Activation::relu, Activation::gelu, Activation::gelu_tanh, Activation::silu}) {
    for (Storage s : kAllStorages) {
      const ref::Tensor x = inputs(31, "x", s);
      const ExactElementwise e = exact_activation(ref_kind(a), x);
      oracle::GuardedBuffer y(dtype_of(s), {x.numel()});
      for_each_target([&](const std::string& target) {
        y.arm();
        activation(a, s, x.bytes().data(), y.data(), x.numel());
        expect_judged(op_name(a), "", e.exact, y, {}, target + " " + std::string(storage_name(s)),
                      e.kappa);
      });
      expect_thread_invariant(
          [&] {
            y.arm();
            activation(a, s, x.bytes().data(), y.data(), x.numel());
            return bytes_of(y);
          },
          op_name(a));
    }
  }
}

TEST(FastGlu, EveryGateStorageAndTarget) {
  for (Activation a :
       {Activation::relu, Activation::gelu, Activation::gelu_tanh, Activation::silu}) {
    for (Storage s : kAllStorages) {
      const ref::Tensor g = inputs(32, "gate", s);
      const ref::Tensor u = glu_up(32, s, g.numel());
      const ExactElementwise e = exact_glu_gate(ref_kind(a), g, u);
      oracle::GuardedBuffer h(dtype_of(s), {g.numel()});
      for_each_target([&](const std::string& target) {
        h.arm();
        glu_gate(a, s, g.bytes().data(), u.bytes().data(), h.data(), g.numel());
        expect_judged(gate_name(a), "", e.exact, h, {},
                      target + " " + std::string(storage_name(s)) + " " + op_name(a), e.kappa);
      });
    }
  }
}

TEST(FastSoftcap, EveryStorageAndTarget) {
  for (float cap : {30.0f, 50.0f, 1.0f}) {
    for (Storage s : kAllStorages) {
      const ref::Tensor z = inputs(33, "z", s);
      const std::vector<mp> exact = exact_softcap(z, cap);
      oracle::GuardedBuffer y(dtype_of(s), {z.numel()});
      for_each_target([&](const std::string& target) {
        y.arm();
        softcap(s, z.bytes().data(), y.data(), z.numel(), cap);
        expect_judged("softcap", "", exact, y, {},
                      target + " " + std::string(storage_name(s)) + " cap " + std::to_string(cap));
      });
    }
  }
}

// Caps outside [2^-64, 2^64] (valid, though no model uses them) form z/cap from z·2^±64 and a
// scaled reciprocal (fast/math-inl.h SoftcapConsts): a subnormal cap, tiny and huge ones, with
// z ~ N(0, (1.5·cap)²) in f32 (N's 9.4σ tail kept finite), so that both branches occur.
TEST(FastSoftcap, ExtremeCapsOnEveryTarget) {
  for (float cap : {0x1p-140f, 3e-30f, 5e25f, 2e37f}) {
    const ref::Tensor z = fast_normal(34, "z", Storage::f32, {4099}, 0.0, 1.5 * cap);
    const std::vector<mp> exact = exact_softcap(z, cap);
    oracle::GuardedBuffer y(ref::DType::f32, {z.numel()});
    for_each_target([&](const std::string& target) {
      y.arm();
      softcap(Storage::f32, z.bytes().data(), y.data(), z.numel(), cap);
      expect_judged("softcap", "", exact, y, {}, target + " f32 cap " + std::to_string(cap));
    });
  }
}

TEST(FastActivations, Validation) {
  float x[2] = {1, 2};
  EXPECT_THROW(activation(static_cast<Activation>(9), Storage::f32, x, x, 2),
               std::invalid_argument);
  EXPECT_THROW(activation(Activation::gelu, Storage::f32, x, nullptr, 2), std::invalid_argument);
  EXPECT_THROW(glu_gate(Activation::silu, Storage::f32, x, nullptr, x, 2), std::invalid_argument);
  EXPECT_THROW(softcap(Storage::f32, x, x, 2, 0.0f), std::invalid_argument);
  EXPECT_THROW(softcap(Storage::f32, x, x, 2, INFINITY), std::invalid_argument);
  EXPECT_THROW(softcap(Storage::f32, x, x, -1, 1.0f), std::invalid_argument);
}

}  // namespace
}  // namespace lmo::fast
