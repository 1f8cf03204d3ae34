// fast/activations.h, fast/glu.h and fast/softcap.h on EVERY input of the 16-bit storages: all
// 65,536 bf16 and all 65,536 f16 bit patterns (zeros, subnormals, infinities and every NaN
// payload included) as the activation's input and as the gate of its GLU, and as the soft-cap's
// z, against the exact mp reference (reference/activations.h, reference/softmax.h), judged with
// the policy table's rows on every supported target; and in f32, a stride through the whole f32
// line plus a dense stride through the region where the exponentials of SiLU, GELU and GELU-tanh
// leave the normal range (|x| ≈ 80 … 128 for SiLU, 12 … 16 for GELU, 9.5 … 12 for GELU-tanh),
// where a subnormal intermediate e^x once cost SiLU 52 ulp at x ≈ −100, and for the soft-cap
// the region of tanh's exponential (|z| from 0.5 to 10 caps, up to where tanh rounds to 1).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fast/activations.h"
#include "fast/glu.h"
#include "fast/softcap.h"
#include "oracle/core/guarded_buffer.h"
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
// (oracle/core/guarded_buffer.h): the judge would take them for unwritten elements. They are replaced
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

ref::Tensor f32_tensor(const std::vector<uint32_t>& bits) {
  ref::Tensor t(ref::DType::f32, {static_cast<int64_t>(bits.size())});
  for (size_t i = 0; i < bits.size(); ++i) t.set_bits(static_cast<int64_t>(i), bits[i]);
  return t;
}

// Every 131071st bit pattern of the whole f32 line (odd, so the low significand bits take every
// residue; both signs) and ±0, ±inf.
std::vector<uint32_t> f32_line() {
  std::vector<uint32_t> bits;
  for (uint64_t u = 0; u < 0x7F800000u; u += 131071) {
    bits.push_back(static_cast<uint32_t>(u));
    bits.push_back(static_cast<uint32_t>(u) | 0x80000000u);
  }
  for (uint32_t u : {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u}) bits.push_back(u);
  return bits;
}

// f32 inputs: the line above, every 509th f32 in [−128, −80] (SiLU's e^x below the normal
// range), in [−16, −12] (GELU's e^{−x²/2} likewise) and in [−12, −9.5] (GELU-tanh's e^{v} for
// v < −88, x·(e^{v}·2^64)·2^-64 there): 58,400 values, since the exact mp values cost ≈ 10^4
// times a kernel evaluation.
ref::Tensor f32_inputs() {
  std::vector<uint32_t> bits = f32_line();
  for (uint32_t u = 0xC2A00000u; u <= 0xC3000000u; u += 509) bits.push_back(u);  // −80 … −128
  for (uint32_t u = 0xC1400000u; u <= 0xC1800000u; u += 509) bits.push_back(u);  // −12 … −16
  for (uint32_t u = 0xC1180000u; u < 0xC1400000u; u += 509) bits.push_back(u);   // −9.5 … −12
  return f32_tensor(bits);
}

TEST(FastActivationsExhaustive, F32StrideAndUnderflowRegions) {
  const ref::Tensor x = f32_inputs();
  const ref::Tensor up = fast_normal(62, "up", Storage::f32, {x.numel()});
  for (Activation a : kActivations) check_everywhere(a, Storage::f32, x, up, "f32 stride");
}

// Soft-cap z' = cap·tanh(z/cap) on the inputs z, for each cap, on every supported target, and
// independent of the thread count.
void check_softcap_everywhere(Storage s, const ref::Tensor& z, const std::string& what) {
  for (float cap : {30.0f, 1.0f, 7.3f}) {
    const std::vector<mp> exact = exact_softcap(z, cap);
    oracle::GuardedBuffer y(dtype_of(s), {z.numel()});
    const auto run = [&] {
      y.arm();
      softcap(s, z.bytes().data(), y.data(), z.numel(), cap);
    };
    const std::string where =
        std::string(storage_name(s)) + " " + what + " cap " + std::to_string(cap);
    for_each_target([&](const std::string& target) {
      run();
      expect_judged("softcap", "", exact, y, {}, target + " " + where);
    });
    expect_thread_invariant(
        [&] {
          run();
          return bytes_of(y);
        },
        "softcap " + where);
  }
}

TEST(FastSoftcapExhaustive, EveryBf16AndF16Input) {
  for (Storage s : {Storage::bf16, Storage::f16}) {
    check_softcap_everywhere(s, every_pattern(s), "every 16-bit input");
  }
}

// f32: the line above and every 1021st f32 with |z| from 0.5 to 10 times cap 30 (tanh's
// exponential, its clamp at |t| = 9.5 and the rounding to 1 beyond 9.01), both signs, each
// followed by z/37 (|t| < 0.625 for |z| < 23 caps), so that most vectors hold lanes on both sides
// of the soft-cap's branch: each lane must take the value of its own branch.
TEST(FastSoftcapExhaustive, F32StrideAndExponentialRegion) {
  std::vector<uint32_t> bits = f32_line();
  for (uint32_t u = 0x41700000u; u <= 0x43960000u; u += 1021) {  // 15 … 300
    float z;
    std::memcpy(&z, &u, sizeof z);
    const float small = z / 37.0f;
    uint32_t v;
    std::memcpy(&v, &small, sizeof v);
    bits.push_back(u);
    bits.push_back(v | 0x80000000u);
    bits.push_back(u | 0x80000000u);
    bits.push_back(v);
  }
  check_softcap_everywhere(Storage::f32, f32_tensor(bits), "f32 stride");
}

}  // namespace
}  // namespace lmo::fast
