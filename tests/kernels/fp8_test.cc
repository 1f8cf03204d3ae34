// The fp8 kernels of one kernel library (tests/support/kernel_libraries.h: fast/ on every Highway
// target, or gpu/): fp8_quantize against the known answers computed with exact rationals
// (tests/data/make_fp8.py: every E4M3 value, midpoint and f32 neighbour of a midpoint among them),
// bit for bit; quantization, dequantization and the block-scaled linear layer on every storage,
// with rows wider than a vector with a tail, partial groups and blocks, UE8M0 and E5M2, judged by
// the op's policies (check_outputs: the exact reference and the policy table); the library's
// repeatability check (thread counts, or a second run on the device); argument validation, which
// holds on any machine.
#include "oracle/ops/fp8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "oracle/backends/fp8_adapters.h"
#include "oracle/backends/kernel_call.h"
#include "oracle/check/check.h"
#include "tests/support/fast_cases.h"
#include "tests/support/fp8_cases.h"
#include "tests/support/kernel_libraries.h"
#include "tests/support/test_data.h"

namespace lmo::testdata {
namespace {

using fast::Storage;
using oracle::op_adapters::fp8_format;
using oracle::op_adapters::fp8_tiling;
using ref::Format;

template <class Lib>
class KernelFp8 : public ::testing::Test {};
TYPED_TEST_SUITE(KernelFp8, TestedKernels);

template <class T>
const T& as_op(const oracle::Op& op) {
  return oracle::op_adapters::op_as<T>(op);
}

const uint8_t* u8(const oracle::InputSet& in, const char* name) {
  return static_cast<const uint8_t*>(static_cast<const void*>(in.at(name).bytes().data()));
}
const float* f32s(const oracle::InputSet& in, const char* name) {
  return static_cast<const float*>(static_cast<const void*>(in.at(name).bytes().data()));
}

template <class Lib>
void quantize(Storage s, const oracle::Op& op, const oracle::InputSet& in,
              std::vector<oracle::GuardedBuffer>& bufs) {
  const oracle::Fp8Params& p = as_op<oracle::Fp8QuantizeOp>(op).params();
  for (oracle::GuardedBuffer& b : bufs) b.arm();
  Lib::fp8_quantize(s, in.at("x").bytes().data(), static_cast<uint8_t*>(bufs[0].data()),
                    static_cast<float*>(bufs[1].data()), fp8_tiling(p.tiling()),
                    fp8_format(p.scaling.fp8), p.scaling.form == ref::ScaleForm::kPow2,
                    p.scaling.amax_floor);
}

// Every known answer: q and the scales exactly the rational arithmetic's.
TYPED_TEST(KernelFp8, QuantizeGivesTheKnownAnswers) {
  LMO_REQUIRE_KERNELS(TypeParam);
  const nlohmann::json data = load("fp8.json");
  int checked = 0;
  for (const nlohmann::json& k : data["cases"]) {
    const Format f = *ref::parse_format(k["storage"].get<std::string>());
    const std::vector<double> x = exact_doubles(k["x"]);
    const oracle::KernelCall kc =
        oracle::make_kernel_call("fp8_test", "fp8_quantize", k["params"], f, {{"x", x, {}}});
    const std::string where = k["params"].dump();
    std::vector<oracle::GuardedBuffer> bufs = oracle::armed_outputs(*kc.op, f);
    const Storage s = *oracle::op_adapters::storage_of<Storage>(f);
    TypeParam::for_each_variant([&](const std::string& variant) {
      quantize<TypeParam>(s, *kc.op, kc.in, bufs);
      EXPECT_EQ(fp8_values_of(bufs[0]), exact_doubles(k["q"])) << variant << " " << where;
      EXPECT_EQ(fp8_values_of(bufs[1]), exact_doubles(k["scales"])) << variant << " " << where;
    });
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TYPED_TEST(KernelFp8, QuantizeEveryStorageAndTiling) {
  LMO_REQUIRE_KERNELS(TypeParam);
  const std::vector<nlohmann::json> shapes = {
      {{"rows", 3}, {"cols", 1029}, {"scaling", "group"}, {"group", 128}},
      {{"rows", 130}, {"cols", 200}, {"scaling", "block"}, {"group", 128}, {"scale", "ue8m0"}},
      {{"rows", 4}, {"cols", 77}, {"scaling", "token"}, {"fp8", "e5m2"}},
      {{"rows", 9}, {"cols", 33}, {"scaling", "tensor"}}};
  for (Storage st : fast::kAllStorages) {
    const Format f = format_of(st);
    for (const nlohmann::json& params : shapes) {
      const oracle::Case c = fp8_case("fp8_quantize", f, params, 31);
      const std::unique_ptr<oracle::Op> op = oracle::make_op(c);
      const oracle::InputSet in = oracle::reference_inputs(c, f);
      std::vector<oracle::GuardedBuffer> bufs = oracle::armed_outputs(*op, f);
      TypeParam::for_each_variant([&](const std::string& variant) {
        quantize<TypeParam>(st, *op, in, bufs);
        oracle::check_written(bufs, *op, variant, c.op);
        const std::map<std::string, ref::Tensor> outs = {{"q", bufs[0].tensor()},
                                                         {"scales", bufs[1].tensor()}};
        const oracle::CheckReport r = oracle::check_outputs(c, outs);
        EXPECT_TRUE(r.pass) << variant << " " << params.dump() << "\n" << to_text(r);
      });
      TypeParam::expect_repeatable(
          [&] {
            quantize<TypeParam>(st, *op, in, bufs);
            return bytes_of({&bufs[0], &bufs[1]});
          },
          "fp8_quantize " + params.dump());
    }
  }
}

TYPED_TEST(KernelFp8, DequantizeAndLinearEveryStorage) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (Storage st : fast::kAllStorages) {
    const Format f = format_of(st);
    const oracle::Case dq = fp8_case(
        "fp8_dequantize", f, {{"rows", 150}, {"cols", 140}, {"scaling", "block"}, {"group", 64}});
    const oracle::Case lin =
        fp8_case("fp8_linear", f, {{"m", 40}, {"n", 70}, {"k", 300}, {"block", 128}});
    for (const oracle::Case* c : {&dq, &lin}) {
      const std::unique_ptr<oracle::Op> op = oracle::make_op(*c);
      const oracle::InputSet in = oracle::reference_inputs(*c, f);
      std::vector<oracle::GuardedBuffer> bufs = oracle::armed_outputs(*op, f);
      const auto run = [&] {
        bufs[0].arm();
        if (c == &dq) {
          const oracle::Fp8Params& p = as_op<oracle::Fp8DequantizeOp>(*op).params();
          TypeParam::fp8_dequantize(st, u8(in, "q"), f32s(in, "scales"), bufs[0].data(),
                                    fp8_tiling(p.tiling()), fp8_format(p.scaling.fp8));
        } else {
          const oracle::Fp8LinearParams& p = as_op<oracle::Fp8LinearOp>(*op).params();
          TypeParam::fp8_linear(st, u8(in, "a"), f32s(in, "a_scales"), u8(in, "w"),
                                f32s(in, "w_scales"), bufs[0].data(), p.m, p.n, p.k, p.block,
                                fp8_format(p.fp8));
        }
      };
      TypeParam::for_each_variant([&](const std::string& variant) {
        run();
        oracle::check_written(bufs, *op, variant, c->op);
        const std::string name = op->outputs()[0].name;
        const oracle::CheckReport r = oracle::check_outputs(*c, {{name, bufs[0].tensor()}});
        EXPECT_TRUE(r.pass) << variant << " " << c->op << "\n" << to_text(r);
      });
      TypeParam::expect_repeatable(
          [&] {
            run();
            return bytes_of(bufs[0]);
          },
          c->op);
    }
  }
}

// Validation happens before any kernel runs (before any CUDA call), so it holds on every machine.
TYPED_TEST(KernelFp8, Validation) {
  float x[4] = {1, 2, 3, 4}, sc[1] = {1};
  uint8_t q[4] = {};
  const Storage f = Storage::f32;
  const kernels::Fp8Tiling t{2, 2, 1, 2}, bad{2, 2, 0, 2};
  const auto e4m3 = kernels::Fp8Format::e4m3;
  EXPECT_THROW(TypeParam::fp8_quantize(f, x, q, sc, bad, e4m3, false, 0), std::invalid_argument);
  EXPECT_THROW(
      TypeParam::fp8_quantize(f, x, q, sc, t, static_cast<kernels::Fp8Format>(9), false, 0),
      std::invalid_argument);
  EXPECT_THROW(TypeParam::fp8_quantize(f, x, q, sc, t, e4m3, false, -1), std::invalid_argument);
  EXPECT_THROW(TypeParam::fp8_quantize(f, x, q, sc, t, e4m3, false, INFINITY),
               std::invalid_argument);
  EXPECT_THROW(TypeParam::fp8_quantize(f, nullptr, q, sc, t, e4m3, false, 0),
               std::invalid_argument);
  EXPECT_THROW(TypeParam::fp8_dequantize(static_cast<Storage>(7), q, sc, x, t, e4m3),
               std::invalid_argument);
  EXPECT_THROW(TypeParam::fp8_dequantize(f, q, nullptr, x, t, e4m3), std::invalid_argument);
  EXPECT_THROW(TypeParam::fp8_linear(f, q, sc, q, sc, x, 1, 1, 0, 1, e4m3), std::invalid_argument);
  EXPECT_THROW(TypeParam::fp8_linear(f, q, sc, q, sc, x, 1, 1, 2, 0, e4m3), std::invalid_argument);
  EXPECT_THROW(TypeParam::fp8_linear(f, q, sc, nullptr, sc, x, 1, 1, 2, 2, e4m3),
               std::invalid_argument);
  // Empty problems touch nothing.
  EXPECT_NO_THROW(
      TypeParam::fp8_quantize(f, nullptr, nullptr, nullptr, {0, 4, 1, 4}, e4m3, false, 0));
  EXPECT_NO_THROW(
      TypeParam::fp8_linear(f, nullptr, nullptr, nullptr, nullptr, nullptr, 0, 3, 2, 2, e4m3));
}

}  // namespace
}  // namespace lmo::testdata
