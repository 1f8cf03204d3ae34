// Special values in case files (oracle/cases/case_specials.h): the "specials" of an input override put
// NaN, ±inf, ±0 … at the listed elements over the drawn values, leave every other element as
// drawn, and every malformed list is an InputError naming the file, the field and the
// expectation. End to end, `verify` runs such a case on every backend and judges it (the rows of
// docs/nan-inf.md), and `golden` + `check` carry the special inputs and outputs.
#include "oracle/cases/case_specials.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "oracle/cases/case_inputs.h"
#include "oracle/golden/safetensors.h"
#include "tests/support/run_cli.h"

namespace lmo::oracle {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

Case softmax_case(const json& inputs, const json& formats = {"f32", "bf16"}) {
  json j = {{"id", "s"},
            {"op", "softmax"},
            {"seed", 9},
            {"formats", formats},
            {"params", {{"rows", 2}, {"n", 4}}}};
  if (!inputs.is_null()) j["inputs"] = inputs;
  return parse_case(j, "specials.json", "cases[0]");
}

TEST(CaseSpecials, PlacedOverTheDrawnValuesOnly) {
  const Case plain = softmax_case(nullptr);
  const Case special = softmax_case(json::parse(R"({"z": {"specials": [
      {"index": 0, "value": "neg_inf"}, {"index": 2, "value": "nan"},
      {"index": 5, "value": "pos_inf"}, {"index": 7, "value": "neg_zero"}]}})"));
  for (ref::Format f : {ref::Format::f32, ref::Format::bf16}) {
    const auto op = make_op(plain);
    const ref::Tensor a = make_inputs(plain, *op, f).at("z");
    const ref::Tensor b = make_inputs(special, *op, f).at("z");
    EXPECT_EQ(b.get(0), -INFINITY);
    EXPECT_TRUE(std::isnan(b.get(2)));
    EXPECT_EQ(b.get(5), INFINITY);
    EXPECT_TRUE(b.get(7) == 0 && std::signbit(b.get(7)));
    for (int64_t i : {1, 3, 4, 6}) EXPECT_EQ(a.bits(i), b.bits(i)) << i;
  }
  // With a distribution as well: the specials go over the overridden draw.
  const Case both = softmax_case(json::parse(R"({"z": {"dist": "uniform", "lo": 1, "hi": 2,
      "specials": [{"index": 1, "value": "max_finite"}]}})"));
  const ref::Tensor z = make_inputs(both, *make_op(both), ref::Format::bf16).at("z");
  EXPECT_EQ(z.get(1), 0x1.fep127);  // bf16's largest finite value
  EXPECT_TRUE(z.get(0) >= 1 && z.get(0) < 2);
}

// A case with an integer input (cross-entropy's targets) and specials on its real input: the
// integer input is drawn as always, the specials land on the logits.
TEST(CaseSpecials, IntegerInputsBesideSpecialsAreDrawnAsAlways) {
  const Case c = parse_case(json::parse(R"({"id": "ce", "op": "cross_entropy", "seed": 4,
      "formats": ["f32"], "params": {"rows": 2, "vocab": 4},
      "inputs": {"z": {"specials": [{"index": 3, "value": "pos_inf"}]}}})"),
                            "specials.json", "cases[0]");
  const InputSet in = make_inputs(c, *make_op(c), ref::Format::f32);
  EXPECT_EQ(in.at("z").get(3), INFINITY);
  for (int64_t t : in.ints("target")) EXPECT_TRUE(t >= 0 && t < 4) << t;
}

struct Bad {
  const char* inputs;
  const char* field;
  const char* expected;
};

class CaseSpecialsRefused : public ::testing::TestWithParam<Bad> {};

TEST_P(CaseSpecialsRefused, NamingTheFieldAndTheExpectation) {
  const Bad& b = GetParam();
  try {
    softmax_case(json::parse(b.inputs), {"f32", "e4m3"});
    FAIL() << "accepted " << b.inputs;
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "specials.json");
    EXPECT_EQ(e.field(), b.field) << e.what();
    EXPECT_NE(e.expectation().find(b.expected), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Lists, CaseSpecialsRefused,
    ::testing::Values(
        Bad{R"({"z": {"specials": {}}})", "cases[0].inputs.z.specials",
            "expected a non-empty list"},
        Bad{R"({"z": {"specials": []}})", "cases[0].inputs.z.specials",
            "expected a non-empty list"},
        Bad{R"({"z": {"specials": [3]}})", "cases[0].inputs.z.specials[0]", "expected an object"},
        Bad{R"({"z": {"specials": [{"index": 8, "value": "nan"}]}})",
            "cases[0].inputs.z.specials[0].index", "expected an integer in [0, 7]"},
        Bad{R"({"z": {"specials": [{"index": -1, "value": "nan"}]}})",
            "cases[0].inputs.z.specials[0].index", "expected an integer in [0, 7]"},
        Bad{R"({"z": {"specials": [{"index": 1, "value": "NaN"}]}})",
            "cases[0].inputs.z.specials[0].value", "expected one of \"pos_zero\""},
        Bad{R"({"z": {"specials": [{"index": 1, "value": "nan", "sign": 1}]}})",
            "cases[0].inputs.z.specials[0].sign", "unknown"},
        Bad{R"({"z": {"specials": [{"index": 1, "value": "nan"}, {"index": 1, "value": "nan"}]}})",
            "cases[0].inputs.z.specials[1].index", "expected each index once"},
        Bad{R"({"z": {"specials": [{"index": 1, "value": "pos_inf"}]}})",
            "cases[0].inputs.z.specials[0].value", "pos_inf is not a value of e4m3"},
        Bad{R"({"z": {"specials": [{"index": 1, "value": "nan"}], "dist": "cauchy"}})",
            "cases[0].inputs.z.dist", "expected one of"},
        Bad{R"({"z": {"mean": 1}})", "cases[0].inputs.z.dist", "but it is missing"}));

// The command line: a case file with special inputs passes `verify` on every backend (each of
// them gives the table's NaN, ±inf and zeros, which the judge requires), and its golden file
// holds them; `check` accepts the golden outputs and fails a kernel that writes 0 for a NaN.
class CaseSpecialsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lmo_case_specials_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& n) const { return (dir_ / n).string(); }
  fs::path dir_;
};

TEST_F(CaseSpecialsCli, VerifyGoldenAndCheckCarryTheSpecialValues) {
  // Row 0 of z all −inf, row 1 two masked logits; x of RMSNorm (ε = 0) a zero row.
  std::ofstream(path("cases.json")) << R"({"cases": [
    {"id": "sp/softmax", "op": "softmax", "seed": 1, "formats": ["f32", "bf16"],
     "params": {"rows": 3, "n": 4},
     "inputs": {"z": {"specials": [
       {"index": 0, "value": "neg_inf"}, {"index": 1, "value": "neg_inf"},
       {"index": 2, "value": "neg_inf"}, {"index": 3, "value": "neg_inf"},
       {"index": 4, "value": "neg_inf"}, {"index": 6, "value": "neg_inf"},
       {"index": 9, "value": "nan"}]}}},
    {"id": "sp/rms", "op": "rmsnorm", "seed": 2, "formats": ["f32", "bf16"],
     "params": {"rows": 2, "d": 2, "eps": 0},
     "inputs": {"x": {"specials": [{"index": 0, "value": "pos_zero"},
                                   {"index": 1, "value": "neg_zero"}]}}}]})";
  lmo::testdata::CliResult r =
      lmo::testdata::run_cli(LMO_BIN, "verify --no-claims --case-file " + path("cases.json"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(" 0 failed"), std::string::npos) << r.out;
  r = lmo::testdata::run_cli(LMO_BIN,
                             "golden --case-file " + path("cases.json") + " --out " + path("g"));
  ASSERT_EQ(r.code, 0) << r.out;
  const SafetensorsContent g = read_safetensors(path("g/sp+softmax.safetensors"));
  const ref::Tensor& z = g.tensors.at("in.z");
  const ref::Tensor& p = g.tensors.at("out.p.f32");
  EXPECT_EQ(z.get(0), -INFINITY);
  EXPECT_TRUE(std::isnan(z.get(9)));
  for (int64_t i = 0; i < 4; ++i) EXPECT_TRUE(std::isnan(p.get(i))) << i;  // all −inf
  EXPECT_TRUE(p.get(4) == 0 && !std::signbit(p.get(4)));                   // masked: +0
  EXPECT_TRUE(p.get(5) > 0 && p.get(7) > 0);
  for (int64_t i = 8; i < 12; ++i) EXPECT_TRUE(std::isnan(p.get(i))) << i;  // NaN row
  const SafetensorsContent rms = read_safetensors(path("g/sp+rms.safetensors"));
  for (int64_t i = 0; i < 2; ++i) EXPECT_TRUE(std::isnan(rms.tensors.at("out.y.f32").get(i)));
  // check: the golden outputs pass; a kernel writing +0 where the table says NaN fails.
  SafetensorsContent actual;
  actual.tensors.emplace("out.p", p);
  write_safetensors(path("good.safetensors"), actual);
  r = lmo::testdata::run_cli(LMO_BIN, "check --golden " + path("g/sp+softmax.safetensors") +
                                          " --actual " + path("good.safetensors"));
  EXPECT_EQ(r.code, 0) << r.out;
  ref::Tensor zeroed = p;
  zeroed.set(0, 0.0);
  actual.tensors.at("out.p") = zeroed;
  write_safetensors(path("bad.safetensors"), actual);
  r = lmo::testdata::run_cli(LMO_BIN, "check --golden " + path("g/sp+softmax.safetensors") +
                                          " --actual " + path("bad.safetensors"));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("element 0: the reference is NaN"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace lmo::oracle
