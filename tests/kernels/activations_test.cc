// The elementwise kernels of one kernel library (tests/support/kernel_libraries.h: fast/ on every
// Highway target, or gpu/): activations, GLU gates and soft-cap against reference/activations.h,
// reference/ffn.h glu_gate and reference/softmax.h softcap. The exact mp value of every element on
// the same stored inputs (N(0, 3) values plus a wide sweep down to the underflow of GELU's tail,
// and every special value: ±0, ±inf, NaN, subnormals, ±max), judged with the policy table's ulp
// rows (relu, gelu, gelu_tanh, silu, reglu/geglu/swiglu_gate, softcap; GELU's condition numbers
// for the policies' argument error) on every storage format; extreme caps; the library's
// repeatability check; validation, which holds on any machine.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "tests/support/elementwise_inputs.h"
#include "tests/support/kernel_libraries.h"

namespace lmo::testdata {
namespace {

using fast::Storage;
using kernels::Activation;
using ref::mp;

constexpr Activation kAll[] = {Activation::relu, Activation::gelu, Activation::gelu_tanh,
                               Activation::silu};

template <class Lib>
class KernelActivations : public ::testing::Test {};
TYPED_TEST_SUITE(KernelActivations, TestedKernels);

// Runs `run` on every variant of the library and judges `y` against `exact` after each, then the
// library's repeatability check.
template <class Lib, class Run>
void judge_each_variant(const char* op, const std::vector<mp>& exact,
                        const std::vector<double>& kappa, oracle::GuardedBuffer& y, Run run,
                        const std::string& where) {
  Lib::for_each_variant([&](const std::string& variant) {
    run();
    expect_judged(op, "", exact, y, {}, variant + " " + where, kappa);
  });
  Lib::expect_repeatable(
      [&] {
        run();
        return bytes_of(y);
      },
      std::string(op) + " " + where);
}

TYPED_TEST(KernelActivations, EveryActivationAndStorage) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (Activation a : kAll) {
    for (Storage s : fast::kAllStorages) {
      const ref::Tensor x = elementwise_inputs(31, "x", s);
      const ExactElementwise e = exact_activation(ref_activation(a), x);
      oracle::GuardedBuffer y(dtype_of(s), {x.numel()});
      judge_each_variant<TypeParam>(
          activation_op_name(a), e.exact, e.kappa, y,
          [&] {
            y.arm();
            TypeParam::activation(a, s, x.bytes().data(), y.data(), x.numel());
          },
          std::string(fast::storage_name(s)));
    }
  }
}

TYPED_TEST(KernelActivations, EveryGluGateAndStorage) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (Activation a : kAll) {
    for (Storage s : fast::kAllStorages) {
      const ref::Tensor g = elementwise_inputs(32, "gate", s);
      const ref::Tensor u = glu_up(32, s, g.numel());
      const ExactElementwise e = exact_glu_gate(ref_activation(a), g, u);
      oracle::GuardedBuffer h(dtype_of(s), {g.numel()});
      judge_each_variant<TypeParam>(
          gate_op_name(a), e.exact, e.kappa, h,
          [&] {
            h.arm();
            TypeParam::glu_gate(a, s, g.bytes().data(), u.bytes().data(), h.data(), g.numel());
          },
          std::string(fast::storage_name(s)));
    }
  }
}

TYPED_TEST(KernelActivations, SoftcapEveryCapAndStorage) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (float cap : {30.0f, 50.0f, 1.0f}) {
    for (Storage s : fast::kAllStorages) {
      const ref::Tensor z = elementwise_inputs(33, "z", s);
      const std::vector<mp> exact = exact_softcap(z, cap);
      oracle::GuardedBuffer y(dtype_of(s), {z.numel()});
      judge_each_variant<TypeParam>(
          "softcap", exact, {}, y,
          [&] {
            y.arm();
            TypeParam::softcap(s, z.bytes().data(), y.data(), z.numel(), cap);
          },
          std::string(fast::storage_name(s)) + " cap " + std::to_string(cap));
    }
  }
}

// Caps outside [2^-64, 2^64] (valid, though no model uses them; the Highway kernels form z/cap
// from z·2^±64 and a scaled reciprocal, fast/math-inl.h SoftcapConsts): a subnormal cap, tiny and
// huge ones, with z ~ N(0, (1.5·cap)²) in f32 (N's 9.4σ tail kept finite), so that both branches
// occur.
TYPED_TEST(KernelActivations, SoftcapExtremeCaps) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (float cap : {0x1p-140f, 3e-30f, 5e25f, 2e37f}) {
    const ref::Tensor z = fast_normal(34, "z", Storage::f32, {4099}, 0.0, 1.5 * cap);
    const std::vector<mp> exact = exact_softcap(z, cap);
    oracle::GuardedBuffer y(ref::DType::f32, {z.numel()});
    judge_each_variant<TypeParam>(
        "softcap", exact, {}, y,
        [&] {
          y.arm();
          TypeParam::softcap(Storage::f32, z.bytes().data(), y.data(), z.numel(), cap);
        },
        "f32 cap " + std::to_string(cap));
  }
}

// Validation happens before any kernel runs (before any CUDA call), so it holds on every machine.
TYPED_TEST(KernelActivations, Validation) {
  float x[2] = {1, 2};
  const Storage f = Storage::f32;
  EXPECT_THROW(TypeParam::activation(static_cast<Activation>(9), f, x, x, 2),
               std::invalid_argument);
  EXPECT_THROW(TypeParam::activation(Activation::gelu, f, x, nullptr, 2), std::invalid_argument);
  EXPECT_THROW(TypeParam::glu_gate(Activation::silu, f, x, nullptr, x, 2), std::invalid_argument);
  EXPECT_THROW(TypeParam::softcap(f, x, x, 2, 0.0f), std::invalid_argument);
  EXPECT_THROW(TypeParam::softcap(f, x, x, 2, INFINITY), std::invalid_argument);
  EXPECT_THROW(TypeParam::softcap(f, x, x, -1, 1.0f), std::invalid_argument);
  EXPECT_NO_THROW(TypeParam::activation(Activation::silu, f, nullptr, nullptr, 0));
}

}  // namespace
}  // namespace lmo::testdata
