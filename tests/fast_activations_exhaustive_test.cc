// fast/activations.h and fast/glu.h on EVERY input of the 16-bit storages: all 65,536 bf16 and
// all 65,536 f16 bit patterns (zeros, subnormals, infinities and every NaN payload included) as
// the activation's input and as the gate of its GLU, against the exact mp reference
// (reference/activations.h), judged with the policy table's rows on every supported target; and
// in f32, a stride through the whole f32 line plus a dense stride through the region where the
// exponentials of SiLU and GELU leave the normal range (|x| ≈ 80 … 128 for SiLU, 12 … 16 for
// GELU), where a subnormal intermediate e^x once cost SiLU 52 ulp at x ≈ −100.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fast/activations.h"
#include "fast/glu.h"
#include "oracle/guarded_buffer.h"
#include "oracle/ops/activations.h"
#include "reference/activations.h"
#include "tests/support/elementwise_inputs.h"
#include "tests/support/fast_cases.h"

namespace lmo::fast {
namespace {

using namespace lmo::testdata;
using ref::mp;

constexpr Activation kActivations[] = {Activation::relu, Activation::gelu, Activation::gelu_tanh,
                                       Activation::silu};

// Exact activation values and the condition numbers the GELU policies need (policy.h).
struct Exact {
  std::vector<mp> y;
  std::vector<double> kappa;
};

Exact exact_activation(Activation a, const std::vector<mp>& x) {
  Exact e;
  for (const mp& v : x) {
    e.y.push_back(ref::activate(ref_activation(a), v));
    e.kappa.push_back(oracle::activation_condition(ref_activation(a), v));
  }
  return e;
}

// Runs and judges the activation and its gate on the inputs x (up: the gate's second operand),
// on every supported target, and checks that the outputs do not depend on the thread count.
void check_everywhere(Activation a, Storage s, const ref::Tensor& x, const ref::Tensor& up,
                      const std::string& what) {
  const std::vector<mp> xv = values_as<mp>(x), uv = values_as<mp>(up);
  const Exact e = exact_activation(a, xv);
  std::vector<mp> gated(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) gated[i] = e.y[i] * uv[i];
  oracle::GuardedBuffer y(dtype_of(s), {x.numel()});
  oracle::GuardedBuffer h(dtype_of(s), {x.numel()});
  const auto run_act = [&] {
    y.arm();
    activation(a, s, x.bytes().data(), y.data(), x.numel());
  };
  const auto run_gate = [&] {
    h.arm();
    glu_gate(a, s, x.bytes().data(), up.bytes().data(), h.data(), x.numel());
  };
  for_each_target([&](const std::string& target) {
    const std::string where = target + " " + std::string(storage_name(s)) + " " + what;
    run_act();
    expect_judged(activation_op_name(a), "", e.y, y, {}, where, e.kappa);
    run_gate();
    expect_judged(gate_op_name(a), "", gated, h, {}, where, e.kappa);
  });
  const std::string where = std::string(activation_op_name(a)) + " " + what;
  expect_thread_invariant(
      [&] {
        run_act();
        run_gate();
        return bytes_of({&y, &h});
      },
      where);
}

// Every bit pattern of a 16-bit storage, in order, except the two NaNs that a kernel passing
// its input's NaN through (quieted) would store as the output buffer's poison pattern
// (oracle/guarded_buffer.h): the judge would take them for unwritten elements. They are replaced
// by the format's canonical quiet NaN (sign and payload of a NaN are not what is checked here).
ref::Tensor every_pattern(Storage s) {
  const uint64_t poison = oracle::poison_bits(dtype_of(s));
  const uint64_t quiet = s == Storage::bf16 ? 0x0040 : 0x0200;
  const uint64_t canonical = s == Storage::bf16 ? 0x7FC0 : 0x7E00;
  ref::Tensor t(dtype_of(s), {65536});
  for (uint64_t i = 0; i < 65536; ++i) {
    t.set_bits(static_cast<int64_t>(i), (i | quiet) == poison ? canonical : i);
  }
  return t;
}

TEST(FastActivationsExhaustive, EveryBf16AndF16Input) {
  for (Storage s : {Storage::bf16, Storage::f16}) {
    const ref::Tensor x = every_pattern(s);
    // up ~ N(0, 1) in the same storage: the gate's product with an ordinary value.
    const ref::Tensor up = fast_normal(61, "up", s, {x.numel()});
    for (Activation a : kActivations) check_everywhere(a, s, x, up, "every 16-bit input");
  }
}

// f32 inputs: every 131071st bit pattern of the whole line (odd, so the low significand bits
// take every residue; both signs), every 509th f32 in [−128, −80] (SiLU's e^x below the normal
// range) and in [−16, −12] (GELU's e^{−x²/2} likewise), and ±0, ±inf: 53,248 values, since
// the exact mp values cost ≈ 10^4 times a kernel evaluation.
ref::Tensor f32_inputs() {
  std::vector<uint32_t> bits;
  for (uint64_t u = 0; u < 0x7F800000u; u += 131071) {
    bits.push_back(static_cast<uint32_t>(u));
    bits.push_back(static_cast<uint32_t>(u) | 0x80000000u);
  }
  for (uint32_t u = 0xC2A00000u; u <= 0xC3000000u; u += 509) bits.push_back(u);  // −80 … −128
  for (uint32_t u = 0xC1400000u; u <= 0xC1800000u; u += 509) bits.push_back(u);  // −12 … −16
  for (uint32_t u : {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u}) bits.push_back(u);
  ref::Tensor t(ref::DType::f32, {static_cast<int64_t>(bits.size())});
  for (size_t i = 0; i < bits.size(); ++i) t.set_bits(static_cast<int64_t>(i), bits[i]);
  return t;
}

TEST(FastActivationsExhaustive, F32StrideAndUnderflowRegions) {
  const ref::Tensor x = f32_inputs();
  const ref::Tensor up = fast_normal(62, "up", Storage::f32, {x.numel()});
  for (Activation a : kActivations) check_everywhere(a, Storage::f32, x, up, "f32 stride");
}

}  // namespace
}  // namespace lmo::fast
