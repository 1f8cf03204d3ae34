// The oracle's gpu backend (oracle/backends/gpu.cc): registered exactly when a device is found,
// and, with one, judged by the oracle's own run_and_judge (the exact reference and the policy
// table, as `lmoracle verify` does) on RoPE cases (both angle sources and layouts, partial
// rotary, the scaling rules, positions up to 2^40) and on one case of every other family it
// adapts. The RoPE kernels' own checks (every layout, scaling and storage, accuracy bounds,
// repeatability, validation): rope_test.cc, over both kernel libraries.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpu/api.h"
#include "oracle/backends/backend.h"
#include "tests/support/gpu_cases.h"
#include "tests/support/oracle_harness.h"

namespace lmo::oracle {
namespace {

using lmo::testing::Harness;
using nlohmann::json;
using testdata::gpu_backend;

TEST(GpuBackend, RegisteredExactlyWhenADeviceIsFound) {
  const gpu::DeviceInfo dev = gpu::query_device();
  const std::unique_ptr<Backend> b = gpu_backend();
  EXPECT_EQ(b != nullptr, dev.present) << "device: " << (dev.present ? dev.name : dev.reason);
}

// Every storage format the case lists, judged as verify judges.
void expect_passes(const json& case_json) {
  std::unique_ptr<Backend> b = gpu_backend();
  ASSERT_NE(b, nullptr);
  for (const json& f : case_json.at("formats")) {
    const ref::Format storage = *ref::parse_format(f.get<std::string>());
    Harness h(case_json, storage);
    ASSERT_EQ(b->unsupported(h.c(), h.op(), storage), "") << case_json.dump();
    const VerifyRow row = run_and_judge(h.c(), h.op(), storage, *b, h.ctx());
    EXPECT_TRUE(row.pass) << case_json.at("id") << " " << f << ": " << row.detail;
  }
}

json rope_case(const char* op, json params, uint64_t seed) {
  return {{"id", std::string("gpu/") + op},
          {"op", op},
          {"seed", seed},
          {"formats", {"f32", "bf16", "f16"}},
          {"params", std::move(params)}};
}

// RoPE from positions: half-split at Llama 3's base; interleaved with partial rotary (32 of 64
// dimensions pass through); YaRN with its attention factor on cos and sin; Llama 3.1 at
// positions up to 2^40.
std::vector<json> rope_position_cases() {
  return {rope_case("rope",
                    {{"tokens", 16},
                     {"heads", 2},
                     {"head_dim", 128},
                     {"layout", "half_split"},
                     {"base", 500000},
                     {"max_position", 8192}},
                    61),
          rope_case("rope",
                    {{"tokens", 9},
                     {"heads", 3},
                     {"head_dim", 64},
                     {"rotary_dims", 32},
                     {"layout", "interleaved"},
                     {"max_position", 4096}},
                    62),
          rope_case("rope",
                    {{"tokens", 8},
                     {"heads", 1},
                     {"head_dim", 64},
                     {"layout", "half_split"},
                     {"max_position", 131072},
                     {"scaling", "yarn"},
                     {"factor", 40},
                     {"original_context", 4096},
                     {"attention_factor", true}},
                    63),
          rope_case("rope",
                    {{"tokens", 8},
                     {"heads", 1},
                     {"head_dim", 128},
                     {"layout", "half_split"},
                     {"base", 500000},
                     {"min_position", int64_t{1} << 39},
                     {"max_position", int64_t{1} << 40},
                     {"scaling", "llama31"},
                     {"factor", 8}},
                    64)};
}

// RoPE from a cos/sin table stored in f32 or in the storage format, both layouts.
std::vector<json> rope_table_cases() {
  std::vector<json> v;
  for (const char* table : {"f32", "storage"}) {
    for (const char* layout : {"half_split", "interleaved"}) {
      v.push_back(rope_case("rope_table",
                            {{"tokens", 12},
                             {"heads", 2},
                             {"head_dim", 64},
                             {"rotary_dims", 48},
                             {"layout", layout},
                             {"max_position", 32768},
                             {"table", table}},
                            65));
    }
  }
  return v;
}

// One case per other family the backend adapts.
std::vector<json> family_cases() {
  const json f3 = {"f32", "bf16", "f16"};
  return {json{{"id", "gpu/rms"},
               {"op", "rmsnorm_gemma"},
               {"seed", 71},
               {"formats", f3},
               {"params", {{"rows", 3}, {"d", 1000}, {"eps", 1e-6}}}},
          json{{"id", "gpu/ln"},
               {"op", "layernorm"},
               {"seed", 72},
               {"formats", f3},
               {"params", {{"rows", 3}, {"d", 777}, {"eps", 1e-5}}}},
          json{{"id", "gpu/ce"},
               {"op", "cross_entropy"},
               {"seed", 73},
               {"formats", f3},
               {"params", {{"rows", 2}, {"vocab", 5000}, {"z_loss", 1e-4}, {"softcap", 30}}}},
          json{{"id", "gpu/lse"},
               {"op", "logsumexp"},
               {"seed", 74},
               {"formats", f3},
               {"params", {{"rows", 2}, {"n", 300}}}},
          json{{"id", "gpu/gelu"},
               {"op", "gelu"},
               {"seed", 75},
               {"formats", f3},
               {"params", {{"n", 4096}}}},
          json{{"id", "gpu/swiglu"},
               {"op", "swiglu_gate"},
               {"seed", 76},
               {"formats", f3},
               {"params", {{"n", 4096}}}}};
}

// The cases above parse and generate their inputs (no device needed): a GPU run of this file
// fails only on the kernels, never on a malformed case.
TEST(GpuBackend, CasesAreWellFormed) {
  for (const auto& cases : {rope_position_cases(), rope_table_cases(), family_cases()}) {
    for (const json& c : cases) {
      for (const json& f : c.at("formats")) {
        EXPECT_NO_THROW(Harness(c, *ref::parse_format(f.get<std::string>()))) << c.dump();
      }
    }
  }
}

TEST(GpuBackend, RopeFromPositions) {
  LMO_REQUIRE_GPU();
  for (const json& c : rope_position_cases()) expect_passes(c);
}

TEST(GpuBackend, RopeFromATable) {
  LMO_REQUIRE_GPU();
  for (const json& c : rope_table_cases()) expect_passes(c);
}

TEST(GpuBackend, EveryAdaptedFamily) {
  LMO_REQUIRE_GPU();
  for (const json& c : family_cases()) expect_passes(c);
}

}  // namespace
}  // namespace lmo::oracle
