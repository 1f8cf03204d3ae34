// The gpu backend's attention adapters (oracle/backends/gpu_attention.cc): with a device, cases of
// attention (every mask, GQA, MQA, soft-cap), attention_decode and mla_decode judged by the
// oracle's own run_and_judge, as `lmoracle verify --backend gpu` does; everywhere, the reasons
// the backend gives for widths beyond the kernels' limits.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpu/api.h"
#include "oracle/backends/backend.h"
#include "oracle/backends/gpu_attention.h"
#include "oracle/ops/registry.h"
#include "tests/support/gpu_cases.h"
#include "tests/support/oracle_harness.h"

namespace lmo::oracle {
namespace {

using lmo::testing::Harness;
using nlohmann::json;

json make_case(const std::string& id, const char* op, json params, uint64_t seed) {
  return {{"id", "gpu/" + id},
          {"op", op},
          {"seed", seed},
          {"formats", {"f32", "bf16", "f16"}},
          {"params", std::move(params)}};
}

std::vector<json> attention_cases() {
  return {
      make_case("gqa-causal", "attention",
                {{"h", 16}, {"g", 2}, {"d", 128}, {"tokens", 16}, {"mask", "causal"}}, 81),
      make_case("documents", "attention",
                {{"h", 8},
                 {"g", 2},
                 {"d", 64},
                 {"tokens", 24},
                 {"mask", "document"},
                 {"doc_starts", {7, 15}}},
                82),
      make_case("mqa-none", "attention",
                {{"h", 4}, {"g", 1}, {"d", 256}, {"tokens", 16}, {"mask", "none"}}, 83),
      make_case("window", "attention",
                {{"h", 8}, {"g", 2}, {"d", 64}, {"tokens", 60}, {"mask", "window"}, {"window", 40}},
                84),
      make_case("softcap", "attention",
                {{"h", 4},
                 {"g", 2},
                 {"d", 256},
                 {"tokens", 16},
                 {"mask", "causal"},
                 {"softcap", 50.0},
                 {"qk_std", 2.5}},
                85),
      make_case("decode", "attention_decode", {{"h", 16}, {"g", 2}, {"d", 128}, {"cache_len", 300}},
                86),
      make_case("decode-window", "attention_decode",
                {{"h", 4}, {"g", 1}, {"d", 64}, {"cache_len", 200}, {"window", 96}}, 87),
      make_case("mla", "mla_decode",
                {{"h", 1}, {"d_h", 64}, {"d_rope", 64}, {"d_c", 512}, {"cache_len", 64}}, 88),
      make_case("mla-half-split", "mla_decode",
                {{"h", 3},
                 {"d_h", 16},
                 {"d_rope", 8},
                 {"d_c", 40},
                 {"cache_len", 9},
                 {"rope_layout", "half_split"},
                 {"rope_base", 500}},
                89),
  };
}

TEST(GpuBackendAttention, CasesAreWellFormed) {
  // The inputs of one format (the others differ only in rounding).
  for (const json& c : attention_cases()) {
    const Harness h(c, ref::Format::bf16);
    EXPECT_EQ(gpu_attention_unsupported(kernel_entry(c.at("op").get<std::string>()), h.op()), "")
        << c.dump();
  }
}

TEST(GpuBackendAttention, WidthsBeyondTheKernelsAreUnsupported) {
  const Harness wide(
      make_case("wide", "attention",
                {{"h", 1}, {"g", 1}, {"d", 1025}, {"tokens", 2}, {"mask", "none"}}, 90),
      ref::Format::f32);
  EXPECT_EQ(gpu_attention_unsupported(KernelEntry::kAttention, wide.op()),
            "the GPU attention kernel takes d <= 1024");
  const Harness latent(
      make_case("wide-mla", "mla_decode",
                {{"h", 1}, {"d_h", 4}, {"d_rope", 1026}, {"d_c", 1024}, {"cache_len", 2}}, 91),
      ref::Format::f32);
  EXPECT_EQ(gpu_attention_unsupported(KernelEntry::kMlaDecode, latent.op()),
            "the GPU MLA kernel takes d_c <= 1024 and d_c + d_rope <= 2048");
  EXPECT_EQ(gpu_attention_unsupported(KernelEntry::kSoftmax, wide.op()),
            "");  // other families: no say
}

TEST(GpuBackendAttention, CasesPassOnTheDevice) {
  LMO_REQUIRE_GPU();
  std::unique_ptr<Backend> gpu = testdata::gpu_backend();
  ASSERT_NE(gpu, nullptr);
  for (const json& c : attention_cases()) {
    for (const json& f : c.at("formats")) {
      const ref::Format storage = *ref::parse_format(f.get<std::string>());
      Harness h(c, storage);
      ASSERT_EQ(gpu->unsupported(h.c(), h.op(), storage), "") << c.dump();
      const VerifyRow row = run_and_judge(h.c(), h.op(), storage, *gpu, h.ctx());
      EXPECT_TRUE(row.pass) << c.at("id") << " " << f << ": " << row.detail;
    }
  }
}

}  // namespace
}  // namespace lmo::oracle
