// Golden files: content and layout, byte-identical across runs and thread counts, re-runs skip
// up-to-date files, sharding (N = 3) and merging give the single run file for file, and `check`
// grades kernels' outputs (correct ones pass, a truncating one fails, bad files are refused), in
// files and in memory (EXPECT_MATCHES_REFERENCE).
#include "oracle/golden/golden.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "oracle/core/sha256.h"
#include "oracle/check/check.h"
#include "oracle/golden/golden_content.h"
#include "oracle/check/gtest_reference.h"
#include "reference/parallel.h"
#include "tests/support/scratch_path.h"

namespace lmo::oracle {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<Case> test_cases() {
  const json file = json::parse(R"({"cases": [
    {"id": "g/rms", "op": "rmsnorm", "seed": 1, "formats": ["bf16", "f32", "f16"],
     "params": {"rows": 3, "d": 64, "eps": 1e-6}},
    {"id": "g/gelu", "op": "gelu", "seed": 2, "formats": ["f32", "bf16"], "params": {"n": 300}},
    {"id": "g/ce", "op": "cross_entropy", "seed": 3, "formats": ["bf16"],
     "params": {"rows": 2, "vocab": 500, "z_loss": 1e-4, "softcap": 30}},
    {"id": "g/softmax", "op": "softmax", "seed": 4, "formats": ["f16"],
     "params": {"rows": 2, "n": 100}},
    {"id": "g/silu", "op": "silu", "seed": 5, "formats": ["bf16"], "params": {"n": 64}}]})");
  std::vector<Case> out;
  for (size_t i = 0; i < file["cases"].size(); ++i) {
    out.push_back(parse_case(file["cases"][i], "<test>", "cases[" + std::to_string(i) + "]"));
  }
  return out;
}

fs::path fresh_dir(const std::string& name) { return testdata::scratch_path("lmo_golden_" + name); }

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Golden, FileHoldsInputsOutputsPerFormatF64AndMetadata) {
  const Case c = test_cases()[0];
  const SafetensorsContent g = golden_content(c);
  for (const char* k : {"in.x", "in.gamma", "out.y.bf16", "out.y.f32", "out.y.f16", "out.y.f64"}) {
    EXPECT_TRUE(g.tensors.count(k)) << k;
  }
  EXPECT_EQ(g.tensors.at("in.x").dtype(), ref::DType::bf16);  // the first format
  EXPECT_EQ(g.tensors.at("out.y.f16").dtype(), ref::DType::f16);
  EXPECT_EQ(g.metadata.at("input_format"), "bf16");
  EXPECT_EQ(json::parse(g.metadata.at("case"))["id"], "g/rms");
  EXPECT_EQ(json::parse(g.metadata.at("policy"))["y"]["kind"], "naive_relative");
  EXPECT_TRUE(g.metadata.count("version") && g.metadata.count("reference"));
  // bf16 inputs are exact in f32, so out.y.f32 is the f64 values rounded to f32 (the exact
  // values are the same); a direct check of correct rounding against the exact mp run.
  const auto op = make_op(c);
  InputSet in;
  in.add("x", g.tensors.at("in.x"));
  in.add("gamma", g.tensors.at("in.gamma"));
  const Outputs<ref::mp> exact = op->exact(in);
  const ref::Tensor& f32 = g.tensors.at("out.y.f32");
  for (int64_t i = 0; i < f32.numel(); ++i) {
    ASSERT_EQ(f32.bits(i), ref::encode(ref::Format::f32, exact[0].values[static_cast<size_t>(i)]))
        << i;
  }
}

TEST(Golden, ByteIdenticalAcrossRunsAndThreadCounts) {
  const std::vector<Case> cases = test_cases();
  const fs::path a = fresh_dir("t1"), b = fresh_dir("t2");
  ref::set_reference_threads(1);
  write_golden(cases, a, {});
  ref::set_reference_threads(2);
  write_golden(cases, b, {});
  ref::set_reference_threads(0);
  for (const Case& c : cases) {
    const std::string f = golden_file_name(c.id);
    EXPECT_EQ(bytes_of(a / f), bytes_of(b / f)) << f;
  }
  EXPECT_EQ(bytes_of(a / "manifest.json"), bytes_of(b / "manifest.json"));
  // The manifest's hashes are the files' hashes.
  const json m = json::parse(bytes_of(a / "manifest.json"));
  ASSERT_EQ(m["files"].size(), cases.size());
  for (const auto& e : m["files"]) {
    const std::string bytes = bytes_of(a / e["file"].get<std::string>());
    EXPECT_EQ(e["sha256"], to_hex(sha256(std::string_view(bytes))));
  }
}

TEST(Golden, ReRunSkipsUpToDateFilesAndRewritesChangedOnes) {
  const std::vector<Case> cases = test_cases();
  const fs::path d = fresh_dir("rerun");
  write_golden(cases, d, {});
  std::vector<GoldenEntry> again = write_golden(cases, d, {});
  for (const GoldenEntry& e : again) EXPECT_TRUE(e.skipped) << e.case_id;
  // A damaged file is rewritten.
  std::ofstream(d / golden_file_name("g/silu"), std::ios::binary | std::ios::trunc) << "junk";
  again = write_golden(cases, d, {});
  for (const GoldenEntry& e : again) EXPECT_EQ(e.skipped, e.case_id != "g/silu") << e.case_id;
  EXPECT_NE(bytes_of(d / golden_file_name("g/silu")), "junk");
  // No temporary files are left behind.
  for (const fs::directory_entry& f : fs::directory_iterator(d)) {
    EXPECT_EQ(f.path().string().find(".tmp"), std::string::npos) << f.path();
  }
}

// A run that stops part way (here: the progress callback throws before the third case) leaves
// a manifest of the files it completed; the next run skips exactly those.
TEST(Golden, AnInterruptedRunResumesWhereItStopped) {
  const std::vector<Case> cases = test_cases();
  const fs::path d = fresh_dir("resume");
  const auto stop_at_third = [](int64_t done, int64_t, const std::string&) {
    if (done == 2) throw std::runtime_error("interrupted");
  };
  EXPECT_THROW(write_golden(cases, d, {}, stop_at_third), std::runtime_error);
  const json m = json::parse(bytes_of(d / "manifest.json"));
  EXPECT_EQ(m["files"].size(), 2u);
  const std::vector<GoldenEntry> again = write_golden(cases, d, {});
  int64_t skipped = 0;
  for (const GoldenEntry& e : again) skipped += e.skipped;
  EXPECT_EQ(skipped, 2);
  const fs::path fresh = fresh_dir("resume_fresh");
  write_golden(cases, fresh, {});
  EXPECT_EQ(bytes_of(d / "manifest.json"), bytes_of(fresh / "manifest.json"));
}

TEST(Golden, ThreeShardsMergedEqualOneRunFileForFile) {
  const std::vector<Case> cases = test_cases();
  const fs::path one = fresh_dir("one");
  write_golden(cases, one, {});
  std::vector<fs::path> dirs;
  size_t total = 0;
  for (int64_t i = 0; i < 3; ++i) {
    dirs.push_back(fresh_dir("shard" + std::to_string(i)));
    total += write_golden(cases, dirs.back(), GoldenShard{i, 3}).size();
    EXPECT_TRUE(fs::exists(dirs.back() / ("manifest-" + std::to_string(i) + "-of-3.json")));
  }
  EXPECT_EQ(total, cases.size());  // a partition
  EXPECT_EQ(merge_golden(dirs), static_cast<int64_t>(cases.size()));
  EXPECT_EQ(bytes_of(dirs[0] / "manifest.json"), bytes_of(one / "manifest.json"));
  for (const Case& c : cases) {
    const std::string f = golden_file_name(c.id);
    EXPECT_EQ(bytes_of(dirs[0] / f), bytes_of(one / f)) << f;
  }
  // A shard file that no longer matches its manifest's hash is refused, naming the file.
  const fs::path victim = dirs[1] / golden_file_name(shard_cases(cases, {1, 3}).front().id);
  std::ofstream(victim, std::ios::binary | std::ios::app) << "x";
  try {
    merge_golden(dirs);
    ADD_FAILURE() << "merged a damaged shard file";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), victim.string());
  }
  // A missing shard is refused.
  const fs::path lone = fresh_dir("lone");
  write_golden(cases, lone, GoldenShard{1, 3});
  EXPECT_THROW(merge_golden({lone}), InputError);
}

TEST(Golden, ShardSyntaxIsChecked) {
  EXPECT_EQ(parse_shard("2/3").index, 2);
  for (const char* bad : {"3/3", "-1/3", "1", "a/b", "1/0", "1/3x"}) {
    EXPECT_THROW(parse_shard(bad), InputError) << bad;
  }
}

// A kernel's outputs: the golden out.<name>.<format> themselves pass; the same values truncated
// to bf16 fail; a missing or misshapen tensor is refused.
TEST(Check, GradesKernelOutputsAgainstAGoldenFile) {
  const fs::path d = fresh_dir("check");
  write_golden({test_cases()[0]}, d, {});
  const fs::path golden = d / golden_file_name("g/rms");
  const SafetensorsContent g = read_safetensors(golden);
  SafetensorsContent actual;
  actual.tensors.emplace("out.y", g.tensors.at("out.y.bf16"));
  write_safetensors(d / "good.safetensors", actual);
  CheckReport r = check_golden(golden, d / "good.safetensors");
  EXPECT_TRUE(r.pass) << to_text(r);
  // Truncation instead of rounding: rebuild bf16 from the f32 golden values by chopping.
  ref::Tensor chopped(ref::DType::bf16, g.tensors.at("out.y.f32").shape());
  const ref::Tensor& f32 = g.tensors.at("out.y.f32");
  for (int64_t i = 0; i < f32.numel(); ++i) chopped.set_bits(i, f32.bits(i) >> 16);
  actual.tensors.clear();
  actual.tensors.emplace("out.y", chopped);
  write_safetensors(d / "bad.safetensors", actual);
  r = check_golden(golden, d / "bad.safetensors");
  EXPECT_FALSE(r.pass) << to_text(r);
  EXPECT_GT(r.outputs[0].verdict.failed, 0);
  // Missing tensor; wrong shape; a format the golden file lacks.
  actual.tensors.clear();
  actual.tensors.emplace("out.z", chopped);
  write_safetensors(d / "missing.safetensors", actual);
  EXPECT_THROW(check_golden(golden, d / "missing.safetensors"), InputError);
  actual.tensors.clear();
  actual.tensors.emplace("out.y", ref::Tensor(ref::DType::bf16, {3, 63}));
  write_safetensors(d / "shape.safetensors", actual);
  EXPECT_THROW(check_golden(golden, d / "shape.safetensors"), InputError);
  actual.tensors.clear();
  actual.tensors.emplace("out.y", ref::Tensor(ref::DType::e4m3, {3, 64}));
  write_safetensors(d / "fmt.safetensors", actual);
  EXPECT_THROW(check_golden(golden, d / "fmt.safetensors"), InputError);
}

TEST(Check, RefusesAnEditedGoldenFile) {
  const fs::path d = fresh_dir("edited");
  write_golden({test_cases()[4]}, d, {});
  const fs::path golden = d / golden_file_name("g/silu");
  SafetensorsContent g = read_safetensors(golden);
  ref::Tensor& y = g.tensors.at("out.y.bf16");
  y.set_bits(5, y.bits(5) ^ 1);
  write_safetensors(golden, g);
  SafetensorsContent actual;
  actual.tensors.emplace("out.y", y);
  write_safetensors(d / "a.safetensors", actual);
  EXPECT_THROW(check_golden(golden, d / "a.safetensors"), InputError);
}

// In memory: the inputs are verify's (generated in the output's format); the correctly rounded
// outputs pass, chopped ones fail with a report naming the elements, and a missing output or
// a wrong format is an error, never a pass.
TEST(MatchesReference, GradesOutputsInMemoryOnVerifysInputs) {
  const Case c = test_cases()[0];  // rmsnorm, bf16 f32 f16
  const auto op = make_op(c);
  for (ref::Format f : {ref::Format::f32, ref::Format::f16}) {
    const InputSet in = reference_inputs(c, f);
    const Outputs<ref::mp> exact = op->exact(in);
    std::map<std::string, ref::Tensor> out;
    out.emplace("y", rounded_output(op->outputs()[0], exact[0], f));
    EXPECT_MATCHES_REFERENCE(c, out);
    // The f32 inputs are generated in f32, not converted from the golden file's bf16 ones.
    if (f == ref::Format::f32) {
      EXPECT_NE(in.at("x"), golden_content(c).tensors.at("in.x"));
    }
    // Every element scaled by 1 + 2^-8: about 4 ulps in f16, 2^15 in f32, beyond the bound.
    ref::Tensor& y = out.at("y");
    for (int64_t i = 0; i < y.numel(); ++i) y.set(i, y.get(i) * (1 + 1.0 / 256));
    const CheckReport r = check_outputs(c, out);
    EXPECT_FALSE(r.pass) << to_text(r);
    EXPECT_NONFATAL_FAILURE(EXPECT_MATCHES_REFERENCE(c, out), "elements fail");
  }
  std::map<std::string, ref::Tensor> none;
  EXPECT_NONFATAL_FAILURE(EXPECT_MATCHES_REFERENCE(c, none), "missing");
  std::map<std::string, ref::Tensor> ints;
  ints.emplace("y", ref::Tensor(ref::DType::i32, {3, 64}));
  EXPECT_THROW(check_outputs(c, ints), InputError);
}

TEST(MatchesReference, FindsBuiltInCasesById) {
  const Case c = find_case("silu/basic");
  EXPECT_EQ(c.op, "silu");
  EXPECT_THROW(find_case("no/such-case"), InputError);
  const InputSet in = reference_inputs("silu/basic", "bf16");
  EXPECT_EQ(in.at("x").dtype(), ref::DType::bf16);
  EXPECT_THROW(reference_inputs("silu/basic", "i32"), InputError);
}

// A router that returns its top-k in another order than the reference's (DeepSeek's and vLLM's
// return score order): the indices are judged as a set and each gate against its own expert's
// exact gate, so the kernel passes; a gate moved to another expert fails, and so does a
// selection that is not the reference's.
TEST(MatchesReference, RouterOutputsInAnyOrderPairIndicesWithGates) {
  const Case c = find_case("moe-router/deepseek-v3");
  const auto op = make_op(c);
  const InputSet in = reference_inputs(c, ref::Format::f32);
  const Outputs<ref::mp> exact = op->exact(in);
  const std::vector<OutputDecl> decls = op->outputs();
  ASSERT_EQ(decls[0].name, "gates");
  ASSERT_EQ(decls[1].name, "experts");
  const ref::Tensor gates = rounded_output(decls[0], exact[0], ref::Format::f32);
  const ref::Tensor experts = rounded_output(decls[1], exact[1], ref::Format::f32);
  const int64_t tokens = decls[0].shape[0], k = decls[0].shape[1];
  ASSERT_EQ(k, 8);
  // Each row by descending gate, indices moved with their gates: the routers' score order.
  ref::Tensor g_score = gates, e_score = experts;
  for (int64_t t = 0; t < tokens; ++t) {
    std::vector<int64_t> order(static_cast<size_t>(k));
    for (int64_t j = 0; j < k; ++j) order[static_cast<size_t>(j)] = j;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return gates.get(t * k + a) > gates.get(t * k + b);
    });
    for (int64_t j = 0; j < k; ++j) {
      g_score.set_bits(t * k + j, gates.bits(t * k + order[static_cast<size_t>(j)]));
      e_score.set_bits(t * k + j, experts.bits(t * k + order[static_cast<size_t>(j)]));
    }
  }
  ASSERT_NE(g_score, gates);  // the score order differs from the reference's somewhere
  std::map<std::string, ref::Tensor> score_order = {{"gates", g_score}, {"experts", e_score}};
  EXPECT_MATCHES_REFERENCE(c, score_order);
  // The gates in score order but the indices in the reference's: each gate now sits beside
  // another expert.
  std::map<std::string, ref::Tensor> mispaired = {{"gates", g_score}, {"experts", experts}};
  const CheckReport r = check_outputs(c, mispaired);
  EXPECT_FALSE(r.pass) << to_text(r);
  EXPECT_TRUE(r.outputs[1].verdict.pass);   // the selection is still the same set
  EXPECT_FALSE(r.outputs[0].verdict.pass);  // the gates are not
  // Token 0 routed to an expert outside the reference's selection: the selection fails.
  ref::Tensor e_wrong = e_score;
  for (int64_t e = 0; e < 256; ++e) {
    bool chosen = false;
    for (int64_t j = 0; j < k; ++j) chosen |= experts.get(j) == static_cast<double>(e);
    if (!chosen) {
      e_wrong.set(0, static_cast<double>(e));
      break;
    }
  }
  std::map<std::string, ref::Tensor> wrong = {{"gates", g_score}, {"experts", e_wrong}};
  EXPECT_FALSE(check_outputs(c, wrong).outputs[1].verdict.pass);
}

}  // namespace
}  // namespace lmo::oracle
