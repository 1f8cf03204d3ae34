// gpu/api.h activations, GLU gates and soft-cap against reference/activations.h,
// reference/ffn.h glu_gate and reference/softmax.h softcap: the exact mp value of every element
// on the same stored inputs (normal values, a wide sweep, every special value), judged with the
// policy table's ulp rows on every storage format (with GELU's condition numbers for the
// policies' argument error); run-twice determinism; validation (runs without a device).
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "gpu/api.h"
#include "tests/support/elementwise_inputs.h"
#include "tests/support/gpu_cases.h"

namespace lmo::gpu {
namespace {

using namespace lmo::testdata;
using fast::Storage;
using ref::mp;

constexpr Activation kAll[] = {Activation::relu, Activation::gelu, Activation::gelu_tanh,
                               Activation::silu};

const char* op_name(Activation a) { return activation_op_name(a); }
const char* gate_name(Activation a) { return gate_op_name(a); }
ref::Activation ref_kind(Activation a) { return ref_activation(a); }

TEST(GpuActivations, EveryActivationAndStorage) {
  LMO_REQUIRE_GPU();
  for (Activation a : kAll) {
    for (Storage s : fast::kAllStorages) {
      const ref::Tensor x = elementwise_inputs(31, "x", s);
      const ExactElementwise e = exact_activation(ref_kind(a), x);
      oracle::GuardedBuffer y(dtype_of(s), {x.numel()});
      const auto run = [&] {
        y.arm();
        activation(a, gpu_storage(s), x.bytes().data(), y.data(), x.numel());
        return bytes_of(y);
      };
      run();
      const std::string where = "gpu " + std::string(fast::storage_name(s));
      expect_judged(op_name(a), "", e.exact, y, {}, where, e.kappa);
      expect_deterministic(run, std::string(op_name(a)) + " " + where);
    }
  }
}

TEST(GpuGlu, EveryGateAndStorage) {
  LMO_REQUIRE_GPU();
  for (Activation a : kAll) {
    for (Storage s : fast::kAllStorages) {
      const ref::Tensor g = elementwise_inputs(32, "gate", s);
      const ref::Tensor u = glu_up(32, s, g.numel());
      const ExactElementwise e = exact_glu_gate(ref_kind(a), g, u);
      oracle::GuardedBuffer h(dtype_of(s), {g.numel()});
      const auto run = [&] {
        h.arm();
        glu_gate(a, gpu_storage(s), g.bytes().data(), u.bytes().data(), h.data(), g.numel());
        return bytes_of(h);
      };
      run();
      const std::string where = "gpu " + std::string(fast::storage_name(s));
      expect_judged(gate_name(a), "", e.exact, h, {}, where, e.kappa);
      expect_deterministic(run, std::string(gate_name(a)) + " " + where);
    }
  }
}

TEST(GpuSoftcap, EveryCapAndStorage) {
  LMO_REQUIRE_GPU();
  for (float cap : {30.0f, 50.0f, 1.0f}) {
    for (Storage s : fast::kAllStorages) {
      const ref::Tensor z = elementwise_inputs(33, "z", s);
      const std::vector<mp> exact = exact_softcap(z, cap);
      oracle::GuardedBuffer y(dtype_of(s), {z.numel()});
      const auto run = [&] {
        y.arm();
        softcap(gpu_storage(s), z.bytes().data(), y.data(), z.numel(), cap);
        return bytes_of(y);
      };
      run();
      const std::string where =
          "gpu " + std::string(fast::storage_name(s)) + " cap " + std::to_string(cap);
      expect_judged("softcap", "", exact, y, {}, where);
      expect_deterministic(run, "softcap " + where);
    }
  }
}

TEST(GpuActivations, Validation) {
  float x[2] = {1, 2};
  const gpu::Storage f = gpu::Storage::f32;
  EXPECT_THROW(activation(static_cast<Activation>(9), f, x, x, 2), std::invalid_argument);
  EXPECT_THROW(activation(Activation::gelu, f, x, nullptr, 2), std::invalid_argument);
  EXPECT_THROW(glu_gate(Activation::silu, f, x, nullptr, x, 2), std::invalid_argument);
  EXPECT_THROW(softcap(f, x, x, 2, 0.0f), std::invalid_argument);
  EXPECT_THROW(softcap(f, x, x, 2, INFINITY), std::invalid_argument);
  EXPECT_THROW(softcap(f, x, x, -1, 1.0f), std::invalid_argument);
  EXPECT_NO_THROW(activation(Activation::silu, f, nullptr, nullptr, 0));
}

}  // namespace
}  // namespace lmo::gpu
