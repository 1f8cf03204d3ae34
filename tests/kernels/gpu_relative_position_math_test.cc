// The GPU relative position kernels' per-element math (gpu/relative_position.h) on the host,
// where no device is needed: the very functions gpu/shaw_logits.cuh and gpu/position_tables.cuh
// run, compiled by the host compiler (with -ffp-contract=off). Against independent truth:
//   - T5's bucket with kernels::T5Buckets' thresholds, as gpu/api_positional.cc passes them, equal
//     to the reference's t5_relative_position_bucket (exact integer decisions in cpp_int) for
//     every relative position in ±2·max_distance over causal and bidirectional rules, the tie
//     where float32 code lands one bucket low (36 buckets, max_distance 50, n = 30) included;
//     and to kernels::T5Buckets at the extremes (±2^53, INT64_MIN + 1);
//   - Shaw's table row against the clip of its definition;
//   - the built-in shaw_logits case evaluated as the kernel evaluates it (each logit in double,
//     rounded to f32 and then to the storage), judged by the oracle's run_and_judge (the exact
//     reference and the policy table) in every storage it lists.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "fast/t5_bias.h"
#include "gpu/relative_position.h"
#include "oracle/backends/backend.h"
#include "oracle/cases/case.h"
#include "oracle/ops/positional.h"
#include "reference/positional.h"
#include "tests/support/oracle_harness.h"

namespace lmo::gpu {
namespace {

// The rule gpu/api_positional.cc builds for the kernel.
struct Rule {
  Rule(int64_t num_buckets, int64_t max_distance, bool bidirectional)
      : thresholds(kernels::T5Buckets(num_buckets, max_distance, bidirectional).thresholds()) {
    r.bidirectional = bidirectional;
    r.buckets = bidirectional ? num_buckets / 2 : num_buckets;
    r.max_exact = r.buckets / 2;
    r.max_distance = max_distance;
    r.thresholds = thresholds.data();
    r.count = static_cast<int64_t>(thresholds.size());
  }
  std::vector<int64_t> thresholds;
  relpos::T5Rule r;
};

struct T5Config {
  int64_t num_buckets, max_distance;
  bool bidirectional;
};
constexpr T5Config kConfigs[] = {{32, 128, true}, {32, 128, false},  {36, 50, false},
                                 {4, 3, true},    {2, 2, false},     {64, 1000, true},
                                 {8, 5, false},   {128, 4096, false}};

TEST(GpuRelativePosition, T5BucketMatchesTheReference) {
  for (const T5Config& c : kConfigs) {
    const Rule rule(c.num_buckets, c.max_distance, c.bidirectional);
    for (int64_t rel = -2 * c.max_distance - 3; rel <= 2 * c.max_distance + 3; ++rel) {
      ASSERT_EQ(
          relpos::t5_bucket(rule.r, rel),
          ref::t5_relative_position_bucket(rel, c.bidirectional, c.num_buckets, c.max_distance))
          << "num_buckets " << c.num_buckets << " max_distance " << c.max_distance
          << (c.bidirectional ? " bidirectional" : " causal") << " rel " << rel;
    }
  }
  // The boundary float32 code misses: causal, 36 buckets, max_distance 50, n = 30 is bucket 27.
  const Rule tie(36, 50, false);
  EXPECT_EQ(relpos::t5_bucket(tie.r, -30), 27);
  EXPECT_EQ(relpos::t5_bucket(tie.r, -29), 26);
}

TEST(GpuRelativePosition, T5BucketAtTheExtremes) {
  const int64_t big = int64_t{1} << 53;
  for (const T5Config& c : {T5Config{32, 128, true}, T5Config{4096, big, true},
                            T5Config{4096, big, false}, T5Config{40, big / 3, false}}) {
    const Rule rule(c.num_buckets, c.max_distance, c.bidirectional);
    const kernels::T5Buckets fast_rule(c.num_buckets, c.max_distance, c.bidirectional);
    for (const int64_t rel :
         {int64_t{0}, int64_t{1}, int64_t{-1}, big, -big, big - 1, -(big - 1), big / 5, -big / 7,
          std::numeric_limits<int64_t>::min() + 1, std::numeric_limits<int64_t>::max()}) {
      EXPECT_EQ(relpos::t5_bucket(rule.r, rel), fast_rule(rel))
          << "num_buckets " << c.num_buckets << " max_distance " << c.max_distance << " rel "
          << rel;
    }
  }
}

TEST(GpuRelativePosition, ShawRowIsTheClippedDistance) {
  for (const int64_t k : {int64_t{0}, int64_t{1}, int64_t{16}}) {
    for (int64_t i = 0; i < 40; ++i) {
      for (int64_t j = 0; j < 40; ++j) {
        EXPECT_EQ(relpos::shaw_row(i, j, k), std::clamp(j - i, -k, k) + k)
            << "K " << k << " i " << i << " j " << j;
      }
    }
  }
}

// The built-in shaw_logits case evaluated as gpu/shaw_logits.cuh does: every output the f32
// value the kernel would store (store_outputs then rounds it to the storage, nearest-even).
oracle::Outputs<double> shaw_as_the_kernel(const oracle::RunContext& ctx) {
  const oracle::PositionalParams& p = dynamic_cast<const oracle::PositionalOp&>(ctx.op).params();
  const auto floats = [&](const char* name) {
    const ref::Tensor& t = ctx.in.at(name);
    std::vector<float> v(static_cast<size_t>(t.numel()));
    for (int64_t i = 0; i < t.numel(); ++i)
      v[static_cast<size_t>(i)] = static_cast<float>(t.get(i));
    return v;
  };
  const std::vector<float> q = floats("q"), k = floats("k"), rel = floats("rel_k");
  oracle::Outputs<double> out(1);
  for (int64_t i = 0; i < p.n_q; ++i) {
    for (int64_t j = 0; j < p.n_k; ++j) {
      const float* a = rel.data() + relpos::shaw_row(i, j, p.max_relative) * p.d;
      const double e = relpos::shaw_logit(q.data() + i * p.d, k.data() + j * p.d, a, p.d,
                                          [](float v) { return static_cast<double>(v); });
      out[0].values.push_back(static_cast<float>(e));
    }
  }
  return out;
}

TEST(GpuRelativePosition, BuiltinShawCasesPassOnTheHost) {
  int judged = 0;
  for (const oracle::Case& c :
       oracle::load_case_file(oracle::builtin_cases_dir() + "/positional.json")) {
    if (c.op != "shaw_logits") continue;
    for (ref::Format f : c.formats) {
      if (f != ref::Format::f32 && f != ref::Format::bf16 && f != ref::Format::f16) continue;
      lmo::testing::Harness h(c.source, f);
      const oracle::VerifyRow row = h.judge("gpu-math", shaw_as_the_kernel);
      EXPECT_TRUE(row.pass) << c.id << " " << ref::format_name(f) << ": " << row.detail;
      ++judged;
    }
  }
  EXPECT_GE(judged, 1);
}

}  // namespace
}  // namespace lmo::gpu
