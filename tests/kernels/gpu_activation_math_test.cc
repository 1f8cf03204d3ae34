// The GPU elementwise kernels' f32 math (gpu/activation_f32.h: the activations, the GLU gates'
// product, the soft-cap) on the host, where no device is needed: the very functors
// gpu/elementwise.cuh runs, compiled by the host compiler with -ffp-contract=off, so that every
// f32 operation rounds once as gpu/f32_ops.h's device intrinsics do. The library functions are
// stand-ins (gpu/f32_math.h): the C library's (close to correctly rounded), and
// BoundedLibm (tests/support/bounded_libm.h), whose expf and tanhf are off by CUDA's whole
// documented 2 ulp on every call (up, down, or either by argument), and its double exp and erfc
// by their 1 and 5 ulp. Not CUDA's code itself: what this shows is the kernels' arithmetic around
// the functions, and that the policies hold for any library within CUDA's bounds on these
// inputs. Judged by the oracle's run_and_judge (the exact reference, the policy table) under the
// recipe the gpu backend declares for the elementwise entry (oracle/backends/gpu_recipes.cc):
//   - every built-in activation, gate and soft-cap case, in every storage it lists;
//   - the inputs of the device's own kernel test (tests/kernels/activations_test.cc, which runs
//     gpu::activation, glu_gate and softcap where a device is present: 16384 N(0, 3) values, a
//     sweep of [−40, 40] in steps of 1/64, every special value; caps 30, 50, 1 and the extreme
//     caps 2^-140, 3e-30, 5e25, 2e37), judged as that test judges them;
//   - the tails where the kernels change form (SiLU and GELU-tanh below −88 of their sigmoid's
//     argument, GELU below −10, the soft-cap's |z/cap| < 2^-12), wide ranges, and the special
//     values (±0, ±inf, NaN, the subnormal and normal extremes);
//   - mutations that must be caught: the soft-cap dropped, the soft-cap with the wrong cap, a
//     store by truncation, GELU with CUDA's erfcf replaced by a 4-ulp-off erfc where the
//     argument is large.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "gpu/activation_f32.h"
#include "gpu/f32_math.h"
#include "oracle/backends/gpu_recipes.h"
#include "oracle/cases/case.h"
#include "oracle/ops/activations.h"
#include "oracle/ops/registry.h"
#include "tests/support/bounded_libm.h"
#include "tests/support/elementwise_inputs.h"
#include "tests/support/float_tensors.h"
#include "tests/support/oracle_harness.h"
#include "tests/support/truncating_store.h"

namespace lmo::gpu {
namespace {

using lmo::testing::for_each_library;
using lmo::testing::Harness;
using lmo::testing::Kernel;

// The recipe the gpu backend declares for these kernels.
std::optional<oracle::Recipe> declared() {
  return oracle::gpu_declared_recipe(oracle::KernelEntry::kElementwise);
}

TEST(GpuActivationMath, TheBackendDeclaresStrict) {
  ASSERT_TRUE(declared().has_value());
  EXPECT_EQ(declared()->text(), "strict");
}

// Calls fn with the f32 functor of a reference activation over library L.
template <class L, class Fn>
float with_activation(ref::Activation a, Fn fn) {
  switch (a) {
    case ref::Activation::kReLU:
      return fn(f32::ReluFn<L>{});
    case ref::Activation::kGELU:
      return fn(f32::GeluFn<L>{});
    case ref::Activation::kGELUTanh:
      return fn(f32::GeluTanhFn<L>{});
    case ref::Activation::kSiLU:
      break;
  }
  return fn(f32::SiluFn<L>{});
}

std::vector<float> floats(const oracle::InputSet& in, const char* name) {
  return lmo::testing::floats(in.at(name));
}

// An elementwise case evaluated as gpu/elementwise.cuh does, over library L: the f32 results
// (store_outputs rounds them to the storage, nearest-even, as store_f32 does).
template <class L>
oracle::Outputs<double> as_the_kernel(const oracle::RunContext& ctx) {
  const oracle::ElementwiseParams& p =
      dynamic_cast<const oracle::ElementwiseOp&>(ctx.op).params();
  oracle::Outputs<double> out(1);
  switch (p.kind) {
    case oracle::ElementwiseKind::kActivation:
      for (float x : floats(ctx.in, "x")) {
        out[0].values.push_back(with_activation<L>(p.act, [&](auto f) { return f(x); }));
      }
      break;
    case oracle::ElementwiseKind::kGluGate: {
      const std::vector<float> a = floats(ctx.in, "a"), b = floats(ctx.in, "b");
      for (size_t i = 0; i < a.size(); ++i) {
        out[0].values.push_back(
            f32::mul(with_activation<L>(p.act, [&](auto f) { return f(a[i]); }), b[i]));
      }
      break;
    }
    case oracle::ElementwiseKind::kSoftcap: {
      const f32::SoftcapFn<L> cap{static_cast<float>(p.cap)};  // the adapters' float cap
      for (float z : floats(ctx.in, "z")) out[0].values.push_back(cap(z));
      break;
    }
  }
  return out;
}

// Judges the kernel's evaluation over the C library and over BoundedLibm in each direction; all
// must pass.
void expect_passes(Harness& h, const std::string& what) {
  for_each_library([&](auto lib, const char* name) {
    const oracle::VerifyRow row = h.judge(name, as_the_kernel<decltype(lib)>, declared());
    EXPECT_TRUE(row.pass) << what << " " << ref::format_name(h.storage()) << " over " << name
                          << ": " << row.detail;
    EXPECT_EQ(row.recipe, "strict");
  });
}

TEST(GpuActivationMath, BuiltinCasesPassOnTheHost) {
  int judged = 0;
  for (const oracle::Case& c :
       oracle::load_case_file(oracle::builtin_cases_dir() + "/activations.json")) {
    if (oracle::kernel_entry(c.op) != oracle::KernelEntry::kElementwise) continue;
    for (ref::Format f : c.formats) {
      if (f != ref::Format::f32 && f != ref::Format::bf16 && f != ref::Format::f16) continue;
      Harness h(c.source, f);
      expect_passes(h, c.id);
      ++judged;
    }
  }
  EXPECT_EQ(judged, 28);  // the ten cases' f32, bf16 and f16 formats (relu's fp8 ones: no GPU kernel)
}

nlohmann::json uniform_case(const std::string& op, const char* input, double lo, double hi,
                            int64_t n, double cap = 0) {
  nlohmann::json c = {{"id", "gpu-math/" + op},
                      {"op", op},
                      {"seed", 9100},
                      {"formats", {"f32", "bf16"}},
                      {"params", {{"n", n}}},
                      {"inputs", {{input, {{"dist", "uniform"}, {"lo", lo}, {"hi", hi}}}}}};
  if (cap > 0) c["params"]["cap"] = cap;
  return c;
}

TEST(GpuActivationMath, TailsAndWideRangesPassOnTheHost) {
  const nlohmann::json cases[] = {
      // SiLU across its deep branch (x < −88) into f32's subnormal and zero results.
      uniform_case("silu", "x", -110, -80, 4096),
      uniform_case("silu", "x", -90, 90, 4096),
      // GELU across its double branch (x < −10) to where it underflows (x ≈ −14.4).
      uniform_case("gelu", "x", -16, -8, 4096),
      uniform_case("gelu", "x", -6, 6, 4096),
      // GELU-tanh: 2u < −88 below x ≈ −10.3.
      uniform_case("gelu_tanh", "x", -14, -8, 4096),
      uniform_case("swiglu_gate", "a", -100, 20, 4096),
      uniform_case("geglu_gate", "a", -15, 5, 4096),
      // Soft-cap: saturated, and small against the cap (the z itself of |z/cap| < 2^-12).
      uniform_case("softcap", "z", -400, 400, 4096, 30),
      uniform_case("softcap", "z", -0.01, 0.01, 4096, 50),
      uniform_case("softcap", "z", -1e-33, 1e-33, 4096, 1e6),  // z/cap subnormal
  };
  for (const nlohmann::json& c : cases) {
    for (const char* f : {"f32", "bf16"}) {
      Harness h(c, *ref::parse_format(f));
      expect_passes(h, c.dump());
    }
  }
}

TEST(GpuActivationMath, SpecialValuesPassOnTheHost) {
  nlohmann::json specials = nlohmann::json::array();
  const char* names[] = {"pos_zero",      "neg_zero",          "pos_inf",    "neg_inf",
                         "nan",           "min_subnormal",     "neg_min_subnormal",
                         "min_normal",    "max_finite",        "neg_max_finite"};
  for (int i = 0; i < 10; ++i) specials.push_back({{"index", i}, {"value", names[i]}});
  for (const char* op : {"relu", "gelu", "gelu_tanh", "silu", "softcap", "swiglu_gate",
                         "geglu_gate", "geglu_tanh_gate", "reglu_gate"}) {
    const bool gate = std::string(op).find("_gate") != std::string::npos;
    const char* input = gate ? "a" : std::string(op) == "softcap" ? "z" : "x";
    nlohmann::json c = {{"id", std::string("gpu-math/specials-") + op},
                        {"op", op},
                        {"seed", 9101},
                        {"formats", {"f32", "bf16", "f16"}},
                        {"params", {{"n", 64}}},
                        {"inputs", {{input, {{"specials", specials}}}}}};
    if (std::string(op) == "softcap") c["params"]["cap"] = 30;
    for (const char* f : {"f32", "bf16", "f16"}) {
      Harness h(c, *ref::parse_format(f));
      expect_passes(h, c["id"].get<std::string>());
    }
  }
}

// The f32 values written, rounded to the storage, into a guarded buffer as a kernel writes them.
oracle::GuardedBuffer stored(const std::vector<float>& v, ref::Format f) {
  ref::Tensor t(ref::format_dtype(f), {static_cast<int64_t>(v.size())});
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, v[static_cast<size_t>(i)]);
  oracle::GuardedBuffer b(t.dtype(), t.shape());
  b.arm();
  std::memcpy(b.data(), t.bytes().data(), b.nbytes());
  return b;
}

// The soft-cap's host math on z over every library, stored in f, judged against the exact
// cap·tanh(z/cap).
void expect_softcap_passes(const ref::Tensor& z, float cap, ref::Format f) {
  const std::vector<ref::mp> exact = testdata::exact_softcap(z, cap);
  const std::vector<float> zv = lmo::testing::floats(z);
  for_each_library([&](auto lib, const char* lname) {
    const f32::SoftcapFn<decltype(lib)> fn{cap};
    std::vector<float> y;
    for (float v : zv) y.push_back(fn(v));
    testdata::expect_judged("softcap", "", exact, stored(y, f), {},
                            std::string(ref::format_name(f)) + " cap " + std::to_string(cap) +
                                " over " + lname);
  });
}

TEST(GpuActivationMath, TheDeviceTestsInputsPassOnTheHost) {
  using kernels::Storage;
  const ref::Activation acts[] = {ref::Activation::kReLU, ref::Activation::kGELU,
                                  ref::Activation::kGELUTanh, ref::Activation::kSiLU};
  const char* names[] = {"relu", "gelu", "gelu_tanh", "silu"};
  const char* gates[] = {"reglu_gate", "geglu_gate", "geglu_tanh_gate", "swiglu_gate"};
  for (Storage s : {Storage::f32, Storage::bf16, Storage::f16}) {
    const ref::Format f = testdata::format_of(s);
    const ref::Tensor x = testdata::elementwise_inputs(31, "x", s);
    const ref::Tensor g = testdata::elementwise_inputs(32, "gate", s);
    const ref::Tensor u = testdata::glu_up(32, s, g.numel());
    const std::vector<float> xv = lmo::testing::floats(x), gv = lmo::testing::floats(g),
                             uv = lmo::testing::floats(u);
    for (size_t k = 0; k < 4; ++k) {
      const testdata::ExactElementwise ea = testdata::exact_activation(acts[k], x);
      const testdata::ExactElementwise eg = testdata::exact_glu_gate(acts[k], g, u);
      for_each_library([&](auto lib, const char* lname) {
        using L = decltype(lib);
        std::vector<float> ya, yg;
        for (float v : xv) ya.push_back(with_activation<L>(acts[k], [&](auto fn) { return fn(v); }));
        for (size_t i = 0; i < gv.size(); ++i) {
          yg.push_back(
              f32::mul(with_activation<L>(acts[k], [&](auto fn) { return fn(gv[i]); }), uv[i]));
        }
        const std::string where = std::string(ref::format_name(f)) + " over " + lname;
        testdata::expect_judged(names[k], "", ea.exact, stored(ya, f), {}, where, ea.kappa);
        testdata::expect_judged(gates[k], "", eg.exact, stored(yg, f), {}, where, eg.kappa);
      });
    }
    for (float cap : {30.0f, 50.0f, 1.0f}) {
      expect_softcap_passes(testdata::elementwise_inputs(33, "z", s), cap, f);
    }
  }
  for (float cap : {0x1p-140f, 3e-30f, 5e25f, 2e37f}) {
    expect_softcap_passes(testdata::fast_normal(34, "z", Storage::f32, {4099}, 0.0, 1.5 * cap), cap,
                          ref::Format::f32);
  }
}

// Mutations: each must fail the declared recipe (and so strict) where the correct kernel passes.
void expect_caught(Harness& h, const Kernel& mutant, const std::string& what) {
  const oracle::VerifyRow good = h.judge("gpu-math", as_the_kernel<f32::CudaF32>, declared());
  EXPECT_TRUE(good.pass) << what << ": " << good.detail;
  const oracle::VerifyRow bad = h.judge("mutant", mutant, declared());
  EXPECT_FALSE(bad.pass) << what << ": the mutant passed, max ulp " << bad.max_ulps;
}

TEST(GpuActivationMath, MutationsAreCaught) {
  // The soft-cap dropped: z itself.
  {
    Harness h(uniform_case("softcap", "z", -60, 60, 2048, 30), ref::Format::f32);
    expect_caught(
        h,
        [](const oracle::RunContext& ctx) {
          oracle::Outputs<double> o(1);
          for (float z : floats(ctx.in, "z")) o[0].values.push_back(z);
          return o;
        },
        "soft-cap dropped");
    // The cap rounded to bf16 (30 is exact there: take 50.3, which is not).
  }
  {
    Harness h(uniform_case("softcap", "z", -60, 60, 2048, 50.3), ref::Format::f32);
    expect_caught(
        h,
        [](const oracle::RunContext& ctx) {
          const f32::SoftcapFn<> cap{50.25f};  // 50.3 in bf16
          oracle::Outputs<double> o(1);
          for (float z : floats(ctx.in, "z")) o[0].values.push_back(cap(z));
          return o;
        },
        "soft-cap with a rounded cap");
  }
  // A store by truncation (f32 → bf16 by dropping the low bits) instead of rounding.
  for (const char* op : {"silu", "gelu"}) {
    Harness h(uniform_case(op, "x", -6, 6, 2048), ref::Format::bf16);
    expect_caught(
        h,
        [](const oracle::RunContext& ctx) {
          oracle::Outputs<double> o = as_the_kernel<f32::CudaF32>(ctx);
          for (double& v : o[0].values) v = lmo::testing::truncated_to_bf16(v);
          return o;
        },
        std::string(op) + " stored by truncation");
  }
  // GELU with its erfc off by 4 f32 ulps (CUDA's erfcf bound) in one direction: the policy's
  // 2-ulp erfc budget does not hold it where erfc is small (x < 0), which is why the kernel
  // takes erfc in double.
  {
    Harness h(uniform_case("gelu", "x", -9, 0, 4096), ref::Format::f32);
    struct ErfcOff4 : f32::CudaF32 {
      static double erfc(double x) {
        float e = static_cast<float>(std::erfc(static_cast<long double>(x)));
        for (int i = 0; i < 4 && e != 0; ++i) e = std::nextafter(e, INFINITY);
        return e;
      }
    };
    expect_caught(h, as_the_kernel<ErfcOff4>, "gelu with a 4-ulp erfc");
  }
}

}  // namespace
}  // namespace lmo::gpu
