// `lmoracle golden`, `check` and `ref` as a user runs them: files and manifest, exit codes 0 (all
// pass), 1 (a kernel output fails), 2 (bad input: a missing tensor, a wrong shape, an unknown
// dtype, a malformed file, a bad --shard), the --json report, and `ref` on one's own tensors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "oracle/golden/safetensors.h"
#include "tests/support/run_cli.h"

namespace lmo::oracle {
namespace {

namespace fs = std::filesystem;
using testdata::CliResult;

CliResult run(const std::string& args, bool merge_stderr = true) {
  return testdata::run_cli(LMO_BIN, args, merge_stderr);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

class GoldenCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lmo_golden_cli_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "cases.json") << R"({"cases": [
      {"id": "t/silu", "op": "silu", "seed": 3, "formats": ["bf16", "f32"], "params": {"n": 40}},
      {"id": "t/rms", "op": "rmsnorm", "seed": 4, "formats": ["f16"],
       "params": {"rows": 2, "d": 32, "eps": 1e-6}}]})";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // The golden files of cases.json in folder "g".
  SafetensorsContent make_golden() {
    const CliResult r = run("golden --case-file " + path("cases.json") + " --out " + path("g"));
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_TRUE(contains(r.out, "golden: 2 files")) << r.out;
    return read_safetensors(path("g/t+silu.safetensors"));
  }
  void write_actual(const std::string& name, const std::string& tensor, const ref::Tensor& t) {
    SafetensorsContent a;
    a.tensors.emplace(tensor, t);
    write_safetensors(path(name), a);
  }
  fs::path dir_;
};

TEST_F(GoldenCli, WritesFilesAndManifestThenSkipsThemOnAReRun) {
  make_golden();
  EXPECT_TRUE(fs::exists(path("g/t+rms.safetensors")));
  const auto manifest = nlohmann::json::parse(std::ifstream(path("g/manifest.json")));
  ASSERT_EQ(manifest["files"].size(), 2u);
  EXPECT_EQ(manifest["files"][0]["case"], "t/rms");  // sorted by case ID
  const CliResult again = run("golden --case-file " + path("cases.json") + " --out " + path("g"));
  EXPECT_EQ(again.code, 0) << again.out;
  EXPECT_TRUE(contains(again.out, "0 written, 2 already up to date")) << again.out;
}

TEST_F(GoldenCli, CheckPassesTheGoldenValuesAndFailsATruncatingKernel) {
  const SafetensorsContent g = make_golden();
  write_actual("good.safetensors", "out.y", g.tensors.at("out.y.bf16"));
  CliResult r = run("check --golden " + path("g/t+silu.safetensors") + " --actual " +
                    path("good.safetensors"));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "out.y (bf16): pass, 0 of 40 elements fail")) << r.out;

  // bf16 by chopping the correctly rounded f32 values: some elements round the wrong way.
  const ref::Tensor& f32 = g.tensors.at("out.y.f32");
  ref::Tensor chopped(ref::DType::bf16, f32.shape());
  for (int64_t i = 0; i < f32.numel(); ++i) chopped.set_bits(i, f32.bits(i) >> 16);
  write_actual("bad.safetensors", "out.y", chopped);
  r = run("check --json --golden " + path("g/t+silu.safetensors") + " --actual " +
              path("bad.safetensors"),
          false);
  EXPECT_EQ(r.code, 1) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["pass"], false);
  const auto& y = j["outputs"][0];
  EXPECT_EQ(y["name"], "y");
  EXPECT_GT(y["failed"].get<int>(), 0);
  EXPECT_GE(y["worst_index"].get<int>(), 0);
  EXPECT_EQ(y["worst_ulps"].get<int>(), 1);  // chopping is at most one bf16 ulp off
  EXPECT_TRUE(contains(y["bound"].get<std::string>(), "ulp")) << y;
}

// `golden --inputs-only`: a challenge file holds the inputs and no answer; check computes the
// expected values from them and judges as against the full file; an edited input is refused.
TEST_F(GoldenCli, InputsOnlyFilesHoldNoAnswerAndCheckJudgesAgainstThem) {
  const SafetensorsContent full = make_golden();
  CliResult r = run("golden --inputs-only --case-file " + path("cases.json") + " --out " + path("i"));
  ASSERT_EQ(r.code, 0) << r.out;
  SafetensorsContent challenge = read_safetensors(path("i/t+silu.safetensors"));
  ASSERT_FALSE(challenge.tensors.empty());
  for (const auto& [key, t] : challenge.tensors) EXPECT_TRUE(key.starts_with("in.")) << key;
  EXPECT_EQ(challenge.tensors.at("in.x"), full.tensors.at("in.x"));  // the case's own seed
  EXPECT_EQ(challenge.metadata.at("inputs_only"), "true");
  EXPECT_EQ(challenge.metadata.at("case"), full.metadata.at("case"));
  // The full file's correctly rounded values pass; the same with one element 1.5 times too large
  // fails (exit 1), in each storage format of the case.
  for (const char* f : {"bf16", "f32"}) {
    const ref::Tensor& good = full.tensors.at(std::string("out.y.") + f);
    write_actual("good.safetensors", "out.y", good);
    r = run("check --golden " + path("i/t+silu.safetensors") + " --actual " +
            path("good.safetensors"));
    EXPECT_EQ(r.code, 0) << f << ": " << r.out;
    EXPECT_TRUE(contains(r.out, "check: pass")) << r.out;
    ref::Tensor bad = good;
    bad.set(5, good.get(5) * 1.5);
    write_actual("bad.safetensors", "out.y", bad);
    r = run("check --golden " + path("i/t+silu.safetensors") + " --actual " +
            path("bad.safetensors"));
    EXPECT_EQ(r.code, 1) << f << ": " << r.out;
    EXPECT_TRUE(contains(r.out, "out.y (" + std::string(f) + "): FAIL")) << r.out;
  }
  // An input edited after the file was written: bad input, naming the hash.
  challenge.tensors.at("in.x").set(0, 0.25);
  write_safetensors(path("edited.safetensors"), challenge);
  r = run("check --golden " + path("edited.safetensors") + " --actual " + path("good.safetensors"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "edited.safetensors: __metadata__.inputs_sha256")) << r.out;
}

// `golden --seed`: inputs the kernel cannot have seen, the seed recorded in the file's case, and
// answers judged on those inputs (the case's own seed's answers fail).
TEST_F(GoldenCli, SeedDrawsOtherInputsThatCheckJudgesOn) {
  const SafetensorsContent own = make_golden();
  CliResult r = run("golden --inputs-only --seed 99 --case-file " + path("cases.json") +
                    " --out " + path("s"));
  ASSERT_EQ(r.code, 0) << r.out;
  const SafetensorsContent challenge = read_safetensors(path("s/t+silu.safetensors"));
  EXPECT_NE(challenge.tensors.at("in.x"), own.tensors.at("in.x"));
  EXPECT_EQ(nlohmann::json::parse(challenge.metadata.at("case")).at("seed"), 99);
  r = run("golden --seed 99 --case-file " + path("cases.json") + " --out " + path("f"));
  ASSERT_EQ(r.code, 0) << r.out;
  const SafetensorsContent answers = read_safetensors(path("f/t+silu.safetensors"));
  EXPECT_EQ(answers.tensors.at("in.x"), challenge.tensors.at("in.x"));
  write_actual("new.safetensors", "out.y", answers.tensors.at("out.y.bf16"));
  r = run("check --golden " + path("s/t+silu.safetensors") + " --actual " + path("new.safetensors"));
  EXPECT_EQ(r.code, 0) << r.out;
  write_actual("old.safetensors", "out.y", own.tensors.at("out.y.bf16"));
  r = run("check --golden " + path("s/t+silu.safetensors") + " --actual " + path("old.safetensors"));
  EXPECT_EQ(r.code, 1) << r.out;
}

// A folder holding full files is not taken as up to date by an inputs-only run, nor the reverse.
TEST_F(GoldenCli, InputsOnlyAndFullFilesAreNotTakenForEachOther) {
  make_golden();
  const std::string args = "golden --case-file " + path("cases.json") + " --out " + path("g");
  CliResult r = run(args + " --inputs-only");
  EXPECT_TRUE(contains(r.out, "(2 written, 0 already up to date)")) << r.out;
  EXPECT_FALSE(read_safetensors(path("g/t+silu.safetensors")).tensors.contains("out.y.bf16"));
  r = run(args + " --inputs-only");
  EXPECT_TRUE(contains(r.out, "(0 written, 2 already up to date)")) << r.out;
  r = run(args);
  EXPECT_TRUE(contains(r.out, "(2 written, 0 already up to date)")) << r.out;
  EXPECT_TRUE(read_safetensors(path("g/t+silu.safetensors")).tensors.contains("out.y.bf16"));
}

// `golden --blocks I/N`: each case's rows in N parts (a case with fewer rows than parts, or no
// independent rows, written whole by part 0), joined by --merge into the files and manifest of a
// single run, byte for byte; a missing, tampered or mixed part is bad input.
TEST_F(GoldenCli, RowPartsMergeIntoTheFilesOfOneRun) {
  std::ofstream(dir_ / "rows.json") << R"({"cases": [
    {"id": "r/rms7", "op": "rmsnorm", "seed": 5, "formats": ["bf16", "f32"],
     "params": {"rows": 7, "d": 48, "eps": 1e-5}},
    {"id": "r/rms2", "op": "rmsnorm", "seed": 6, "formats": ["f16"],
     "params": {"rows": 2, "d": 32, "eps": 1e-6}},
    {"id": "r/silu", "op": "silu", "seed": 3, "formats": ["bf16"], "params": {"n": 40}}]})";
  const std::string cases = " --case-file " + path("rows.json");
  CliResult r = run("golden" + cases + " --out " + path("one"));
  ASSERT_EQ(r.code, 0) << r.out;
  for (int i = 0; i < 3; ++i) {
    const std::string part = std::to_string(i) + "/3";
    r = run("golden" + cases + " --blocks " + part + " --out " + path("p" + std::to_string(i)));
    ASSERT_EQ(r.code, 0) << r.out;
  }
  // Part 1 holds rows [2, 4) of r/rms7's outputs and its x, the whole γ, and no whole file.
  const SafetensorsContent p1 = read_safetensors(path("p1/r+rms7.rows-1-of-3.safetensors"));
  EXPECT_EQ(p1.tensors.at("out.y.bf16").shape(), (std::vector<int64_t>{2, 48}));
  EXPECT_EQ(p1.tensors.at("in.x").shape(), (std::vector<int64_t>{2, 48}));
  EXPECT_EQ(p1.tensors.at("in.gamma").shape(), (std::vector<int64_t>{48}));
  EXPECT_FALSE(fs::exists(path("p1/r+rms2.safetensors")));
  // A part missing: refused.
  r = run("golden --merge " + path("p0") + " " + path("p2"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "expected all 3 row-part manifests")) << r.out;
  r = run("golden --merge " + path("p0") + " " + path("p2") + " " + path("p1"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "merged 3 files")) << r.out;
  for (const char* f : {"r+rms7.safetensors", "r+rms2.safetensors", "r+silu.safetensors",
                        "manifest.json"}) {
    std::ifstream a(path(std::string("one/") + f), std::ios::binary);
    std::ifstream b(path(std::string("p0/") + f), std::ios::binary);
    const std::string x((std::istreambuf_iterator<char>(a)), std::istreambuf_iterator<char>());
    const std::string y((std::istreambuf_iterator<char>(b)), std::istreambuf_iterator<char>());
    EXPECT_FALSE(x.empty()) << f;
    EXPECT_EQ(x, y) << f << " differs from a single run's";
  }
  // A part edited after its manifest was written.
  {
    std::fstream f(path("p1/r+rms7.rows-1-of-3.safetensors"),
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-1, std::ios::end);
    f.put('\x7f');
  }
  r = run("golden --merge " + path("p0") + " " + path("p1") + " " + path("p2"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "r+rms7.rows-1-of-3.safetensors: sha256")) << r.out;
  // --blocks with --shard, or more parts than I/N allows.
  r = run("golden" + cases + " --blocks 0/2 --shard 0/2 --out " + path("x"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "--blocks")) << r.out;
  r = run("golden" + cases + " --blocks 3/3 --out " + path("x"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "command line: --blocks")) << r.out;
}

// `--max-memory` sets the block of rows (here 1M / 128 bytes = 8192 elements, 128 rows of 64):
// the files are the same bytes, and a size that is not one is bad input.
TEST_F(GoldenCli, MaxMemorySetsTheBlocksNotTheBytes) {
  std::ofstream(dir_ / "big.json") << R"({"cases": [
    {"id": "b/rms", "op": "rmsnorm", "seed": 9, "formats": ["bf16"],
     "params": {"rows": 4096, "d": 64, "eps": 1e-5}}]})";
  const std::string cases = " --case-file " + path("big.json");
  CliResult r = run("golden" + cases + " --out " + path("a"));
  ASSERT_EQ(r.code, 0) << r.out;
  r = run("golden" + cases + " --max-memory 1M --out " + path("b"));
  ASSERT_EQ(r.code, 0) << r.out;
  const SafetensorsContent a = read_safetensors(path("a/b+rms.safetensors"));
  EXPECT_EQ(a.tensors, read_safetensors(path("b/b+rms.safetensors")).tensors);
  write_actual("y.safetensors", "out.y", a.tensors.at("out.y.bf16"));
  r = run("check --golden " + path("a/b+rms.safetensors") + " --actual " + path("y.safetensors") +
          " --max-memory 1M");
  EXPECT_EQ(r.code, 0) << r.out;
  for (const char* bad : {"12Q", "1K", "G", "99999999999999999T"}) {
    r = run("golden" + cases + " --max-memory " + bad + " --out " + path("c"));
    EXPECT_EQ(r.code, 2) << bad << ": " << r.out;
    EXPECT_TRUE(contains(r.out, "command line: --max-memory")) << r.out;
  }
}

TEST_F(GoldenCli, BadInputExitsWithCodeTwoNamingTheFile) {
  const SafetensorsContent g = make_golden();
  const std::string golden = " --golden " + path("g/t+silu.safetensors") + " --actual ";
  write_actual("missing.safetensors", "out.z", g.tensors.at("out.y.bf16"));
  CliResult r = run("check" + golden + path("missing.safetensors"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "missing.safetensors: out.y")) << r.out;
  write_actual("shape.safetensors", "out.y", ref::Tensor(ref::DType::bf16, {41}));
  r = run("check" + golden + path("shape.safetensors"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "expected the shape [40]")) << r.out;
  // An unknown dtype in the header.
  const std::string header = R"({"out.y":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}})";
  std::string bytes(8, '\0');
  bytes[0] = static_cast<char>(header.size());
  std::ofstream(path("dtype.safetensors"), std::ios::binary) << bytes << header << "abcd";
  r = run("check" + golden + path("dtype.safetensors"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "dtype.safetensors: tensor \"out.y\" dtype")) << r.out;
  // Not a safetensors file at all.
  std::ofstream(path("junk.safetensors")) << "junk";
  r = run("check" + golden + path("junk.safetensors"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "junk.safetensors: header")) << r.out;
  r = run("golden --case-file " + path("cases.json") + " --out " + path("s") + " --shard 3/3");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "--shard")) << r.out;
}

// --max-cost refuses before anything is written: the message names the case file, the case,
// the estimate and the limit, and the memory the case would need.
TEST_F(GoldenCli, CostLimitRefusesBeforeWritingAnything) {
  const CliResult r =
      run("golden --case-file " + path("cases.json") + " --out " + path("g") + " --max-cost 10");
  EXPECT_EQ(r.code, 2) << r.out;
  // Cases are taken in ID order, so t/rms (cases[1]) comes first.
  EXPECT_TRUE(contains(r.out, path("cases.json") + ": cases[1]: case t/rms: the reference cost "
                                                   "estimate"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "exceeds the limit 10 (raise it with --max-cost")) << r.out;
  // rmsnorm 2 × 32 in f16: x and y 64 elements each, γ 32, 2 bytes each.
  EXPECT_TRUE(contains(r.out, "would take 320 bytes")) << r.out;
  EXPECT_FALSE(fs::exists(path("g"))) << "nothing may be written";
}

TEST_F(GoldenCli, ShardsMergeIntoTheManifestOfOneRun) {
  make_golden();
  std::string dirs;
  for (int i = 0; i < 3; ++i) {
    const std::string d = path("s" + std::to_string(i));
    const CliResult r = run("golden --case-file " + path("cases.json") + " --out " + d +
                            " --shard " + std::to_string(i) + "/3");
    ASSERT_EQ(r.code, 0) << r.out;
    dirs += " " + d;
  }
  const CliResult r = run("golden --merge" + dirs);
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream a(path("s0/manifest.json")), b(path("g/manifest.json"));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(a), {}),
            std::string(std::istreambuf_iterator<char>(b), {}));
}

// `ref` on one's own tensors writes a golden file that `check` accepts: its outputs pass.
TEST_F(GoldenCli, RefOnUserTensorsWritesAGoldenFileCheckAccepts) {
  ref::Tensor x(ref::DType::f32, {5});
  const double xs[] = {-3.5, -0.25, 0, 1e-3, 7};
  for (int i = 0; i < 5; ++i) x.set(i, xs[i]);
  write_actual("mine.safetensors", "x", x);
  CliResult r = run("ref --op silu --param n=5 --in " + path("mine.safetensors") + " --out " +
                    path("ref.safetensors") + " --format bf16");
  ASSERT_EQ(r.code, 0) << r.out;
  const SafetensorsContent g = read_safetensors(path("ref.safetensors"));
  ASSERT_TRUE(g.tensors.count("out.y.bf16") && g.tensors.count("out.y.f64")) << r.out;
  // silu(0) = 0 and silu(7) = 7/(1 + e^-7) = 6.99362...: bf16 7.0 (spacing 2^-5 = 0.03125).
  EXPECT_EQ(g.tensors.at("out.y.bf16").get(2), 0.0);
  EXPECT_EQ(g.tensors.at("out.y.bf16").get(4), 7.0);
  EXPECT_EQ(g.tensors.at("out.y.f64").get(4), 6.993622641639195);
  write_actual("mine_out.safetensors", "out.y", g.tensors.at("out.y.bf16"));
  r = run("check --golden " + path("ref.safetensors") + " --actual " +
          path("mine_out.safetensors"));
  EXPECT_EQ(r.code, 0) << r.out;
  // A missing input names the tensor the op needs.
  r = run("ref --op rmsnorm --param rows=1 --param d=5 --param eps=1e-6 --in " +
          path("mine.safetensors") + " --out " + path("r2.safetensors"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "mine.safetensors")) << r.out;
}

// Found by fuzz_ref_params (corpus crash-5ddc9a9b…): a parameter value that is not UTF-8 made
// the case's JSON unprintable and the program abort; it must be refused as bad input.
TEST_F(GoldenCli, RefRefusesParametersThatAreNotUtf8) {
  CliResult r = run("ref --op attention --param h=4 --param \"$(printf 'mask=caus\\362l')\" --in " +
                    path("none.safetensors") + " --out " + path("o.safetensors"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "--param")) << r.out;
  EXPECT_TRUE(contains(r.out, "expected UTF-8 text, but byte 9 of")) << r.out;
  r = run("ref --op \"$(printf 'sil\\377u')\" --in " + path("none.safetensors") + " --out " +
          path("o.safetensors"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "--op: expected UTF-8 text, but byte 3 of")) << r.out;
  EXPECT_FALSE(fs::exists(path("o.safetensors")));
}

}  // namespace
// RoPE on a user's positions (`ref`): no max_position needed, and the exact rotation at those
// positions, 10^6 included; a given max_position bounds them (exit 2 naming the tensor, the
// element and the range) instead of being silently exceeded.
TEST_F(GoldenCli, RefRopeTakesTheGivenPositionsAndRefusesOnesBeyondMaxPosition) {
  SafetensorsContent in;
  ref::Tensor x(ref::DType::f32, {2, 2});  // 2 tokens, 1 head of 2 dimensions: x = (1, 0)
  for (int64_t t = 0; t < 2; ++t) x.set(2 * t, 1.0);
  ref::Tensor pos(ref::DType::i64, {2});
  pos.set(0, 3);
  pos.set(1, 1000000);
  in.tensors.emplace("x", x);
  in.tensors.emplace("positions", pos);
  write_safetensors(path("rope_in.safetensors"), in);
  const std::string op =
      "ref --op rope --param tokens=2 --param heads=1 --param head_dim=2 --param "
      "layout=half_split --in " +
      path("rope_in.safetensors") + " --out " + path("rope.safetensors");
  CliResult r = run(op);
  ASSERT_EQ(r.code, 0) << r.out;
  // One pair rotated by p·θ_0, θ_0 = 1: (1, 0) becomes (cos p, sin p). mpmath, 200 bits:
  // cos 3, sin 3, cos 10^6, sin 10^6 rounded to double.
  const SafetensorsContent g = read_safetensors(path("rope.safetensors"));
  const ref::Tensor& y = g.tensors.at("out.y.f64");
  EXPECT_EQ(y.get(0), -0.9899924966004454);
  EXPECT_EQ(y.get(1), 0.1411200080598672);
  EXPECT_EQ(y.get(2), 0.9367521275331447);
  EXPECT_EQ(y.get(3), -0.34999350217129294);
  r = run(op + " --param max_position=10");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out,
                       "rope_in.safetensors: positions: element 1 is 1000000, expected "
                       "integers in [0, 10)"))
      << r.out;
  EXPECT_FALSE(fs::exists(path("rope.safetensors.tmp")));
}

// Attention with an explicit softmax scale (Gemma 2's query_pre_attn_scalar) and g left out
// (plain multi-head: g = h), on a user's tensors; the exact values from mpmath (200 bits):
// o_0 = (e^{1/2}·v_0 + v_1)/(e^{1/2} + 1), o_1 = (v_0 + e^{1/2}·v_1)/(1 + e^{1/2}).
TEST_F(GoldenCli, RefAttentionTakesAScaleAndDefaultsGToH) {
  SafetensorsContent in;
  ref::Tensor q(ref::DType::f32, {2, 2}), k(ref::DType::f32, {2, 2}), v(ref::DType::f32, {2, 2});
  const double vs[] = {1, 2, 3, 4};
  for (int64_t i = 0; i < 4; ++i) v.set(i, vs[i]);
  for (int64_t t = 0; t < 2; ++t) {
    q.set(3 * t, 1.0);  // q = k = the identity: q_i·k_j = [i = j]
    k.set(3 * t, 1.0);
  }
  in.tensors.emplace("q", q);
  in.tensors.emplace("k", k);
  in.tensors.emplace("v", v);
  write_safetensors(path("attn_in.safetensors"), in);
  const CliResult r =
      run("ref --op attention --param h=1 --param d=2 --param tokens=2 --param mask=none --param "
          "scale=0.5 --in " +
          path("attn_in.safetensors") + " --out " + path("attn.safetensors"));
  ASSERT_EQ(r.code, 0) << r.out;
  const SafetensorsContent g = read_safetensors(path("attn.safetensors"));
  const ref::Tensor& o = g.tensors.at("out.o.f64");
  EXPECT_EQ(o.get(0), 1.7550813375962908);
  EXPECT_EQ(o.get(1), 2.755081337596291);
  EXPECT_EQ(o.get(2), 2.244918662403709);
  EXPECT_EQ(o.get(3), 3.244918662403709);
}

}  // namespace lmo::oracle
