// The certified path (oracle/core/certified.h) against the MPFR arbiter on inputs built to sit on
// or near rounding boundaries: the bytes of every format must agree, the certified path must
// fall back where it cannot decide, and a radius narrowed on purpose must be caught.
#include "oracle/core/certified.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "oracle/cases/case.h"
#include "oracle/cases/case_inputs.h"
#include "oracle/core/row_slice.h"
#include "oracle/golden/golden.h"
#include "oracle/golden/golden_content.h"
#include "tests/support/run_cli.h"

namespace lmo::oracle {
namespace {

using nlohmann::json;

struct Built {
  std::unique_ptr<Op> op;
  InputSet in;
};

// The case's op and f32 inputs, with `change` applied to the named input's values.
Built build(const json& j, const std::string& input,
            const std::function<double(int64_t, double)>& change) {
  const Case c = parse_case(j, "<certified_test>", "case");
  Built b{make_op(c), {}};
  const InputSet drawn = make_inputs(c, *b.op, ref::Format::f32);
  for (const auto& [name, t] : drawn.all()) {
    ref::Tensor copy = t;
    if (name == input) {
      for (int64_t i = 0; i < copy.numel(); ++i) copy.set(i, change(i, copy.get(i)));
    }
    b.in.add(name, std::move(copy));
  }
  return b;
}

// Every output element's bits in every format, and the top-k indices.
std::vector<uint64_t> golden_bits(const Outputs<ref::mp>& o) {
  std::vector<uint64_t> bits;
  for (const OutputValues<ref::mp>& v : o) {
    for (const ref::mp& x : v.values) {
      for (ref::Format f : ref::kAllFormats) bits.push_back(ref::encode(f, x));
    }
    for (int64_t i : v.indices) bits.push_back(static_cast<uint64_t>(i));
  }
  return bits;
}

// Bits that differ between the certified path and MPFR, and whether the certified path fell back
// to MPFR (for the whole op, or for the rows of its undecided elements).
struct Comparison {
  int64_t differing = 0;
  bool fell_back = false;
};
Comparison compare_paths(const Built& b) {
  set_exact_path(ExactPath::kMpfr);
  const std::vector<uint64_t> arbiter = golden_bits(exact_outputs(*b.op, b.in));
  set_exact_path(ExactPath::kCertified);
  const int64_t fallbacks = exact_stats().fallback_ops + exact_stats().partial_ops;
  const std::vector<uint64_t> certified = golden_bits(exact_outputs(*b.op, b.in));
  Comparison c;
  c.fell_back = exact_stats().fallback_ops + exact_stats().partial_ops > fallbacks;
  EXPECT_EQ(arbiter.size(), certified.size());
  for (size_t i = 0; i < arbiter.size() && i < certified.size(); ++i) {
    c.differing += arbiter[i] != certified[i] ? 1 : 0;
  }
  return c;
}

// Attention whose values are all c = 1 + 2^-8, the midpoint between bf16's 1 and 1 + 2^-7 (exact
// in f32): every output is exactly c, Σ p_j·c / 1, while the probabilities are inexact, so every
// output's interval straddles a bf16 (and e4m3, e5m2) rounding boundary.
json constant_value_attention() {
  return {{"id", "adversarial/attention-constant-v"},
          {"op", "attention"},
          {"seed", 91},
          {"formats", {"f32"}},
          {"params", {{"h", 2}, {"g", 1}, {"d", 16}, {"tokens", 12}, {"mask", "causal"}}}};
}
double bf16_midpoint(int64_t, double) { return 1 + 0x1p-8; }

TEST(Certified, OutputsOnARoundingBoundaryFallBackAndAgree) {
  const Built b = build(constant_value_attention(), "v", bf16_midpoint);
  const Comparison c = compare_paths(b);
  EXPECT_TRUE(c.fell_back) << "an exact midpoint cannot be decided by an interval around it";
  EXPECT_EQ(c.differing, 0);
}

// Two KV heads, only the first with the constant values: the first head's rows are undecided,
// the second's decided. Only those rows are recomputed in MPFR (the op is not rerun whole: at
// real shapes that takes hours), and the bytes still agree with the arbiter's.
TEST(Certified, OnlyTheUndecidedRowsAreRecomputed) {
  json j = constant_value_attention();
  j["params"]["g"] = 2;
  const int64_t d = 16, width = 2 * d;
  const Built b =
      build(j, "v", [&](int64_t i, double x) { return i % width < d ? 1 + 0x1p-8 : x; });
  const ExactStats before = exact_stats();
  const Comparison c = compare_paths(b);
  const ExactStats after = exact_stats();
  EXPECT_EQ(c.differing, 0);
  EXPECT_EQ(after.partial_ops, before.partial_ops + 1);
  EXPECT_EQ(after.fallback_ops, before.fallback_ops) << "the op was rerun whole";
  // Half the outputs (head 0, every row) undecided in bf16 and the fp8 formats.
  EXPECT_EQ(after.undecided_elements - before.undecided_elements, 12 * d);
}

// An op with independent rows and no row recomputation of its own (softmax): with every radius
// widened 2^40 times, a few elements per row leave the f64 rounding undecided; only the rows
// holding them are recomputed in MPFR, each as the op over that row, and the bytes agree.
TEST(Certified, UndecidedRowsOfAnOpWithIndependentRowsAreRecomputed) {
  const json j = json::parse(
      R"({"id": "s", "op": "softmax", "seed": 5, "formats": ["f32"], "params": {"rows": 64, "n": 50}})");
  const Built b = build(j, "z", [](int64_t, double x) { return x; });
  scale_radii_for_testing(0x1p40);
  const ExactStats before = exact_stats();
  const Comparison c = compare_paths(b);
  const ExactStats after = exact_stats();
  scale_radii_for_testing(1);
  EXPECT_EQ(c.differing, 0);
  EXPECT_EQ(after.partial_ops, before.partial_ops + 1);
  EXPECT_EQ(after.fallback_ops, before.fallback_ops) << "the op was rerun whole";
  EXPECT_GT(after.undecided_elements - before.undecided_elements, 10);
}

// An activation's f32 arguments x, all of them near a rounding boundary: the certified path must
// decide each the way MPFR rounds it, without falling back (2^-70 is far outside the balls'
// radius of about 2^-98).
void expect_decided_as_mpfr(const char* op, int seed, const std::vector<double>& near) {
  ASSERT_FALSE(near.empty());
  const json j = {{"id", std::string("adversarial/") + op + "-near-midpoints"},
                  {"op", op},
                  {"seed", seed},
                  {"formats", {"f32"}},
                  {"params", {{"n", static_cast<int64_t>(near.size())}}}};
  const Built b = build(j, "x", [&](int64_t i, double) { return near[static_cast<size_t>(i)]; });
  const Comparison c = compare_paths(b);
  EXPECT_FALSE(c.fell_back) << op;
  EXPECT_EQ(c.differing, 0) << op;
}

// f32 arguments whose exact SiLU lies within 2^-70 (relative) of a midpoint between two
// doubles, found with mpmath at 200 bits (tests/data/certified_near_midpoints.py).
TEST(Certified, OutputsNearADoubleMidpointAreDecidedAsMpfrRoundsThem) {
  expect_decided_as_mpfr("silu", 92,
                         {
#include "tests/data/certified_silu_near_midpoints.inc"
                         });
}

// The same for exact GELU, x/2·erfc(−x/√2), on both sides of 0: erfc from erfcx's Taylor table
// (reference/erfcx_taylor.cc) near 2 and in its tail, found the same way.
TEST(Certified, GeluNearADoubleMidpointIsDecidedAsMpfrRoundsIt) {
  expect_decided_as_mpfr("gelu", 93,
                         {
#include "tests/data/certified_gelu_near_midpoints.inc"
                         });
}

// The same boundary outputs with every radius narrowed to 0: the certified path now claims the
// double-double midpoints exact and decides every rounding, although their true error
// (~2^-100) straddles the boundary. The comparison above must see the wrong bits: it proves the
// adversarial test can fail.
TEST(Certified, ARadiusNarrowedOnPurposeIsCaught) {
  const Built b = build(constant_value_attention(), "v", bf16_midpoint);
  scale_radii_for_testing(0);
  const Comparison c = compare_paths(b);
  scale_radii_for_testing(1);
  EXPECT_FALSE(c.fell_back);
  EXPECT_GT(c.differing, 0) << "a too-tight bound must change some rounding";
}

// Ops with independent rows are written in blocks of rows at real shapes (golden_content.cc):
// the same tensors as the whole op on the certified path and on the MPFR arbiter, for blocks of
// one row and of several, with the blocked cross-entropy, the formula on balls (soft cap) and
// softmax, and one evaluation counted per block.
TEST(Certified, RowBlocksWriteTheWholeOpsBytes) {
  const char* cases[] = {
      R"({"id": "ce", "op": "cross_entropy", "seed": 7, "formats": ["bf16", "f32"],
          "params": {"rows": 7, "vocab": 3001, "z_loss": 1e-4}})",
      R"({"id": "ce-cap", "op": "cross_entropy", "seed": 8, "formats": ["bf16"],
          "params": {"rows": 3, "vocab": 500, "softcap": 30}})",
      R"({"id": "softmax", "op": "softmax", "seed": 9, "formats": ["f16"],
          "params": {"rows": 5, "n": 777}})",
      R"({"id": "rmsnorm", "op": "rmsnorm", "seed": 10, "formats": ["bf16"],
          "params": {"rows": 6, "d": 300, "eps": 1e-6}})",
      R"({"id": "fused", "op": "fused_add_rmsnorm", "seed": 11, "formats": ["bf16"],
          "params": {"rows": 4, "d": 200, "eps": 1e-6}})",
      R"({"id": "gelu", "op": "gelu", "seed": 12, "formats": ["bf16", "f32"],
          "params": {"n": 3000}})",
      R"({"id": "glu-ffn", "op": "glu_ffn", "seed": 13, "formats": ["bf16"],
          "params": {"tokens": 5, "d": 48, "d_ff": 96, "activation": "gelu"}})",
      R"({"id": "ffn-bias", "op": "ffn", "seed": 14, "formats": ["f32"],
          "params": {"tokens": 4, "d": 32, "d_ff": 64, "bias": true, "activation": "relu"}})",
      R"({"id": "rope", "op": "rope", "seed": 15, "formats": ["bf16"],
          "params": {"tokens": 6, "heads": 2, "head_dim": 16, "layout": "half_split",
                     "base": 10000, "max_position": 4096}})",
      R"({"id": "rope-packed", "op": "rope", "seed": 16, "formats": ["bf16"],
          "params": {"tokens": 6, "heads": 1, "head_dim": 16, "layout": "interleaved",
                     "base": 10000, "cu_seqlens": [0, 2, 6]}})",
      R"({"id": "rope-table", "op": "rope_table", "seed": 17, "formats": ["bf16"],
          "params": {"tokens": 5, "heads": 2, "head_dim": 16, "layout": "half_split",
                     "base": 10000, "max_position": 4096}})"};
  for (const char* text : cases) {
    const Case c = parse_case(json::parse(text), "<certified_test>", "case");
    set_row_block_elements_for_testing(int64_t{1} << 40);
    const SafetensorsContent whole = golden_content(c);
    set_exact_path(ExactPath::kMpfr);
    const SafetensorsContent arbiter = golden_content(c);
    set_exact_path(ExactPath::kCertified);
    EXPECT_EQ(whole.tensors, arbiter.tensors) << c.id;
    int64_t total = 0;
    for (const OutputDecl& d : make_op(c)->outputs()) total += ref::checked_numel(d.shape);
    for (const int64_t block : {int64_t{1}, total / 3, total / 2}) {  // 1 row, 2 rows, several
      set_row_block_elements_for_testing(block);
      const auto evaluations = [] {
        const ExactStats s = exact_stats();
        return s.certified_ops + s.fallback_ops + s.partial_ops;
      };
      const int64_t before = evaluations();
      const SafetensorsContent blocked = golden_content(c);
      EXPECT_EQ(blocked.tensors, whole.tensors) << c.id << " blocks of " << block;
      EXPECT_GT(evaluations() - before, 1) << c.id << ": evaluated in blocks";
    }
  }
  set_row_block_elements_for_testing(int64_t{1} << 22);
}

namespace fs = std::filesystem;

// The certified path (balls, MPFR where they do not decide) and the MPFR-only arbiter write the
// same bytes for every built-in case, and golden reports the fallbacks. (Not in the sanitizer
// run of CI: a debug ASan build takes many minutes over both paths; golden_test covers the
// certified path there.)
TEST(Certified, EveryBuiltinGoldenFileIsByteIdenticalOnBothPaths) {
  const fs::path base =
      fs::temp_directory_path() / ("lmo_golden_paths_" + std::to_string(getpid()));
  fs::remove_all(base);
  std::string report;
  for (const char* path : {"certified", "mpfr"}) {
    const lmo::testdata::CliResult r =
        lmo::testdata::run_cli(LMO_BIN, std::string("--exact ") + path +
                                            " golden --threads 2 --out " + (base / path).string());
    ASSERT_EQ(r.code, 0) << r.out;
    if (std::string(path) == "certified") report = r.out;
  }
  EXPECT_NE(report.find("evaluations certified"), std::string::npos) << report;
  const nlohmann::json m =
      nlohmann::json::parse(lmo::testdata::file_bytes(base / "certified" / "manifest.json"));
  ASSERT_GE(m["files"].size(), 80u) << "every built-in case";
  EXPECT_EQ(lmo::testdata::file_bytes(base / "certified" / "manifest.json"),
            lmo::testdata::file_bytes(base / "mpfr" / "manifest.json"));
  for (const auto& f : m["files"]) {
    const std::string name = f["file"].get<std::string>();
    EXPECT_EQ(lmo::testdata::file_bytes(base / "certified" / name),
              lmo::testdata::file_bytes(base / "mpfr" / name))
        << name;
  }
  fs::remove_all(base);
}

}  // namespace
}  // namespace lmo::oracle
