// The lmoracle program as a user runs it: exit codes, messages, and `list` output.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <map>
#include <string>

#include "tests/support/run_cli.h"

namespace {

using Result = lmo::testdata::CliResult;
Result run(const std::string& args) { return lmo::testdata::run_cli(LMO_BIN, args); }

TEST(Cli, VersionAndHelp) {
  Result v = run("--version");
  EXPECT_EQ(v.code, 0);
  EXPECT_NE(v.out.find("lmoracle 0."), std::string::npos) << v.out;
  Result h = run("--help");
  EXPECT_EQ(h.code, 0);
  EXPECT_NE(h.out.find("list"), std::string::npos) << h.out;
}

TEST(Cli, ListNamesEveryFormatAndTheSimdAndCudaState) {
  Result r = run("list");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* f : {"f64", "f32", "tf32", "bf16", "f16", "e4m3", "e5m2", "SIMD", "CUDA"}) {
    EXPECT_NE(r.out.find(f), std::string::npos) << f;
  }
}

TEST(Cli, ListNamesTheOraclesOpsBackendsAndCases) {
  Result r = run("list --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["cases"].empty());
  ASSERT_FALSE(j["oracle_ops"].empty());
  bool ref = false, ref_f32 = false;
  for (const auto& b : j["backends"]) {
    ref = ref || (b["name"] == "ref" && b["default"] == true);
    ref_f32 = ref_f32 || (b["name"] == "ref-f32" && b["default"] == true);
  }
  EXPECT_TRUE(ref && ref_f32) << j["backends"].dump();
  r = run("list");
  EXPECT_NE(r.out.find("Backends on this machine"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rmsnorm/llama3-8b"), std::string::npos) << r.out;
}

// list --json has the named recipes the text listing has, with their ops and points (as the
// README's table and the implementations they follow give them).
TEST(Cli, ListJsonNamesTheRecipesWithTheirOpsAndPoints) {
  const nlohmann::json j = nlohmann::json::parse(run("list --json").out);
  ASSERT_TRUE(j.contains("recipes")) << j.dump();
  const std::string text = run("list").out;
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& r : j["recipes"]) {
    by_name[r["name"]] = r;
    EXPECT_NE(text.find("  " + r["name"].get<std::string>() + "  "), std::string::npos)
        << r["name"];
  }
  ASSERT_TRUE(by_name.count("flash-attention") && by_name.count("hf-llama-rmsnorm") &&
              by_name.count("strict"))
      << j["recipes"].dump();
  const nlohmann::json& fa = by_name["flash-attention"];
  EXPECT_EQ(fa["points"]["probs"], "storage");
  EXPECT_EQ(fa["points"]["normalize"], "late");
  EXPECT_NE(std::find(fa["ops"].begin(), fa["ops"].end(), "attention"), fa["ops"].end());
  EXPECT_EQ(by_name["hf-llama-rmsnorm"]["ops"], nlohmann::json::array({"rmsnorm"}));
  EXPECT_EQ(by_name["hf-llama-rmsnorm"]["points"]["form"], "rsqrt");
  EXPECT_TRUE(by_name["strict"]["points"].empty());
}

TEST(Cli, ListJsonIsWellFormed) {
  Result r = run("list --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["formats"].size(), 7u);
  EXPECT_EQ(j["formats"][5]["name"], "e4m3");
  EXPECT_EQ(j["formats"][5]["max_finite"], 448.0);
  EXPECT_EQ(j["formats"][5]["has_inf"], false);
  ASSERT_EQ(j["ops"].size(), 23u);  // every F-row of the catalog
  for (size_t i = 0; i < 23; ++i) {
    char id[4];
    std::snprintf(id, sizeof id, "F%02zu", i + 1);
    EXPECT_EQ(j["ops"][i]["id"], id);
  }
  EXPECT_FALSE(j["simd_targets"].empty());
  bool any_supported = false;
  for (const auto& t : j["simd_targets"]) any_supported = any_supported || t["supported"];
  EXPECT_TRUE(any_supported);
  EXPECT_TRUE(j["cuda"].contains("compiled"));
  EXPECT_TRUE(j["cuda"].contains("device"));
}

TEST(Cli, BadUsageExitsTwoWithAMessage) {
  Result a = run("frobnicate");
  EXPECT_EQ(a.code, 2);
  EXPECT_NE(a.out.find("unknown subcommand 'frobnicate'"), std::string::npos) << a.out;
  Result b = run("list --bogus");
  EXPECT_EQ(b.code, 2);
  EXPECT_NE(b.out.find("--bogus"), std::string::npos) << b.out;
  Result c = run("");
  EXPECT_EQ(c.code, 2);
}

}  // namespace
