// Bad input to the command line, each the way a user would hit it, each exit code 2 with a
// message that names the file or option, the field and what was expected, and nothing written:
// the items of the reliability list that tests/cli/verify_cli_test.cc, golden_cli_test.cc,
// drift_cli_test.cc and safetensors_test.cc do not already cover at the command line
// (safetensors_test.cc checks the reader's rules in the library; here they reach `check`).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/run_cli.h"

namespace {

namespace fs = std::filesystem;
using lmo::testdata::CliResult;

CliResult run(const std::string& args) { return lmo::testdata::run_cli(LMO_BIN, args); }

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

class BadInputCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lmo_bad_input_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "cases.json") << R"({"cases": [
      {"id": "t/silu", "op": "silu", "seed": 3, "formats": ["bf16", "f32"], "params": {"n": 4}}]})";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A safetensors file from its header JSON and data bytes (the 8-byte little-endian length
  // prefix is written here, or `claimed` in its place).
  void write_raw(const std::string& name, const std::string& header, const std::string& data,
                 int64_t claimed = -1) {
    const uint64_t n = claimed >= 0 ? static_cast<uint64_t>(claimed) : header.size();
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[static_cast<size_t>(i)] = static_cast<char>(n >> (8 * i));
    std::ofstream(path(name), std::ios::binary) << bytes << header << data;
  }
  // The golden file of cases.json; returns the `check --golden G --actual ` prefix.
  std::string golden() {
    const CliResult r = run("golden --case-file " + path("cases.json") + " --out " + path("g"));
    EXPECT_EQ(r.code, 0) << r.out;
    return "check --golden " + path("g/t+silu.safetensors") + " --actual ";
  }
  fs::path dir_;
};

// `check` with actual files the safetensors reader refuses: each names the file and the rule.
TEST_F(BadInputCli, CheckRefusesMalformedSafetensors) {
  const std::string check = golden();
  const std::string y4 = R"({"out.y":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]}})";
  // Truncated: the header promises 8 data bytes, 5 follow.
  write_raw("truncated.safetensors", y4, std::string(5, '\0'));
  CliResult r = run(check + path("truncated.safetensors"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, path("truncated.safetensors") + ": ")) << r.out;
  EXPECT_TRUE(contains(r.out, "8")) << r.out;
  // A header length past the end of the file, and one above the 100 MB limit.
  write_raw("beyond.safetensors", y4, std::string(8, '\0'), 1 << 20);
  r = run(check + path("beyond.safetensors"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, path("beyond.safetensors") + ": header")) << r.out;
  write_raw("huge.safetensors", y4, std::string(8, '\0'), int64_t{1} << 40);
  r = run(check + path("huge.safetensors"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, path("huge.safetensors") + ": header")) << r.out;
  EXPECT_TRUE(contains(r.out, "100")) << r.out;
  // Two tensors sharing bytes.
  write_raw("overlap.safetensors",
            R"({"out.y":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]},)"
            R"("out.z":{"dtype":"BF16","shape":[2],"data_offsets":[4,8]}})",
            std::string(8, '\0'));
  r = run(check + path("overlap.safetensors"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, path("overlap.safetensors") + ": ")) << r.out;
  EXPECT_TRUE(contains(r.out, "overlap")) << r.out;
  // A dtype that is not one of safetensors' names.
  write_raw("dtype.safetensors", R"({"out.y":{"dtype":"BF17","shape":[4],"data_offsets":[0,8]}})",
            std::string(8, '\0'));
  r = run(check + path("dtype.safetensors"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "dtype.safetensors: tensor \"out.y\" dtype")) << r.out;
}

// `check` with well-formed files holding the wrong dtype for the output.
TEST_F(BadInputCli, CheckRefusesAWrongOutputDtype) {
  const std::string check = golden();
  // f16: a float format the golden file has no output for (it has bf16 and f32).
  write_raw("f16.safetensors", R"({"out.y":{"dtype":"F16","shape":[4],"data_offsets":[0,8]}})",
            std::string(8, '\0'));
  CliResult r = run(check + path("f16.safetensors"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, path("f16.safetensors") + ": out.y: the golden file has no f16 "
                                                        "output (it has: "))
      << r.out;
  // Integers where a real output is expected.
  write_raw("i32.safetensors", R"({"out.y":{"dtype":"I32","shape":[4],"data_offsets":[0,16]}})",
            std::string(16, '\0'));
  r = run(check + path("i32.safetensors"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, path("i32.safetensors") + ": out.y: expected a floating-point "
                                                        "output"))
      << r.out;
  // A missing actual file.
  r = run(check + path("absent.safetensors"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, path("absent.safetensors"))) << r.out;
}

// Non-finite parameters on the command line (`ref --param`): NaN and infinities are not numbers
// a parameter accepts, whether spelled as words or as an overflowing literal.
TEST_F(BadInputCli, NonFiniteParametersAreRefused) {
  const std::string in = " --in " + path("none.safetensors") + " --out " + path("o.safetensors");
  for (const char* eps : {"nan", "inf", "-inf", "1e999", "NaN"}) {
    const CliResult r =
        run("ref --op rmsnorm --param rows=1 --param d=4 --param eps=" + std::string(eps) + in);
    EXPECT_EQ(r.code, 2) << eps << ": " << r.out;
    EXPECT_TRUE(contains(r.out, "params.eps")) << eps << ": " << r.out;
    EXPECT_TRUE(contains(r.out, "expected a finite number")) << eps << ": " << r.out;
  }
  EXPECT_FALSE(fs::exists(path("o.safetensors")));
  // In a case file, JSON itself has no NaN or infinity: 1e999 is refused as JSON.
  std::ofstream(path("inf.json"))
      << R"({"cases": [{"id": "x", "op": "softcap", "seed": 1, "formats": ["f32"],
                        "params": {"n": 4, "cap": 1e999}}]})";
  const CliResult r = run("golden --case-file " + path("inf.json") + " --out " + path("g"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, path("inf.json") + ": expected JSON")) << r.out;
  EXPECT_FALSE(fs::exists(path("g")));
}

// Shapes: a negative one is refused by the parameter's range; one whose product is absurd
// (2^20 × 2^20, each within its own limit) is refused by the cost limit before anything is
// allocated, with the bytes it would need: x, γ and y in f32, (2·2^40 + 2^20)·4 = 8.8e12.
TEST_F(BadInputCli, NegativeAndAbsurdShapesAreRefusedBeforeAllocating) {
  std::ofstream(path("neg.json"))
      << R"({"cases": [{"id": "x", "op": "rmsnorm", "seed": 1, "formats": ["f32"],
                        "params": {"rows": -3, "d": 8, "eps": 0}}]})";
  CliResult r = run("golden --case-file " + path("neg.json") + " --out " + path("g"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, path("neg.json") + ": cases[0].params.rows: expected an integer "
                                                 "in [1, 1048576], got -3"))
      << r.out;
  std::ofstream(path("huge.json"))
      << R"({"cases": [{"id": "huge", "op": "rmsnorm", "seed": 1, "formats": ["f32"],
                        "params": {"rows": 1048576, "d": 1048576, "eps": 0}}]})";
  for (const std::string& cmd : {std::string("verify"), "golden --out " + path("g")}) {
    r = run(cmd + " --case-file " + path("huge.json"));
    EXPECT_EQ(r.code, 2) << cmd << ": " << r.out;
    EXPECT_TRUE(contains(r.out, path("huge.json") + ": cases[0]: case huge: the reference cost "
                                                    "estimate"))
        << cmd << ": " << r.out;
    EXPECT_TRUE(contains(r.out, "would take 8.8e+12 bytes")) << cmd << ": " << r.out;
  }
  EXPECT_FALSE(fs::exists(path("g")));
}

// An output folder or file that cannot be made: a path below a regular file (root ignores
// permission bits, this it cannot).
TEST_F(BadInputCli, UnwritableOutputsAreRefusedWithoutPartialFiles) {
  std::ofstream(path("file")) << "x";
  CliResult r = run("golden --case-file " + path("cases.json") + " --out " + path("file/g"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, path("file/g") + ": --out: expected a folder that can be created"))
      << r.out;
  // `ref --out` into a folder that cannot exist: the message names the file; no temporary is
  // left behind.
  golden();
  r = run("ref --op silu --param n=4 --in " + path("g/t+silu.safetensors") + " --out " +
          path("file/o.safetensors"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, path("file/o.safetensors") + ": write: cannot create")) << r.out;
  int64_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir_)) entries += e.path().filename() != "";
  EXPECT_EQ(entries, 3) << "cases.json, file and g only";
}

// Malformed --shard values, each naming the option and the expected form.
TEST_F(BadInputCli, MalformedShardIsRefused) {
  for (const char* s : {"abc", "1", "1/", "/3", "1/3x", "-1/3", "3/3", "1/0", "0/100001"}) {
    const CliResult r = run("golden --case-file " + path("cases.json") + " --out " + path("g") +
                            " --shard '" + s + "'");
    EXPECT_EQ(r.code, 2) << s << ": " << r.out;
    EXPECT_TRUE(contains(r.out, "command line: --shard: expected I/N")) << s << ": " << r.out;
    EXPECT_TRUE(contains(r.out, std::string("got \"") + s + "\"")) << s << ": " << r.out;
  }
  EXPECT_FALSE(fs::exists(path("g")));
}

// Rounding recipes: an unknown name or modifier, a point the op lacks, a bad value: exit 2 with
// the option or field and the valid names.
TEST_F(BadInputCli, RecipesNameTheValidOnes) {
  const std::string g = golden();
  CliResult r = run(g + path("g/t+silu.safetensors") + " --recipe flash-attn");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "--recipe")) << r.out;
  EXPECT_TRUE(contains(r.out, "hf-llama-rmsnorm")) << r.out;
  r = run(g + path("g/t+silu.safetensors") + " --recipe strict+fast");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "+ftz")) << r.out;
  r = run("verify --no-claims --case-file " + path("cases.json") + " --recipe probs=bf16");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "no rounding point 'probs'")) << r.out;
  r = run("verify --no-claims --case-file " + path("cases.json") + " --recipe form=exact");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "stable, literal")) << r.out;
  std::ofstream(path("recipe.json")) << R"({"cases": [
      {"id": "t/r", "op": "silu", "seed": 1, "recipe": "torch-gelu", "formats": ["f32"], "params": {"n": 4}}]})";
  r = run("verify --no-claims --case-file " + path("recipe.json"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "cases[0].recipe")) << r.out;
  EXPECT_TRUE(contains(r.out, "describes gelu")) << r.out;
}

// An empty recipe, or a point given twice with different values, is bad input: neither may pass
// as strict or as whichever value came last.
TEST_F(BadInputCli, EmptyRecipesAndPointsGivenTwiceAreRefused) {
  const std::string g = golden();
  CliResult r = run(g + path("g/t+silu.safetensors") + " --recipe ''");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "--recipe")) << r.out;
  EXPECT_TRUE(contains(r.out, "empty")) << r.out;
  r = run("verify --no-claims --case-file " + path("cases.json") + " --recipe ''");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "empty")) << r.out;
  r = run(g + path("g/t+silu.safetensors") + " --recipe form=literal,form=stable");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "'form' given twice with different values (literal, stable)"))
      << r.out;
  // The same value twice says one thing: accepted.
  r = run("verify --no-claims --case-file " + path("cases.json") +
          " --backend ref --recipe form=literal,form=literal");
  EXPECT_EQ(r.code, 0) << r.out;
}

}  // namespace
