// `lmoracle verify` as a user runs it: the table and its summary line, exit codes 0/1/2, and a
// message naming the file, the field and the expectation for every kind of malformed case file.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/support/run_cli.h"
#include "tests/support/scratch_path.h"

namespace {

using Result = lmo::testdata::CliResult;
Result run(const std::string& args) { return lmo::testdata::run_cli(LMO_BIN, args); }

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A case file in a fresh temporary folder.
std::string write_case_file(const std::string& name, const std::string& text) {
  static const std::filesystem::path dir = lmo::testdata::scratch_path("lmo_verify_cli");
  std::filesystem::create_directories(dir);
  const std::filesystem::path f = dir / name;
  std::ofstream(f) << text;
  return f.string();
}

const char* kGood =
    R"({"cases": [{"id": "t/rms", "op": "rmsnorm", "seed": 7, "formats": ["f32", "bf16"],
                   "params": {"rows": 2, "d": 64, "eps": 1e-6}}]})";

TEST(VerifyCli, RunsACaseFileAndPrintsTheSummary) {
  const Result r = run("verify --case-file " + write_case_file("good.json", kGood));
  ASSERT_EQ(r.code, 0) << r.out;
  // ref, ref-f64, ref-f32 and one fast-<target> per supported SIMD target, on two formats.
  const Result list = run("list --json");
  int64_t backends = 0;
  // Keep the parsed document alive: ranging over a member of a temporary dangles.
  const nlohmann::json listing = nlohmann::json::parse(list.out);
  for (const auto& b : listing.at("backends")) backends += b.at("default") == true;
  EXPECT_GE(backends, 4);
  EXPECT_TRUE(contains(r.out, "verify: " + std::to_string(2 * backends) + " passed, 0 failed"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "t/rms")) << r.out;
  EXPECT_TRUE(contains(r.out, "max ulp")) << r.out;
  // The exact values' line, as golden prints it: how many evaluations the balls decided.
  EXPECT_TRUE(contains(r.out, "exact: ")) << r.out;
  EXPECT_TRUE(contains(r.out, " evaluations certified, ")) << r.out;
}

TEST(VerifyCli, JsonHasOneRowPerCaseBackendFormat) {
  const Result r =
      run("verify --json --backend ref --case-file " + write_case_file("good.json", kGood));
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["backend"], "ref");
  EXPECT_EQ(j["rows"][0]["verdict"], "pass");
  EXPECT_EQ(j["rows"][1]["format"], "bf16");
  EXPECT_EQ(j["failed"], 0);
}

// Attention with its own softmax scale (Gemma 2's 1/√query_pre_attn_scalar, here 1/√144 = 1/12)
// and g left out (g = h): every backend passes, the kernels included. A kernel left at the
// default 1/√d = 1/4 would be far outside the bound (logits three times too large), so passing
// shows the scale reaches the kernels.
TEST(VerifyCli, AttentionWithAScaleReachesEveryBackend) {
  const std::string with_scale =
      R"({"cases": [{"id": "t/attn-scale", "op": "attention", "seed": 3, "formats": ["f32", "bf16"],
                     "params": {"h": 2, "d": 16, "tokens": 9, "mask": "causal", "scale": 0.08333333333333333}},
                    {"id": "t/decode-scale", "op": "attention_decode", "seed": 4, "formats": ["f32"],
                     "params": {"h": 4, "g": 2, "d": 16, "cache_len": 9, "scale": 0.08333333333333333}}]})";
  const Result r =
      run("verify --json --no-claims --case-file " + write_case_file("scale.json", with_scale));
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  std::set<std::string> backends;
  for (const auto& row : j.at("rows")) backends.insert(row.at("backend").get<std::string>());
  EXPECT_TRUE(backends.count("ref-f32"));
  EXPECT_TRUE(std::any_of(backends.begin(), backends.end(),
                          [](const std::string& b) { return b.rfind("fast-", 0) == 0; }));
  EXPECT_EQ(j.at("failed"), 0);
  EXPECT_EQ(j.at("passed"), j.at("rows").size());
}

// `--backend fast` is every fast-<target> backend this CPU supports, and nothing else.
TEST(VerifyCli, BackendFastSelectsEveryFastTarget) {
  const Result r =
      run("verify --json --backend fast --case-file " + write_case_file("good.json", kGood));
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json listing = nlohmann::json::parse(run("list --json").out);
  std::set<std::string> fast;
  for (const auto& b : listing.at("backends")) {
    const std::string name = b.at("name");
    if (name.starts_with("fast-")) fast.insert(name);
  }
  ASSERT_FALSE(fast.empty()) << listing;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  std::set<std::string> ran;
  for (const auto& row : j.at("rows")) ran.insert(row.at("backend").get<std::string>());
  EXPECT_EQ(ran, fast) << r.out;
  EXPECT_EQ(j.at("rows").size(), 2 * fast.size()) << r.out;
  EXPECT_EQ(j.at("failed"), 0) << r.out;
}

TEST(VerifyCli, TheNaiveKernelIsRunOnlyWhenAskedAndOnlyOnItsFormat) {
  const std::string f = write_case_file("good.json", kGood);
  const Result r = run("verify --json --backend ref-bf16 --case-file " + f);
  ASSERT_EQ(r.code, 0) << r.out;  // rmsnorm's naive-relative policy accepts its own yardstick
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 1u);
  EXPECT_EQ(j["rows"][0]["format"], "bf16");
  EXPECT_EQ(j["skipped"], 1);
}

TEST(VerifyCli, ANaiveBf16GeluFailsTheElementwisePolicy) {
  const Result r = run("verify --backend ref-bf16 --case-file " +
                       write_case_file("gelu.json", R"({"cases": [{"id": "g", "op": "gelu",
                         "seed": 1, "formats": ["bf16"], "params": {"n": 4096}}]})"));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(contains(r.out, "verify: 0 passed, 1 failed")) << r.out;
  EXPECT_TRUE(contains(r.out, "the policy allows 0 ulp")) << r.out;
}

TEST(VerifyCli, FilterSelectsByIdAndBadRegexIsExit2) {
  const std::string f = write_case_file("good.json", kGood);
  Result r = run("verify --filter nomatch --case-file " + f);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "verify: 0 passed, 0 failed")) << r.out;
  r = run("verify --filter '(' --case-file " + f);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "--filter")) << r.out;
}

TEST(VerifyCli, UnknownBackendOrFormatIsExit2NamingTheChoices) {
  const std::string f = write_case_file("good.json", kGood);
  Result r = run("verify --backend warp-drive --case-file " + f);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "--backend") && contains(r.out, "ref-f32")) << r.out;
  r = run("verify --format f8 --case-file " + f);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "--format") && contains(r.out, "e4m3")) << r.out;
}

TEST(VerifyCli, CostLimitRefusesBeforeRunning) {
  const Result r = run("verify --max-cost 100 --case-file " + write_case_file("good.json", kGood));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "cost estimate") && contains(r.out, "t/rms")) << r.out;
}

struct Malformed {
  const char* name;
  const char* text;
  const char* field;     // must appear in the message
  const char* expected;  // and so must this
};

class MalformedCase : public ::testing::TestWithParam<Malformed> {};

TEST_P(MalformedCase, IsExit2NamingFileFieldAndExpectation) {
  const Malformed& m = GetParam();
  const std::string f = write_case_file(std::string(m.name) + ".json", m.text);
  const Result r = run("verify --case-file " + f);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, f)) << r.out;
  EXPECT_TRUE(contains(r.out, m.field)) << r.out;
  EXPECT_TRUE(contains(r.out, m.expected)) << r.out;
  EXPECT_FALSE(contains(r.out, "verify:")) << "nothing may run: " << r.out;
}

#define CASE(extra) \
  R"({"cases": [{"id": "x", "op": "rmsnorm", "seed": 1, "formats": ["f32"], )" extra "}]}"

INSTANTIATE_TEST_SUITE_P(
    Files, MalformedCase,
    ::testing::Values(
        Malformed{"not_json", "{\"cases\": [", "", "expected JSON"},
        Malformed{"not_object", "[1, 2]", "", "expected an object"},
        Malformed{"no_cases", "{\"comment\": \"x\"}", "cases", "expected a list of cases"},
        Malformed{"top_level_extra", "{\"cases\": [], \"extra\": 1}", "extra",
                  "unknown top-level field"},
        Malformed{"unknown_op",
                  R"({"cases": [{"id": "x", "op": "rmsnrom", "seed": 1, "formats": ["f32"],
                      "params": {}}]})",
                  "cases[0].op", "unknown op \"rmsnrom\""},
        Malformed{"missing_param", CASE(R"("params": {"rows": 2, "d": 64})"), "cases[0].params.eps",
                  "but it is missing"},
        Malformed{"unknown_param", CASE(R"("params": {"rows": 2, "d": 64, "eps": 1e-6,
                  "epsilon": 1})"),
                  "cases[0].params.epsilon", "unknown parameter"},
        Malformed{"wrong_type", CASE(R"("params": {"rows": "2", "d": 64, "eps": 1e-6})"),
                  "cases[0].params.rows", "expected an integer"},
        Malformed{"zero_rows", CASE(R"("params": {"rows": 0, "d": 64, "eps": 1e-6})"),
                  "cases[0].params.rows", "expected an integer in [1,"},
        Malformed{"absurd_width", CASE(R"("params": {"rows": 1, "d": 1000000000000, "eps": 0})"),
                  "cases[0].params.d", "expected an integer in [1,"},
        Malformed{"negative_eps", CASE(R"("params": {"rows": 1, "d": 8, "eps": -1})"),
                  "cases[0].params.eps", "expected a finite number in [0.0, 1.0]"},
        Malformed{"bad_format",
                  R"({"cases": [{"id": "x", "op": "rmsnorm", "seed": 1, "formats": ["fp32"],
                      "params": {"rows": 1, "d": 8, "eps": 0}}]})",
                  "cases[0].formats[0]", "expected a format name"},
        Malformed{"negative_seed",
                  R"({"cases": [{"id": "x", "op": "rmsnorm", "seed": -1, "formats": ["f32"],
                      "params": {"rows": 1, "d": 8, "eps": 0}}]})",
                  "cases[0].seed", "non-negative integer"},
        Malformed{"bad_id",
                  R"({"cases": [{"id": "Has Space", "op": "rmsnorm", "seed": 1,
                      "formats": ["f32"], "params": {"rows": 1, "d": 8, "eps": 0}}]})",
                  "cases[0].id", "expected 1 to 120 characters"},
        Malformed{"duplicate_id",
                  R"({"cases": [{"id": "x", "op": "relu", "seed": 1, "formats": ["f32"],
                      "params": {"n": 8}}, {"id": "x", "op": "relu", "seed": 2,
                      "formats": ["f32"], "params": {"n": 8}}]})",
                  "cases[1].id", "already used by cases[0]"},
        Malformed{"unknown_case_field", CASE(R"("params": {"rows": 1, "d": 8, "eps": 0},
                  "sead": 3)"),
                  "cases[0].sead", "unknown field"},
        Malformed{"unknown_preset", CASE(R"("params": {"rows": 1, "d": 8, "eps": 0},
                  "preset": "llama9")"),
                  "cases[0].preset", "unknown key"},
        Malformed{"override_unknown_input", CASE(R"("params": {"rows": 1, "d": 8, "eps": 0},
                  "inputs": {"q": {"dist": "normal", "mean": 0, "std": 1}})"),
                  "cases[0].inputs.q", "not a real input"},
        Malformed{"override_bad_dist", CASE(R"("params": {"rows": 1, "d": 8, "eps": 0},
                  "inputs": {"x": {"dist": "cauchy"}})"),
                  "cases[0].inputs.x.dist", "expected one of"},
        Malformed{"nonfinite_param", CASE(R"("params": {"rows": 1, "d": 8, "eps": 1e999})"), "",
                  "expected JSON"}));

#undef CASE

#define OP_CASE(op, params)                                                                       \
  R"({"cases": [{"id": "x", "op": ")" op R"(", "seed": 1, "formats": ["f32"], "params": )" params \
  "}]}"
#define ROPE "\"tokens\": 2, \"heads\": 1, \"head_dim\": 8, \"max_position\": 100"

// The positional, RoPE and FFN ops read their parameters with the same checks.
INSTANTIATE_TEST_SUITE_P(
    PositionalRopeFfn, MalformedCase,
    ::testing::Values(
        Malformed{"rope_odd_rotary", OP_CASE("rope", "{" ROPE R"(, "layout": "interleaved",
                  "rotary_dims": 5})"),
                  "cases[0].params.rotary_dims", "expected an even number"},
        Malformed{"rope_rotary_too_wide", OP_CASE("rope", "{" ROPE R"(, "layout": "interleaved",
                  "rotary_dims": 10})"),
                  "cases[0].params.rotary_dims", "expected an integer in [2, 8]"},
        Malformed{"rope_layout", OP_CASE("rope", "{" ROPE R"(, "layout": "neox"})"),
                  "cases[0].params.layout", "expected one of"},
        Malformed{"rope_positions", OP_CASE("rope", "{" ROPE R"(, "layout": "half_split",
                  "min_position": 100})"),
                  "cases[0].params.min_position", "max_position"},
        Malformed{"rope_llama31_factors", OP_CASE("rope", "{" ROPE R"(, "layout": "half_split",
                  "scaling": "llama31", "factor": 8, "low_freq_factor": 4,
                  "high_freq_factor": 1})"),
                  "cases[0].params.high_freq_factor", "low_freq_factor"},
        Malformed{"rope_yarn_needs_context", OP_CASE("rope", "{" ROPE R"(, "layout": "half_split",
                  "scaling": "yarn", "factor": 40})"),
                  "cases[0].params.original_context", "but it is missing"},
        Malformed{"rope_param_of_another_scaling", OP_CASE("rope", "{" ROPE R"(,
                  "layout": "half_split", "scaling": "pi", "factor": 4, "beta_fast": 32})"),
                  "cases[0].params.beta_fast", "unknown parameter"},
        Malformed{"rope_table_override", R"({"cases": [{"id": "x", "op": "rope_table", "seed": 1,
                  "formats": ["f32"], "params": {)" ROPE R"(, "layout": "half_split"},
                  "inputs": {"cos_sin": {"dist": "normal", "mean": 0, "std": 1}}}]})",
                  "cases[0].inputs.cos_sin", "not a real input"},
        Malformed{"sinusoidal_odd_d", OP_CASE("sinusoidal_pe", R"({"tokens": 2, "d": 7,
                  "max_position": 10})"),
                  "cases[0].params.d", "expected an even width"},
        Malformed{"t5_max_distance", OP_CASE("t5_bias", R"({"heads": 1, "query_len": 2,
                  "key_len": 2, "num_buckets": 32, "max_distance": 8})"),
                  "cases[0].params.max_distance", "expected an integer in [17,"},
        Malformed{"ffn_activation", OP_CASE("ffn", R"({"tokens": 1, "d": 4, "d_ff": 8,
                  "activation": "swish"})"),
                  "cases[0].params.activation", "expected one of"},
        Malformed{"glu_has_no_bias", OP_CASE("glu_ffn", R"({"tokens": 1, "d": 4, "d_ff": 8,
                  "activation": "silu", "bias": true})"),
                  "cases[0].params.bias", "unknown parameter"}));

#define MLA "\"h\": 1, \"d_h\": 4, \"d_rope\": 8, \"d_c\": 4, \"cache_len\": 3"
#define YARN "\"scaling\": \"yarn\", \"factor\": 40, \"original_context\": 4096"

// mla_decode reads its YaRN scaling with the rope op's reader (none or yarn only) and checks
// DeepSeek's mscale_all_dim.
INSTANTIATE_TEST_SUITE_P(
    MlaYarn, MalformedCase,
    ::testing::Values(
        Malformed{"mla_scaling_rule", OP_CASE("mla_decode", "{" MLA R"(, "scaling": "ntk",
                  "factor": 4})"),
                  "cases[0].params.scaling", "expected one of \"none\", \"yarn\""},
        Malformed{"mla_yarn_needs_context", OP_CASE("mla_decode", "{" MLA R"(, "scaling": "yarn",
                  "factor": 40})"),
                  "cases[0].params.original_context", "but it is missing"},
        Malformed{"mla_yarn_factor", OP_CASE("mla_decode", "{" MLA R"(, "scaling": "yarn",
                  "factor": 0, "original_context": 4096})"),
                  "cases[0].params.factor", "expected a finite number in"},
        Malformed{"mla_mscale_negative", OP_CASE("mla_decode", "{" MLA ", " YARN R"(,
                  "mscale_all_dim": -1})"),
                  "cases[0].params.mscale_all_dim", "expected a finite number in [0.0, 100.0]"},
        Malformed{"mla_mscale_without_yarn", OP_CASE("mla_decode", "{" MLA R"(,
                  "mscale_all_dim": 1})"),
                  "cases[0].params.mscale_all_dim", "unknown parameter"},
        Malformed{"mla_no_attention_factor", OP_CASE("mla_decode", "{" MLA ", " YARN R"(,
                  "attention_factor": true})"),
                  "cases[0].params.attention_factor", "unknown parameter"},
        Malformed{"mla_yarn_base_one", OP_CASE("mla_decode", "{" MLA ", " YARN R"(,
                  "rope_base": 1})"),
                  "cases[0].params.rope_base", "expected a base > 1 with YaRN scaling"}));

#undef YARN
#undef MLA
#undef ROPE
#undef OP_CASE

// An op without a fast kernel: the fast backends do not run it, and verify says so below the
// table, as something not run, not as a failure (exit code 0).
// Every op has a fast kernel; what a fast backend cannot run is a storage format other than
// f32, bf16 and f16 (fp8 here): reported as not run, never as a failure, while the case's other
// format runs on it.
TEST(VerifyCli, BackendsThatCannotRunACaseAreReportedAsNotRun) {
  const Result r = run("verify --case-file " + write_case_file("t5.json", R"({"cases": [
      {"id": "r", "op": "t5_bias", "seed": 1, "formats": ["f32", "e4m3"],
       "params": {"heads": 2, "query_len": 2, "key_len": 3}}]})"));
  ASSERT_EQ(r.code, 0) << r.out;
  const Result list = run("list --json");
  const nlohmann::json listing = nlohmann::json::parse(list.out);
  int64_t fast = 0;
  for (const auto& b : listing["backends"]) {
    fast += b["name"].get<std::string>().rfind("fast-", 0) == 0 && b["default"].get<bool>();
  }
  // ref, ref-f64 and ref-f32 in both formats, and every fast backend in f32.
  EXPECT_TRUE(contains(r.out, "verify: " + std::to_string(6 + fast) + " passed, 0 failed"))
      << r.out;
  if (fast > 0) {
    EXPECT_TRUE(contains(r.out, ", " + std::to_string(fast) + " skipped")) << r.out;
    EXPECT_TRUE(contains(r.out, "not run (unsupported, not a failure):")) << r.out;
    EXPECT_TRUE(contains(r.out, "the fast kernels store f32, bf16 and f16 only: fast-")) << r.out;
    EXPECT_FALSE(contains(r.out, "FAIL")) << r.out;
  }
}

TEST(VerifyCli, AMissingCaseFileIsExit2) {
  const Result r = run("verify --case-file /nonexistent/cases.json");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "/nonexistent/cases.json") && contains(r.out, "cannot open"))
      << r.out;
}

}  // namespace
